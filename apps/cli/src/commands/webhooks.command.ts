import { Command } from 'commander';
import { subjects, WebhooksReply, type WebhookDeliveryView, type WebhooksRequest } from '@ratchet/contracts';
import { assertToken, CliError, plural, table, UsageError, withNats } from '@ratchet/operator';
import { commandContext } from '../cli.context';

const STATUSES = ['pending', 'delivered', 'dead'] as const;

/** A tenant's webhook deliveries, asked of the orchestrators (`<prefix>.webhooks.<tenant>.deliveries`). */
export function webhooksCommand(): Command {
  return new Command('webhooks')
    .description("a tenant's completion-webhook deliveries (dead ones: attempts spent)")
    .requiredOption('--tenant <tenant>', 'the tenant')
    .option('--status <status>', `only ${STATUSES.join(', ')}`)
    .option('--limit <n>', 'at most this many, newest first', '100')
    .addHelpText('after', '\nExamples:\n  $ ratchet webhooks --tenant acme --status dead')
    .action(async (opts: { tenant: string; status?: string; limit: string }, cmd: Command) => {
      const { config, out } = commandContext(cmd);
      assertToken('tenant', opts.tenant);
      if (opts.status !== undefined && !(STATUSES as readonly string[]).includes(opts.status))
        throw new UsageError(`--status must be one of ${STATUSES.join(', ')}, not ${opts.status}`);
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new UsageError('--limit must be 1 to 500');
      const request: WebhooksRequest = {
        op: 'deliveries',
        principal: { id: 'ratchet-cli', roles: [] },
        limit,
        ...(opts.status ? { status: opts.status as (typeof STATUSES)[number] } : {}),
      };
      const subject = subjects(config.RATCHET_SUBJECT_PREFIX).webhooks(opts.tenant, 'deliveries');
      const deliveries = await withNats(config, async (nc): Promise<WebhookDeliveryView[]> => {
        let data: Uint8Array;
        try {
          data = (await nc.request(subject, JSON.stringify(request), { timeout: 10_000 })).data;
        } catch (error) {
          throw new CliError(
            `no orchestrator answered on ${subject}: is one running?`,
            undefined,
            'webhooks.unavailable',
            {
              cause: error,
            },
          );
        }
        const reply = WebhooksReply.parse(JSON.parse(new TextDecoder().decode(data)));
        if (!reply.ok) throw new CliError(reply.error.message, undefined, `webhooks.${reply.error.code}`);
        return 'deliveries' in reply ? reply.deliveries : [];
      });
      if (out.json) {
        for (const d of deliveries) out.jsonLine(d);
        return;
      }
      const lines = table([
        ['DELIVERY', 'STATUS', 'ATTEMPTS', 'RUN', 'URL', 'LAST ERROR'],
        ...deliveries.map((d) => [
          d.deliveryId,
          d.status,
          String(d.attempts),
          d.runId ?? '-',
          d.url,
          d.lastError ?? '',
        ]),
      ]);
      out.line(out.style('bold', lines[0]!));
      for (const l of lines.slice(1)) out.line(l);
      out.note(`${plural(deliveries.length, 'delivery')} for tenant ${opts.tenant}`.replace('deliverys', 'deliveries'));
    });
}
