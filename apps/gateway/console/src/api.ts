import { createParser } from 'eventsource-parser';
import { createGatewayClient, expectOk, GatewayError, type GatewaySchemas } from '@ratchet/http-client';

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

/** The generated client of the gateway (same origin), with the signed-in credential on every request. */
export const gateway = createGatewayClient({ baseUrl: location.origin, credential });

export type Schemas = GatewaySchemas;

/** A call's 2xx data; otherwise an ApiError reading `403 Forbidden: <detail> (<issues>)`. */
export async function ok<D>(
  pending: Promise<{ data?: D; error?: unknown; response: Response }>,
): Promise<NonNullable<D>> {
  try {
    return await expectOk(pending);
  } catch (error) {
    if (!(error instanceof GatewayError) || error.status === undefined) throw error;
    const problem = error.details.problem;
    const issues = (problem?.errors ?? []).map((e) => e.detail).filter(Boolean);
    throw new ApiError(
      error.status,
      problem?.type ?? '',
      `${error.status} ${problem?.title ?? ''}${problem?.detail ? `: ${problem.detail}` : ''}${issues.length ? ` (${issues.join('; ')})` : ''}`,
    );
  }
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
        const { response: res, data: body } = await gateway.GET('/v1/threads/{threadId}/stream', {
          params: { path: { threadId }, query: { mode: 'messages,events', after: last } },
          headers: { accept: 'text/event-stream' },
          parseAs: 'stream',
          signal: controller.signal,
        });
        if (!res.ok || !body) throw new ApiError(res.status, '', `live updates: ${res.status} ${res.statusText}`);
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
        const reader = body.pipeThrough(new TextDecoderStream()).getReader();
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
