import { headers, type NatsConnection } from 'nats';
import { FEED_DECISION_TYPE, feedDecisionPayloads, HEADERS, subjects, type ThreadEvent } from '@ratchet/contracts';
import type { StoredEvent } from '@ratchet/adapters';
import { topologyFromConfig } from '@ratchet/platform';
import { plural, withNats, withSchema, type CommandContext } from '../context';
import { CliError, EXIT } from '../errors';
import { progressBar } from '../progress';
import { compareStream, isClean, type StreamComparison } from '../ops/stream-compare';
import { readStream, type FeedMessage } from '../ops/stream-read';
import { threadStore } from '@ratchet/platform';
import { keyOf, selectThreads, type SelectionOptions } from '../ops/thread-selection';

export interface StreamCheckOptions extends SelectionOptions {
  repair?: boolean;
}

/** Margin under the stream's max age before a missing event counts as expired rather than lost. */
const EXPIRY_MARGIN_MS = 60_000;

/**
 * Compares the decision feed on the EVENTS stream (feed v2) with the Postgres log per thread: missing,
 * duplicated, reordered and unknown events. `--repair` republishes each run of consecutive missing events
 * as decision messages with Nats-Msg-Id = `decision:<id of its first event>` (the relay's own id when the
 * run is a whole decision, so a concurrent relay publish is deduplicated by the server; an id the server
 * still remembers from before the loss is retried once as `<id>.repair`).
 */
export async function streamCheck(
  { config, out }: CommandContext,
  threadId: string | undefined,
  opts: StreamCheckOptions,
): Promise<number> {
  const s = subjects(config.RATCHET_SUBJECT_PREFIX);
  const stream = topologyFromConfig(config).streams.find((x) => x.role === 'events')!.config.name;
  const results = await withSchema(config, 'orchestrator', async (db) => {
    const keys = await selectThreads(db, threadId, opts);
    return withNats(config, async (nc) => {
      const jsm = await nc.jetstreamManager();
      const info = await jsm.streams.info(stream).catch((error: unknown) => {
        throw new CliError(
          `stream ${stream} is missing: run \`ratchet migrate\` (then stream-check --repair)`,
          undefined,
          'nats.no_stream',
          {
            cause: error,
          },
        );
      });
      const maxAgeMs = info.config.max_age / 1e6;
      const expiredBefore = maxAgeMs > 0 ? Date.now() - maxAgeMs + EXPIRY_MARGIN_MS : undefined;
      // One pass over the stream for many threads; one subject for one thread.
      const filter =
        threadId !== undefined
          ? s.feed(keys[0]!.tenantId, keys[0]!.threadId)
          : opts.tenant !== undefined
            ? s.feedOfTenant(opts.tenant)
            : s.feedAll;
      const feed = groupBySubject(await readStream(nc, stream, filter));
      const store = threadStore(db);
      const bar = progressBar(out, 'checking', keys.length);
      const found: (StreamComparison & { repaired: number })[] = [];
      for (const [i, key] of keys.entries()) {
        bar.update(i, keyOf(key));
        const subject = s.feed(key.tenantId, key.threadId);
        // As stored: a repair re-publishes what the log holds (content sealed where it was sealed).
        const log = await store.readStoredEvents(key.tenantId, key.threadId);
        const c = compareStream(key.tenantId, key.threadId, log, feed.get(subject) ?? [], expiredBefore);
        feed.delete(subject);
        const repaired = opts.repair ? await republish(nc, subject, log, c) : 0;
        found.push({ ...c, repaired });
      }
      bar.finish();
      // With --all, subjects of threads that have no log at all.
      const orphans = opts.after === undefined ? [...feed.entries()] : [];
      return { found, orphans };
    });
  });
  let failed = results.orphans.length > 0;
  for (const c of results.found) {
    const unrepaired = c.missing.length - c.repaired;
    if (unrepaired > 0 || c.unknown.length > 0) failed = true;
    if (out.json) out.jsonLine(c);
    else if (!isClean(c) || results.found.length === 1) print(out, c);
  }
  for (const [subject, msgs] of results.orphans) {
    if (out.json) out.jsonLine({ subject, orphan: true, seqs: msgs.map((m) => m.seq) });
    else
      out.line(`${out.style('red', 'ORPHAN')}  ${subject}: ${plural(msgs.length, 'message')} for a thread with no log`);
  }
  if (!out.json) {
    const bad = results.found.filter((c) => !isClean(c)).length;
    const mark = failed ? out.style('red', '✘') : out.style('green', '✔');
    out.line(`${mark} ${plural(results.found.length, 'thread')} checked against ${stream}, ${bad} with differences`);
  }
  return failed ? EXIT.failure : EXIT.ok;
}

function groupBySubject(messages: FeedMessage[]): Map<string, FeedMessage[]> {
  const bySubject = new Map<string, FeedMessage[]>();
  for (const m of messages) bySubject.set(m.subject, [...(bySubject.get(m.subject) ?? []), m]);
  return bySubject;
}

async function republish(
  nc: NatsConnection,
  subject: string,
  log: readonly StoredEvent[],
  c: StreamComparison,
): Promise<number> {
  const js = nc.jetstream();
  const missing = new Set(c.missing.map((m) => m.id));
  // Runs of consecutive missing events: each republished as decision messages, in order.
  const runs: ThreadEvent[][] = [];
  let previous: number | undefined;
  for (const e of log) {
    if (!missing.has(e.id)) continue;
    if (previous === undefined || e.version !== previous + 1) runs.push([]);
    runs.at(-1)!.push(e as unknown as ThreadEvent);
    previous = e.version;
  }
  let published = 0;
  for (const run of runs) {
    for (const { id, payload, last } of feedDecisionPayloads(run)) {
      const h = headers();
      h.set(HEADERS.msgId, id);
      h.set(HEADERS.messageType, FEED_DECISION_TYPE);
      h.set(HEADERS.tenant, payload.tenantId);
      const trace = last.trace;
      if (trace) {
        h.set(HEADERS.traceparent, trace.traceparent);
        if (trace.tracestate) h.set(HEADERS.tracestate, trace.tracestate);
      }
      const ack = await js.publish(subject, JSON.stringify(payload), { msgID: id, headers: h });
      if (ack.duplicate) {
        // Deleted within the duplicate window, the server still remembers the id and drops the copy. We
        // just saw it absent, so store it under a derived id (readers key on the events' ids and versions).
        h.set(HEADERS.msgId, `${id}.repair`);
        const again = await js.publish(subject, JSON.stringify(payload), { msgID: `${id}.repair`, headers: h });
        if (again.duplicate) continue;
      }
      published += payload.events.length;
    }
  }
  return published;
}

function print(out: CommandContext['out'], c: StreamComparison & { repaired: number }): void {
  const head = `${c.tenantId}/${c.threadId}: log ${plural(c.logEvents, 'event')}, stream ${plural(c.streamMessages, 'message')}`;
  out.line(
    isClean(c)
      ? `${out.style('green', 'ok')}      ${head}${c.expired ? ` (${c.expired} expired by max age)` : ''}`
      : `${out.style('yellow', 'DIFFERS')} ${head}`,
  );
  for (const m of c.missing) out.line(`  missing     v${m.version} ${m.type} ${m.id}`);
  if (c.repaired > 0)
    out.line(out.style('green', `  republished ${plural(c.repaired, 'missing event')} as decision messages`));
  for (const d of c.duplicated) out.line(`  duplicated  v${d.version} ${d.id} at seqs ${d.seqs.join(', ')}`);
  for (const r of c.reordered)
    out.line(`  reordered   v${r.version} (seq ${r.seq}) after v${r.after}: feed readers must order by version`);
  for (const u of c.unknown)
    out.line(
      out.style('red', `  unknown     seq ${u.seq} msg id ${u.msgId ?? '-'} v${u.version ?? '?'}: not in the log`),
    );
}
