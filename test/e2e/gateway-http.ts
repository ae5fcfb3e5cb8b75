import type { ApprovalView } from '@ratchet/contracts';

/** An answer of the gateway as the e2e suites read it: the status and the JSON body (undefined when empty). */
export interface GatewayAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * A call to the gateway with a credential (`Bearer`), a JSON body when given and extra headers (an
 * Idempotency-Key): `base()` is read at each call, since suites learn the gateway's port in `beforeAll`.
 */
export function gatewayHttp(base: () => string) {
  return async (
    method: string,
    url: string,
    key: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<GatewayAnswer> => {
    const res = await fetch(`${base()}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...extra,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
  };
}

/** The thread's one pending approval as `approverKey` sees it, once the approvals service has it. */
export async function pendingApproval(
  http: ReturnType<typeof gatewayHttp>,
  approverKey: string,
  threadId: string,
): Promise<ApprovalView> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const res = await http('GET', `/v1/approvals?status=pending&threadId=${threadId}`, approverKey);
    const [first] = (res.body as { approvals: ApprovalView[] }).approvals ?? [];
    if (first) return first;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no pending approval on ${threadId}`);
}
