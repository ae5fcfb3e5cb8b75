import { createParser } from 'eventsource-parser';

/** The console's only way to the gateway: the signed-in credential on every request, problems as errors. */

const CREDENTIAL_KEY = 'ratchet.credential';

export function credential(): string | null {
  return sessionStorage.getItem(CREDENTIAL_KEY);
}

export function signIn(value: string): void {
  sessionStorage.setItem(CREDENTIAL_KEY, value.trim());
}

export function signOut(): void {
  sessionStorage.removeItem(CREDENTIAL_KEY);
}

/** An answer other than 2xx, with what the gateway said (RFC 9457 problem details). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export async function api<T>(
  path: string,
  init: { method?: string; body?: unknown; signal?: AbortSignal } = {},
): Promise<T> {
  const res = await fetch(path, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${credential() ?? ''}`,
      accept: 'application/json',
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  const text = await res.text();
  const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  if (!res.ok) {
    const detail = typeof body['detail'] === 'string' ? body['detail'] : '';
    const title = typeof body['title'] === 'string' ? body['title'] : res.statusText;
    const issues = Array.isArray(body['errors'])
      ? (body['errors'] as { detail?: string }[]).map((e) => e.detail).filter(Boolean)
      : [];
    throw new ApiError(
      res.status,
      typeof body['type'] === 'string' ? body['type'] : '',
      `${res.status} ${title}${detail ? `: ${detail}` : ''}${issues.length ? ` (${issues.join('; ')})` : ''}`,
    );
  }
  return body as T;
}

export interface StreamHandlers {
  onEvent(event: unknown): void;
  onToken(token: { runId: string; step: number; attempt: number; text?: string }): void;
  onReset(reset: { runId: string; step: number; attempt: number }): void;
  onError(error: Error): void;
}

/**
 * Follows `GET /v1/threads/{id}/stream?mode=messages,events` with the credential in a header (an
 * EventSource cannot send one), resuming after the last version seen when the connection drops.
 */
export function follow(threadId: string, after: number, handlers: StreamHandlers): () => void {
  const controller = new AbortController();
  let last = after;
  const connect = async (): Promise<void> => {
    while (!controller.signal.aborted) {
      try {
        const res = await fetch(
          `/v1/threads/${encodeURIComponent(threadId)}/stream?mode=messages,events&after=${last}`,
          {
            headers: { authorization: `Bearer ${credential() ?? ''}`, accept: 'text/event-stream' },
            signal: controller.signal,
          },
        );
        if (!res.ok || !res.body) throw new ApiError(res.status, '', `live updates: ${res.status} ${res.statusText}`);
        const parser = createParser({
          onEvent(message) {
            const data = JSON.parse(message.data) as Record<string, unknown>;
            if (message.event === 'token') handlers.onToken(data as never);
            else if (message.event === 'reset') handlers.onReset(data as never);
            else {
              if (typeof data['version'] === 'number') last = Math.max(last, data['version']);
              handlers.onEvent(data);
            }
          },
        });
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(value);
        }
      } catch (error) {
        if (controller.signal.aborted) return;
        handlers.onError(error as Error);
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  void connect();
  return () => controller.abort();
}
