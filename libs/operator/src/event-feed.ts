import type { NatsConnection } from 'nats';
import { TERMINAL_RUN_EVENTS, type ThreadEvent } from '@ratchet/contracts';
import { CliError } from './errors';
import { decisionEvents } from './ops/feed-decisions';

export interface WaitForRunEndOptions {
  nc: NatsConnection;
  /** The thread's decision feed, `<prefix>.feed.<tenant>.<thread>` (feed v2). */
  subject: string;
  runId: string;
  timeoutMs: number;
  /** Called with every event of the thread as it arrives. */
  onEvent?: (event: ThreadEvent) => void;
}

export type RunEndWait =
  | { outcome: 'ended'; terminal: ThreadEvent; seen: number }
  | { outcome: 'timeout'; last: ThreadEvent | undefined; seen: number };

const TERMINAL = new Set<string>(TERMINAL_RUN_EVENTS);

/**
 * Follows a thread's live event feed with an ordered JetStream consumer delivering from the start of
 * the stream, so events published before we subscribed are not missed, until a terminal event of
 * `runId` arrives or the timeout passes.
 */
export async function waitForRunEnd(opts: WaitForRunEndOptions): Promise<RunEndWait> {
  const jsm = await opts.nc.jetstreamManager();
  let stream: string;
  try {
    stream = await jsm.streams.find(opts.subject);
  } catch (error) {
    throw new CliError(
      `no JetStream stream captures ${opts.subject}: run \`npm run ratchet -- migrate\` (or start the services) first`,
      undefined,
      'nats.no_stream',
      { cause: error },
    );
  }
  // An ordered consumer starts at stream sequence 1 by default: every retained event of the thread, even
  // those published before we subscribed. (Passing deliver_policy 'all' would make nats.js send it with
  // opt_start_seq, which the server refuses, and consume() then retries forever.) One subject as a
  // string: an array becomes `filter_subjects`, which nats-server before 2.10 ignores.
  const consumer = await opts.nc.jetstream().consumers.get(stream, { filterSubjects: opts.subject });
  let timer: NodeJS.Timeout | undefined;
  // Started before consume(): the timeout holds even if creating the consumer never succeeds.
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), opts.timeoutMs)));
  const consuming = consumer.consume();
  const started = await Promise.race([consuming, timedOut]);
  if (started === 'timeout') {
    consuming.then(
      (m) => m.stop(),
      () => undefined,
    );
    return { outcome: 'timeout', last: undefined, seen: 0 };
  }
  const messages = started;
  let last: ThreadEvent | undefined;
  let seen = 0;
  const follow = async (): Promise<RunEndWait | undefined> => {
    for await (const m of messages) {
      let payload: unknown;
      try {
        payload = m.json();
      } catch {
        continue; // not ours to judge here: the log in Postgres is what gets printed
      }
      for (const event of decisionEvents(payload, m.subject)) {
        seen += 1;
        last = event;
        opts.onEvent?.(event);
        if (event.runId === opts.runId && TERMINAL.has(event.type)) return { outcome: 'ended', terminal: event, seen };
      }
    }
    return undefined;
  };
  const following = follow();
  try {
    const result = await Promise.race([following, timedOut]);
    if (result === 'timeout') return { outcome: 'timeout', last, seen };
    if (result === undefined) {
      throw new CliError(
        `the event feed ${opts.subject} closed before run ${opts.runId} ended`,
        undefined,
        'nats.feed_closed',
      );
    }
    return result;
  } finally {
    clearTimeout(timer);
    messages.stop();
    following.catch(() => undefined);
  }
}
