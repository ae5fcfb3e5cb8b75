import { DeliverPolicy, type NatsConnection } from 'nats';
import { TERMINAL_RUN_EVENTS, decodeThreadEvent, type ThreadEvent } from '@ratchet/contracts';
import { CliError } from './cli.errors';

export interface WaitForRunEndOptions {
  nc: NatsConnection;
  /** `<prefix>.events.<tenant>.<thread>`. */
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
  const consumer = await opts.nc.jetstream().consumers.get(stream, {
    filterSubjects: [opts.subject],
    deliver_policy: DeliverPolicy.All,
  });
  const messages = await consumer.consume();
  let last: ThreadEvent | undefined;
  let seen = 0;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    messages.stop();
  }, opts.timeoutMs);
  try {
    for await (const m of messages) {
      let event: ThreadEvent;
      try {
        event = decodeThreadEvent(m.json());
      } catch {
        continue; // not ours to judge here: the log in Postgres is what gets printed
      }
      seen += 1;
      last = event;
      opts.onEvent?.(event);
      if (event.runId === opts.runId && TERMINAL.has(event.type)) return { outcome: 'ended', terminal: event, seen };
    }
  } finally {
    clearTimeout(timer);
    messages.stop();
  }
  if (!timedOut) throw new CliError(`the event feed ${opts.subject} closed before run ${opts.runId} ended`, undefined, 'nats.feed_closed');
  return { outcome: 'timeout', last, seen };
}
