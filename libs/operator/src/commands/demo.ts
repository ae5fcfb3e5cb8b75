import { randomUUID } from 'node:crypto';
import { connectNats, masterKeyFromFile } from '@ratchet/adapters';
import { subjects, TokenChunk, type ThreadEvent } from '@ratchet/contracts';
import { type CliConfig } from '../config';
import { CliError } from '../errors';
import { type Output } from '../output';
import { waitForRunEnd } from '../event-feed';
import { call, gateway } from '../gateway';
import { readThreadEvents } from '../thread-log';
import { formatTimeline } from '../timeline/format-timeline';

export const DEFAULT_DEMO_MESSAGE = 'What is the weather in Oslo and Rome?';
export const DEMO_AGENT = 'demo';

export interface DemoOptions {
  gateway?: string;
  apiKey?: string;
  message: string;
  /** Seconds to wait for the run to end. */
  timeout: number;
  tenant: string;
}

export interface DemoResult {
  runId: string;
  threadId: string;
  requestId: string;
  tenantId: string;
  status: 'completed' | 'failed' | 'cancelled';
  durationMs: number;
  output?: string;
  error?: { code: string; message: string };
  events: ThreadEvent[];
}

/**
 * Starts a run of the demo agent through the gateway, follows the thread's live feed on NATS until the
 * run ends, then prints the thread's timeline as Postgres (the system of record) has it.
 */
export async function runDemo(config: CliConfig, options: DemoOptions, out: Output): Promise<DemoResult> {
  const target = gateway(config, options);
  const idempotencyKey = `demo-${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const startedAt = Date.now();
  const started = await call(
    target,
    target.client.POST('/v1/runs', {
      params: { header: { 'Idempotency-Key': idempotencyKey } },
      body: { agent: DEMO_AGENT, input: options.message },
    }),
  );
  // The gateway's answer names no tenant: the key's tenant is the one given (default `default`).
  const tenantId = options.tenant;
  const { runId, threadId } = started;
  out.note(
    out.style('dim', `→ run ${runId} accepted on thread ${threadId}; waiting up to ${options.timeout}s for it to end…`),
  );

  const subject = subjects(config.RATCHET_SUBJECT_PREFIX).feed(tenantId, threadId);
  const nc = await connectNats({ url: config.NATS_URL, name: 'ratchet-cli-demo', timeoutMs: 5_000 });
  const progress = liveProgress(out);
  const answers = liveAnswers(out);
  // The answers as the model writes them (core NATS, not durable): shown while the run goes on.
  const tokens = nc.subscribe(subjects(config.RATCHET_SUBJECT_PREFIX).tokens(tenantId, threadId), {
    callback: (error, msg) => {
      if (error) return;
      const chunk = TokenChunk.safeParse(msg.json());
      if (chunk.success) answers.add(chunk.data);
    },
  });
  let wait;
  try {
    wait = await waitForRunEnd({ nc, subject, runId, timeoutMs: options.timeout * 1000, onEvent: progress.update });
  } finally {
    tokens.unsubscribe();
    answers.done();
    progress.done();
    await nc.close().catch(() => undefined);
  }
  if (wait.outcome === 'timeout') {
    const last = wait.last
      ? `the last event seen was ${oneLine(formatTimeline([wait.last])[0] ?? wait.last.type)}`
      : `no event of the thread arrived on ${subject}; is the orchestrator running? (\`npm start\`)`;
    throw new CliError(
      `run ${runId} did not end within ${options.timeout}s (${wait.seen} events seen); ${last}`,
      undefined,
      'demo.timeout',
    );
  }

  // The feed only told us when to look: what is printed is the log of record.
  const events = await readThreadEvents(
    config.DATABASE_URL,
    tenantId,
    threadId,
    0,
    masterKeyFromFile(config.RATCHET_KEY_FILE),
  );
  const terminal = events.find((e) => e.id === wait.terminal.id) ?? wait.terminal;
  if (!events.some((e) => e.id === wait.terminal.id)) {
    out.note(
      out.style(
        'yellow',
        `warning: Postgres at DATABASE_URL does not hold v${wait.terminal.version} yet; is it the database the services use?`,
      ),
    );
  }
  const firstOfRun = events.find((e) => e.runId === runId);
  const durationMs = firstOfRun ? Date.parse(terminal.at) - Date.parse(firstOfRun.at) : Date.now() - startedAt;
  const result: DemoResult = {
    runId,
    threadId,
    requestId: started.requestId ?? idempotencyKey,
    tenantId,
    status: terminal.type === 'run.completed' ? 'completed' : terminal.type === 'run.failed' ? 'failed' : 'cancelled',
    durationMs,
    events,
  };
  if (terminal.type === 'run.completed') result.output = terminal.data.output;
  if (terminal.type === 'run.failed')
    result.error = { code: terminal.data.error.code, message: terminal.data.error.message };
  if (terminal.type === 'run.cancelled')
    result.error = { code: 'run.cancelled', message: `by ${terminal.data.by}: ${terminal.data.reason}` };

  if (out.json) {
    out.jsonLine(result);
    return result;
  }
  out.line(
    out.style('bold', `thread ${threadId}`) + out.style('dim', ` · tenant ${tenantId} · ${events.length} events`),
  );
  for (const line of formatTimeline(events, { style: out.style })) out.line(line);
  out.line(
    result.status === 'completed'
      ? `${out.style('green', '✔')} run ${runId} completed in ${durationMs} ms: ${result.output ?? ''}`
      : `${out.style('red', '✖')} run ${runId} ${result.status} in ${durationMs} ms: ${result.error?.code}: ${result.error?.message}`,
  );
  return result;
}

/**
 * On a terminal, the model's text as it is written, on stderr (`model ▸ …` per attempt of a step); what
 * is printed afterwards from the log is the text of record. Nothing in JSON mode or without a terminal.
 */
function liveAnswers(out: Output): { add: (chunk: TokenChunk) => void; done: () => void } {
  if (out.json || !process.stderr.isTTY) return { add: () => undefined, done: () => undefined };
  let open = false;
  return {
    add: (chunk) => {
      if (chunk.kind === 'reset') {
        process.stderr.write(`\r\x1b[K${open ? '\n' : ''}${out.style('dim', `  model ▸ step ${chunk.step}: `)}`);
        open = true;
      } else if (chunk.text) {
        process.stderr.write(chunk.text);
      }
    },
    done: () => {
      if (open) process.stderr.write('\n');
    },
  };
}

/** On a terminal, one self-updating stderr line with the latest event; nothing otherwise. */
function liveProgress(out: Output): { update: (e: ThreadEvent) => void; done: () => void } {
  if (out.json || !process.stderr.isTTY) return { update: () => undefined, done: () => undefined };
  let shown = false;
  return {
    update: (e) => {
      shown = true;
      process.stderr.write(`\r\x1b[K${out.style('dim', `  … v${e.version} ${e.type}`)}`);
    },
    done: () => {
      if (shown) process.stderr.write('\r\x1b[K');
    },
  };
}

function oneLine(line: string): string {
  return line.replace(/\s{2,}/g, ' ').trim();
}
