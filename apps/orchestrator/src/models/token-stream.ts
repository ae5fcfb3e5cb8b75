import type { ModelCallCommand, Subjects, TokenChunk } from '@ratchet/contracts';
import type { ModelDelta } from '@ratchet/domain';
import type { NatsConnection } from 'nats';

/** How long deltas after the first gather before they go out as one chunk: fewer messages, still live to a reader. */
const FLUSH_MS = 20;
const FLUSH_CHARS = 512;

/**
 * A model's answer as it is written, to `<prefix>.tokens.<tenant>.<thread>` on core NATS: not state
 * (nothing is committed for it; the answer of record is `model.responded`), so published straight from
 * the worker. The first piece of each attempt is preceded by a `reset`, so a client drops what it had of
 * the step's earlier attempts (a retry, a worker that died mid-stream). An answer that is not streamed
 * publishes nothing.
 */
export class TokenStream {
  constructor(
    private readonly nc: NatsConnection,
    private readonly subjects: Subjects,
  ) {}

  /** The sink for one attempt of one model call. `close()` sends what is still gathered. */
  open(command: ModelCallCommand, attempt = command.attempt): { delta: (d: ModelDelta) => void; close: () => void } {
    const subject = this.subjects.tokens(command.tenantId, command.threadId);
    const base = {
      tenantId: command.tenantId,
      threadId: command.threadId,
      runId: command.runId,
      step: command.step,
      attempt,
      commandId: command.commandId,
    };
    let seq = 0;
    let text = '';
    let calls: NonNullable<TokenChunk['toolCalls']> = [];
    let timer: NodeJS.Timeout | undefined;
    // Best effort: a piece that cannot go out (the connection closed or draining while the worker stops,
    // a flush timer firing after it) is dropped, never thrown from a timer; readers get the answer of
    // record from `model.responded`.
    const send = (chunk: TokenChunk) => {
      if (this.nc.isClosed() || this.nc.isDraining()) return;
      try {
        this.nc.publish(subject, JSON.stringify(chunk));
      } catch {
        // closed between the check and the publish
      }
    };
    const flush = () => {
      clearTimeout(timer);
      timer = undefined;
      if (text === '' && calls.length === 0) return;
      send({
        ...base,
        kind: 'delta',
        seq: ++seq,
        ...(text ? { text } : {}),
        ...(calls.length > 0 ? { toolCalls: calls } : {}),
      });
      text = '';
      calls = [];
    };
    return {
      delta: (d) => {
        if (seq === 0 && text === '' && calls.length === 0) send({ ...base, kind: 'reset', seq: 0 });
        if (d.text) text += d.text;
        if (d.toolCalls) calls.push(...d.toolCalls);
        // The first piece goes at once (what a reader waits for most); later ones gather for FLUSH_MS.
        if (seq === 0 || text.length >= FLUSH_CHARS) flush();
        else timer ??= setTimeout(flush, FLUSH_MS);
      },
      close: flush,
    };
  }
}
