import { ErrorCode, headers as natsHeaders, type NatsConnection, type NatsError } from 'nats';
import type { Subjects } from '@ratchet/contracts';
import type { RemoteToolTransport } from '@ratchet/tools';

/** Remote tools over core NATS request/reply on `<prefix>.toolsvc.<name>`. */
export function natsToolTransport(nc: NatsConnection, subjects: Subjects): RemoteToolTransport {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return {
    async request(tool, body, headers, timeoutMs) {
      const h = natsHeaders();
      for (const [k, v] of Object.entries(headers)) h.set(k, v);
      try {
        const msg = await nc.request(subjects.toolService(tool), encoder.encode(body), {
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
