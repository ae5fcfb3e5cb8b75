import { ErrorCode, headers as natsHeaders, type NatsConnection, type NatsError } from 'nats';
import type { RemoteToolTransport } from '@ratchet/tools';

/** Remote tools over core NATS request/reply on each tool's subject. */
export function natsToolTransport(nc: NatsConnection): RemoteToolTransport {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return {
    async request(subject, body, headers, timeoutMs, signal) {
      const h = natsHeaders();
      for (const [k, v] of Object.entries(headers)) h.set(k, v);
      if (signal?.aborted) return { ok: false, reason: 'aborted', message: 'aborted before it was sent' };
      let onAbort: (() => void) | undefined;
      try {
        const request = nc.request(subject, encoder.encode(body), { timeout: timeoutMs, headers: h });
        const stopped = new Promise<'aborted'>((resolve) => {
          onAbort = () => resolve('aborted');
          signal?.addEventListener('abort', onAbort, { once: true });
        });
        const msg = await Promise.race([request, stopped]);
        if (msg === 'aborted') {
          request.catch(() => undefined); // its answer (or timeout) comes to nobody
          return { ok: false, reason: 'aborted', message: 'aborted while waiting for the answer' };
        }
        return { ok: true, data: decoder.decode(msg.data) };
      } catch (error) {
        const code = (error as NatsError).code;
        const reason =
          code === ErrorCode.NoResponders ? 'no_responders' : code === ErrorCode.Timeout ? 'timeout' : 'error';
        return { ok: false, reason, message: (error as Error).message };
      } finally {
        if (onAbort) signal?.removeEventListener('abort', onAbort);
      }
    },
    cancel(subject, body, headers) {
      try {
        const h = natsHeaders();
        for (const [k, v] of Object.entries(headers)) h.set(k, v);
        nc.publish(subject, encoder.encode(body), { headers: h });
      } catch {
        // best effort: a closed connection cancels nothing, and the call's outcome is recorded anyway
      }
    },
  };
}
