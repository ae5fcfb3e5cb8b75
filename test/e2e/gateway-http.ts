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
