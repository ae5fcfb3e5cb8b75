import { Command } from 'commander';
import { EffectLedgerRepository, type EffectRecord } from '@ratchet/adapters';
import type { ThreadEvent } from '@ratchet/contracts';
import { commandContext, plural, resolveTenant, withSchema, type CommandContext } from '../cli.context';
import { table } from '../cli.parse';
import { threadStore } from '../ops/thread-projection';

export interface EffectsOptions {
  tenant?: string;
}

/** A ledger row next to what the thread's log says about the same call. */
export interface EffectView extends EffectRecord {
  /** Deliveries beyond the first that found the row already there (re-sent result or re-executed). */
  retried: boolean;
  /** The call's outcome in the log: completed, failed, uncertain, or still open. */
  logOutcome: 'completed' | 'failed' | 'uncertain' | 'open' | 'not in log';
  /** Needs a human: the ledger or the log says the effect is uncertain. */
  escalated: boolean;
}

export function joinEffects(effects: readonly EffectRecord[], events: readonly ThreadEvent[]): EffectView[] {
  const outcome = new Map<string, EffectView['logOutcome']>();
  for (const e of events) {
    if (e.type === 'tool.requested') outcome.set(e.data.idempotencyKey, 'open');
    if (e.type === 'effect.uncertain') outcome.set(e.data.idempotencyKey, 'uncertain');
  }
  const keyOfCall = new Map<string, string>();
  for (const e of events)
    if (e.type === 'tool.requested') keyOfCall.set(`${e.runId}:${e.data.callId}`, e.data.idempotencyKey);
  for (const e of events) {
    if (e.type !== 'tool.completed' && e.type !== 'tool.failed') continue;
    const key = keyOfCall.get(`${e.runId}:${e.data.callId}`);
    if (key) outcome.set(key, e.type === 'tool.completed' ? 'completed' : 'failed');
  }
  return effects.map((r) => {
    const logOutcome = outcome.get(r.key) ?? 'not in log';
    return {
      ...r,
      retried: r.attempts > 1,
      logOutcome,
      escalated: r.state === 'uncertain' || logOutcome === 'uncertain',
    };
  });
}

/** The effect ledger rows of a thread (schema `tools`), joined with the thread's log by idempotency key. */
export async function showEffects({ config, out }: CommandContext, threadId: string, opts: EffectsOptions) {
  const { tenantId, events } = await withSchema(config, 'orchestrator', async (db) => {
    const tenant = await resolveTenant(db, threadId, opts.tenant);
    return { tenantId: tenant, events: await threadStore(db).readEvents(tenant, threadId) };
  });
  const effects = await withSchema(config, 'tools', (db) =>
    new EffectLedgerRepository(db.sql).listByThread(tenantId, threadId),
  );
  const views = joinEffects(effects, events);
  if (out.json) {
    for (const v of views) out.jsonLine(v);
    return views;
  }
  out.line(
    out.style('bold', `effects of ${tenantId}/${threadId}`) +
      out.style('dim', ` · ${plural(views.length, 'ledger row')}`),
  );
  const rows = table([
    ['KEY', 'TOOL', 'KIND', 'STATE', 'ATTEMPTS', 'LOG', 'STARTED', 'FINISHED'],
    ...views.map((v) => [
      v.key,
      v.tool,
      v.kind,
      v.state,
      String(v.attempts),
      v.logOutcome,
      v.startedAt,
      v.finishedAt ?? '-',
    ]),
  ]);
  out.line(rows[0]!);
  views.forEach((v, i) => out.line(v.escalated ? out.style('yellow', rows[i + 1]!) : rows[i + 1]!));
  const retried = views.filter((v) => v.retried).length;
  const escalated = views.filter((v) => v.escalated);
  out.line(
    out.style(
      'dim',
      `${plural(retried, 'effect')} delivered more than once (dedup or retry), ${plural(escalated.length, 'escalation')}`,
    ),
  );
  for (const e of escalated) {
    out.line(
      out.style(
        'yellow',
        `  ! ${e.key}: uncertain — check ${e.tool} by hand, then follow docs/runbooks/uncertain-effect.md`,
      ),
    );
  }
  return views;
}

export function effectsCommand(): Command {
  return new Command('effects')
    .description("a thread's effect-ledger rows (key, tool, kind, state, attempts, started/finished) next to its log")
    .argument('<threadId>', 'the thread')
    .option('--tenant <tenant>', "the thread's tenant (found from the id when unique)")
    .addHelpText(
      'after',
      `
ATTEMPTS > 1 means the tool call was delivered again (a dedup hit re-sending the stored result, or an
idempotent retry). State "uncertain" (highlighted) means a worker died mid-effect: a human decides.

Examples:
  $ ratchet effects th_Q2x8mVn1pL0aZrT5yKe3wB
  $ ratchet effects th_Q2x8mVn1pL0aZrT5yKe3wB --json | jq 'select(.escalated)'`,
    )
    .action(async (threadId: string, opts: EffectsOptions, cmd: Command) => {
      await showEffects(commandContext(cmd), threadId, opts);
    });
}
