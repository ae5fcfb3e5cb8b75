import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runIdFor } from '@ratchet/platform';
import { Stack } from './harness';
import { ModelProcess } from './slow-model.bench';
import { summarize, type Summary } from './stats';

/*
 * Workload "first-token": how long a token takes from the model server writing it to a client of the
 * gateway's SSE (`GET /v1/threads/{id}/stream?mode=messages`) reading it: the model worker reads the
 * provider's stream, publishes each piece on `<prefix>.tokens.<tenant>.<thread>` (core NATS), and the
 * gateway writes it to the connection. Runs one at a time (a latency, not a throughput), each one answer
 * streamed word by word from an OpenAI-compatible server in a process of its own. The server records
 * when (epoch ms) it wrote each answer's first piece; the client when it read the first `token` frame.
 */

const TENANT = 'bench';
const KEY = 'rk_bench_first_token_key_0001';

export interface FirstTokenResult {
  runs: number;
  /** Model server wrote the first piece → SSE client read it. */
  firstTokenMs: Summary;
  /** Request published → SSE client read the first token (includes the model's own latency). */
  fromRequestMs: Summary;
  /** `token` frames read per run (the answer's words). */
  tokensPerRun: number;
}

export async function benchFirstToken(
  options: { runs: number; latencyMs: number; tokenMs: number },
  log: (line: string) => void,
): Promise<FirstTokenResult> {
  const model = await ModelProcess.start();
  const agents = mkdtempSync(path.join(os.tmpdir(), 'ratchet-first-token-bench-'));
  writeFileSync(
    path.join(agents, 'stream-bench.yaml'),
    [
      'name: stream-bench',
      'model:',
      '  provider: openai',
      '  name: fake-1',
      `  baseUrl: ${model.url}`,
      'maxSteps: 1',
      '',
    ].join('\n'),
  );
  const stack = await Stack.create({ env: { AGENTS_DIR: agents, OPENAI_API_KEY: 'sk-bench' } });
  try {
    await stack.start('orchestrator');
    const gateway = await stack.start('gateway', 'gateway', {
      GATEWAY_BOOTSTRAP_API_KEY: KEY,
      GATEWAY_BOOTSTRAP_TENANT: TENANT,
    });
    const base = `http://127.0.0.1:${gateway.port}`;
    const answer = 'the quick brown fox jumps over the lazy dog and keeps on running far away';
    const reads = new Map<string, { first: number; published: number; tokens: number }>();
    for (let i = 0; i < options.runs; i++) {
      const id = `ft-${process.pid}-${i}`;
      const threadId = `th-${id}`;
      const abort = new AbortController();
      // Asked before the run exists: the gateway subscribes at once and answers when the thread appears.
      const response = fetch(`${base}/v1/threads/${threadId}/stream?mode=messages`, {
        headers: { authorization: `Bearer ${KEY}`, accept: 'text/event-stream' },
        signal: abort.signal,
      });
      const read = { first: NaN, published: 0, tokens: 0 };
      reads.set(id, read);
      const reading = (async () => {
        const decoder = new TextDecoder();
        let buffer = '';
        try {
          const res = await response;
          for await (const bytes of res.body!) {
            buffer += decoder.decode(bytes as Uint8Array, { stream: true });
            let end: number;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const frame = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              if (!frame.startsWith('event: token')) continue;
              if (read.tokens++ === 0) read.first = Date.now();
            }
          }
        } catch {
          // aborted once the run ended
        }
      })();
      await new Promise((r) => setTimeout(r, 50));
      const terminal = stack.waitTerminal(runIdFor(TENANT, id), 60_000);
      read.published = Date.now();
      await stack.publishRequest(TENANT, {
        requestId: id,
        threadId,
        agent: 'stream-bench',
        input: [
          {
            role: 'user',
            content: `${id} [latency=${options.latencyMs}] [token_ms=${options.tokenMs}] [answer=${answer.replaceAll(' ', '_')}]`,
          },
        ],
        principal: { id: 'bench', roles: ['runner'] },
      });
      await terminal;
      abort.abort();
      await reading;
    }
    const stats = await model.stats();
    const written = new Map(
      Object.entries(stats.conversations).map(([key, c]) => [key.split(' ')[0]!, c.firstTokens[0] ?? NaN]),
    );
    const firstToken: number[] = [];
    const fromRequest: number[] = [];
    let tokens = 0;
    for (const [id, r] of reads) {
      firstToken.push(r.first - (written.get(id) ?? NaN));
      fromRequest.push(r.first - r.published);
      tokens += r.tokens;
    }
    log(`first-token: ${options.runs} runs streamed through the gateway`);
    return {
      runs: options.runs,
      firstTokenMs: summarize(firstToken.filter(Number.isFinite)),
      fromRequestMs: summarize(fromRequest.filter(Number.isFinite)),
      tokensPerRun: tokens / options.runs,
    };
  } finally {
    await stack.stop();
    model.stop();
  }
}
