import { ErrorCode, headers as natsHeaders, type NatsConnection, type NatsError } from 'nats';
import type { RemoteToolTransport } from '@ratchet/tools';

/** Remote tools over core NATS request/reply on each tool's subject. */
export function natsToolTransport(nc: NatsConnection): RemoteToolTransport {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return {
    async request(subject, body, headers, timeoutMs) {
      const h = natsHeaders();
      for (const [k, v] of Object.entries(headers)) h.set(k, v);
      try {
        const msg = await nc.request(subject, encoder.encode(body), {
          timeout: timeoutMs,
          headers: h,
        });
        return { ok: true, data: decoder.decode(msg.data) };
      } catch (error) {
        const code = (error as NatsError).code;
        const reason =
          code === ErrorCode.NoResponders ? 'no_responders' : code === ErrorCode.Timeout ? 'timeout' : 'error';
        return { ok: false, reason, message: (error as Error).message };
      }
    },
  };
}
