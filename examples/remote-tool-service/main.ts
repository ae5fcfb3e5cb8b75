/**
 * A remote tool for Ratchet in plain nats.js: `crm.create_ticket` (at-most-once on Ratchet's side,
 * made safe here by deduplicating on the idempotency key). Run it next to a tool executor started with
 * `REMOTE_TOOLS=crm.create_ticket:idempotent:5000` (see docs/tools.md):
 *
 *   NATS_URL=nats://127.0.0.1:4222 RATCHET_SUBJECT_PREFIX=ratchet \
 *     node --conditions=ratchet-src -r @swc-node/register examples/remote-tool-service/main.ts
 */
import { connect, headers as natsHeaders, type Msg } from 'nats';

const prefix = process.env['RATCHET_SUBJECT_PREFIX'] ?? 'ratchet';
const TOOL = 'crm.create_ticket';
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Stand-in for the CRM's own table: key -> the ticket created for it. Use a database in real life. */
const ticketsByKey = new Map<string, { ticketId: string; title: string }>();

function reply(msg: Msg, body: unknown): void {
  const h = natsHeaders();
  h.set('Content-Type', 'application/json');
  msg.respond(encoder.encode(JSON.stringify(body)), { headers: h });
}

async function main(): Promise<void> {
  const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222', name: TOOL });
  // A queue group: several replicas share the load, each request is answered once.
  const sub = nc.subscribe(`${prefix}.toolsvc.${TOOL}`, { queue: TOOL });
  console.log(`serving ${TOOL} on ${sub.getSubject()}`);
  for await (const msg of sub) {
    const key = msg.headers?.get('Ratchet-Idempotency-Key');
    const tenant = msg.headers?.get('Ratchet-Tenant');
    if (!key || !tenant) {
      reply(msg, { ok: false, error: { code: 'bad_request', message: 'missing Ratchet headers', retryable: false } });
      continue;
    }
    let args: { title?: unknown };
    try {
      args = (JSON.parse(decoder.decode(msg.data)) as { args: { title?: unknown } }).args;
    } catch {
      reply(msg, { ok: false, error: { code: 'bad_request', message: 'body is not JSON', retryable: false } });
      continue;
    }
    if (typeof args.title !== 'string' || args.title.length === 0) {
      // Goes back to the model as a tool error it can read and correct.
      reply(msg, { ok: false, error: { code: 'invalid_arguments', message: 'title: a non-empty string is required' } });
      continue;
    }
    // The key identifies the logical call: a repeat (after an executor crash) gets the same ticket back.
    const scoped = `${tenant}/${key}`;
    const existing = ticketsByKey.get(scoped);
    if (existing) {
      reply(msg, { ok: true, result: { ...existing, deduplicated: true } });
      continue;
    }
    const ticket = { ticketId: `T-${ticketsByKey.size + 1}`, title: args.title };
    ticketsByKey.set(scoped, ticket);
    reply(msg, { ok: true, result: ticket });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
