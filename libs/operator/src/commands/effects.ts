import { EffectLedgerRepository, type EffectRecord } from '@ratchet/adapters';
import type { ThreadEvent } from '@ratchet/contracts';
import { plural, resolveTenant, withSchema, type CommandContext } from '../context';
import { CliError, UsageError } from '../errors';
import { table } from '../format';
import { call, gateway, type GatewayOptions } from '../gateway';
import { decideApproval } from './approvals';
import { threadStore } from '@ratchet/platform';

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

export interface ResolveOptions extends GatewayOptions {
  happened?: boolean;
  didNotHappen?: boolean;
  retry?: boolean;
  result?: string;
  reason?: string;
}

/**
 * Settles an uncertain effect by its ledger key: finds the pending escalation for the key (the
 * approvals the credential may see) and decides it — `happened` (with the result the outside system
 * shows), or it did not happen: `fail` (the model sees a failure) or, with --retry, `retry` (the tool
 * runs again under the same key).
 */
export async function resolveEffect(ctx: CommandContext, key: string, opts: ResolveOptions) {
  if (opts.happened === opts.didNotHappen)
    throw new UsageError('say what the outside system shows: --happened or --did-not-happen');
  if (opts.retry && !opts.didNotHappen) throw new UsageError('--retry goes with --did-not-happen');
  if (opts.result !== undefined && !opts.happened) throw new UsageError('--result goes with --happened');
  let result: unknown;
  if (opts.result !== undefined) {
    try {
      result = JSON.parse(opts.result) as unknown;
    } catch {
      throw new UsageError(`invalid --result: not JSON (${opts.result.slice(0, 80)})`);
    }
  }
  const target = gateway(ctx.config, opts);
  const { approvals } = await call(
    target,
    target.client.GET('/v1/approvals', { params: { query: { status: 'pending', limit: 500 } } }),
  );
  const escalation = approvals.find((a) => a.kind === 'escalation' && a.idempotencyKey === key);
  if (!escalation)
    throw new CliError(
      `no pending escalation for ${key} that this credential may see (ratchet approvals list --status pending)`,
      undefined,
      'effect.no_escalation',
    );
  const decision = opts.happened ? 'happened' : opts.retry ? 'retry' : 'fail';
  return decideApproval(ctx, escalation.id, decision, {
    ...opts,
    ...(result !== undefined ? { result } : {}),
  });
}
