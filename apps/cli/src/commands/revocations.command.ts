import { Command } from 'commander';
import type { GatewaySchemas } from '@ratchet/http-client';
import { call, gateway, plural, table, type CommandContext, type GatewayOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { withGatewayOptions } from '../gateway-options';

type RevocationView = GatewaySchemas['RevocationView'];

export interface RevokeOptions extends GatewayOptions {
  jti?: string;
  issuedBefore?: string;
  reason?: string;
}

function print({ out }: CommandContext, entries: RevocationView[], note: string): void {
  if (out.json) {
    for (const r of entries) out.jsonLine(r);
    return;
  }
  const lines = table([
    ['ID', 'SUBJECT', 'JTI', 'ISSUED BEFORE', 'BY', 'ADDED', 'REASON'],
    ...entries.map((r) => [r.id, r.subject, r.jti ?? '-', r.issuedBefore ?? '-', r.createdBy, r.createdAt, r.reason]),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  out.note(note);
}

/** Adds a deny-list entry (POST /v1/revocations): the gateway checks the admin role and binds the tenant. */
export async function addRevocation(ctx: CommandContext, subject: string, opts: RevokeOptions) {
  const target = gateway(ctx.config, opts);
  const entry = await call(
    target,
    target.client.POST('/v1/revocations', {
      body: {
        subject,
        ...(opts.jti !== undefined ? { jti: opts.jti } : {}),
        ...(opts.issuedBefore !== undefined ? { issuedBefore: opts.issuedBefore } : {}),
        ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
      },
    }),
  );
  print(ctx, [entry], `revoked: JWTs of ${subject} are refused from now on (entry ${entry.id})`);
  return entry;
}

export async function listRevocations(ctx: CommandContext, opts: GatewayOptions) {
  const target = gateway(ctx.config, opts);
  const { revocations } = await call(target, target.client.GET('/v1/revocations'));
  print(ctx, revocations, plural(revocations.length, 'revocation'));
  return revocations;
}

export async function removeRevocation(ctx: CommandContext, id: string, opts: GatewayOptions) {
  const target = gateway(ctx.config, opts);
  const { deleted } = await call(target, target.client.DELETE('/v1/revocations/{id}', { params: { path: { id } } }));
  if (ctx.out.json) ctx.out.jsonLine({ deleted });
  else ctx.out.line(`${ctx.out.style('green', '✔')} revocation ${deleted} removed`);
  return deleted;
}

export function revocationsCommand(): Command {
  const cmd = new Command('revocations').description(
    "the tenant's JWT deny list, through the gateway (needs an admin credential of the tenant)",
  );
  cmd.addCommand(
    withGatewayOptions(
      new Command('add')
        .description('refuse JWTs of a subject (all, one jti, or those issued before a time)')
        .argument('<subject>', "the token's sub claim (the principal is jwt:<sub>)")
        .option('--jti <jti>', 'only the token with this jti')
        .option('--issued-before <time>', 'only tokens issued before this RFC 3339 time')
        .option('--reason <text>', 'why (kept with the entry)'),
    )
      .addHelpText(
        'after',
        '\nExamples:\n  $ ratchet revocations add alice --reason "left the company"\n  $ ratchet revocations add alice --issued-before 2026-12-02T14:00:00Z',
      )
      .action(async (subject: string, opts: RevokeOptions, c: Command) => {
        await addRevocation(commandContext(c), subject, opts);
      }),
  );
  cmd.addCommand(
    withGatewayOptions(new Command('list').description("the tenant's entries, newest first"))
      .addHelpText('after', '\nExamples:\n  $ ratchet revocations list --json')
      .action(async (opts: GatewayOptions, c: Command) => {
        await listRevocations(commandContext(c), opts);
      }),
  );
  cmd.addCommand(
    withGatewayOptions(
      new Command('remove')
        .description('remove an entry: the tokens it covered are accepted again')
        .argument('<id>', 'the entry id (from revocations list)'),
    )
      .addHelpText('after', '\nExamples:\n  $ ratchet revocations remove 0b6d…')
      .action(async (id: string, opts: GatewayOptions, c: Command) => {
        await removeRevocation(commandContext(c), id, opts);
      }),
  );
  return cmd;
}
