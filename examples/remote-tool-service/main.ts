/**
 * A remote tool service in plain nats.js (no Ratchet code): a NATS micro service (`$SRV` discovery)
 * with two tools, which describe themselves to Ratchet's tool executor on their own subjects.
 *
 *   NATS_URL=nats://127.0.0.1:4222 RATCHET_SUBJECT_PREFIX=ratchet \
 *     node --conditions=ratchet-src -r @swc-node/register examples/remote-tool-service/main.ts
 *
 * `RATCHET_TENANT=acme` serves the tools to tenant acme only (`<prefix>.tenants.acme.toolsvc.<tool>`);
 * without it, to every tenant (`<prefix>.toolsvc.<tool>`). The contract: docs/tools.md#remote-tool-services.
 */
import { connect, headers as natsHeaders, type Msg, type MsgHdrs } from 'nats';

const prefix = process.env['RATCHET_SUBJECT_PREFIX'] ?? 'ratchet';
const tenant = process.env['RATCHET_TENANT'];
const subjectOf = (tool: string) =>
  tenant ? `${prefix}.tenants.${tenant}.toolsvc.${tool}` : `${prefix}.toolsvc.${tool}`;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Ticket {
  ticketId: string;
  title: string;
  priority: string;
}
/** Stand-in for the CRM's own table: (tenant, idempotency key) -> the ticket made for it. Use a database. */
const ticketsByKey = new Map<string, Ticket>();

type Reply =
  { ok: true; result: unknown } | { ok: false; error: { code: string; message: string; retryable?: boolean } };

interface Tool {
  description: Record<string, unknown>;
  /** `signal` fires when Ratchet cancels the call (`<tool subject>.cancel`): stop the work. */
  call(args: Record<string, unknown>, scope: string, signal: AbortSignal): Reply | Promise<Reply>;
  reconcile?(scope: string): Reply;
}

/** Calls still working, by (tenant, idempotency key): a cancel notice aborts the one it names. */
const working = new Map<string, AbortController>();

const TOOLS: Record<string, Tool> = {
  'crm.create_ticket': {
    description: {
      name: 'crm.create_ticket',
      description: 'Open a support ticket in the CRM. Returns the ticket id.',
      // The real schema: the model sees it, and Ratchet checks the arguments against it before sending.
      inputSchema: {
        type: 'object',
        properties: {
          title: { type: 'string', minLength: 1, maxLength: 200, description: 'One-line summary' },
          priority: { type: 'string', enum: ['low', 'normal', 'high'], default: 'normal' },
        },
        required: ['title'],
        additionalProperties: false,
      },
      // The CRM dedups by the idempotency key, so a repeat after a crash is safe.
      kind: 'idempotent',
      timeoutMs: 5000,
      reconcile: true,
    },
    call(args, scope) {
      const existing = ticketsByKey.get(scope);
      if (existing) return { ok: true, result: { ...existing, deduplicated: true } };
      const ticket = {
        ticketId: `T-${ticketsByKey.size + 1}`,
        title: String(args['title']),
        priority: String(args['priority'] ?? 'normal'),
      };
      ticketsByKey.set(scope, ticket);
      return { ok: true, result: ticket };
    },
    reconcile(scope) {
      const ticket = ticketsByKey.get(scope);
      return { ok: true, result: ticket ? { happened: true, result: ticket } : { happened: false } };
    },
  },
  'crm.count_tickets': {
    description: {
      name: 'crm.count_tickets',
      description: 'How many tickets the CRM holds.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      kind: 'pure',
      timeoutMs: 2000,
    },
    call: () => ({ ok: true, result: { tickets: ticketsByKey.size } }),
  },
  'crm.export_report': {
    description: {
      name: 'crm.export_report',
      description: 'Build a report of the tickets; takes `seconds` to build. Returns its size.',
      inputSchema: {
        type: 'object',
        properties: { label: { type: 'string', maxLength: 64 }, seconds: { type: 'string', pattern: '^[0-9]{1,3}$' } },
        required: ['label', 'seconds'],
        additionalProperties: false,
      },
      kind: 'pure',
      timeoutMs: 60_000,
    },
    // Long work that honours a cancel: it stops as soon as Ratchet says nobody waits for it any more.
    async call(args, _scope, signal) {
      const label = String(args['label']);
      console.log(`started ${label}`);
      const cancelled = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), Number(args['seconds']) * 1000);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      if (cancelled) {
        console.log(`cancelled ${label}: ${String(signal.reason)}`);
        return { ok: false, error: { code: 'cancelled', message: String(signal.reason), retryable: false } };
      }
      console.log(`finished ${label}`);
      return { ok: true, result: { label, tickets: ticketsByKey.size } };
    },
  },
};

function respond(msg: Msg, body: Reply): void {
  const h = natsHeaders();
  h.set('Content-Type', 'application/json');
  msg.respond(encoder.encode(JSON.stringify(body)), { headers: h });
}

async function handle(tool: Tool, msg: Msg): Promise<void> {
  const h: MsgHdrs | undefined = msg.headers;
  const op = h?.get('Ratchet-Op') ?? '';
  if (op === 'describe') return respond(msg, { ok: true, result: tool.description });
  const key = h?.get('Ratchet-Idempotency-Key');
  const callTenant = h?.get('Ratchet-Tenant');
  if (!key || !callTenant)
    return respond(msg, { ok: false, error: { code: 'bad_request', message: 'missing Ratchet headers' } });
  // The key names the logical call; scoped by tenant, so two tenants never share a ticket.
  const scope = `${callTenant}/${key}`;
  if (op === 'reconcile') {
    return respond(
      msg,
      tool.reconcile?.(scope) ?? { ok: false, error: { code: 'unsupported', message: 'no reconcile' } },
    );
  }
  let args: Record<string, unknown>;
  try {
    args = (JSON.parse(decoder.decode(msg.data)) as { args: Record<string, unknown> }).args;
  } catch {
    return respond(msg, { ok: false, error: { code: 'bad_request', message: 'body is not JSON' } });
  }
  const controller = new AbortController();
  working.set(scope, controller);
  try {
    respond(msg, await tool.call(args, scope, controller.signal));
  } finally {
    if (working.get(scope) === controller) working.delete(scope);
  }
}

/** A cancel notice (`{ "reason": … }` with the call's headers): aborts the call it names, if it still works. */
function cancel(msg: Msg): void {
  const key = msg.headers?.get('Ratchet-Idempotency-Key');
  const callTenant = msg.headers?.get('Ratchet-Tenant');
  if (!key || !callTenant) return;
  let reason = 'cancelled';
  try {
    reason = String((JSON.parse(decoder.decode(msg.data)) as { reason?: string }).reason ?? reason);
  } catch {
    // a notice without a readable body still cancels
  }
  working.get(`${callTenant}/${key}`)?.abort(reason);
}

async function main(): Promise<void> {
  const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222', name: 'crm-tools' });
  // One NATS micro service: `nats micro ls` / `nats micro info crm-tools` show it; Ratchet finds it by `$SRV.INFO`.
  const service = await nc.services.add({
    name: 'crm-tools',
    version: '1.0.0',
    description: 'CRM tools for Ratchet',
    queue: 'crm-tools',
  });
  for (const [name, tool] of Object.entries(TOOLS)) {
    service.addEndpoint(name.replace(/\./g, '_'), {
      subject: subjectOf(name),
      handler: (error, msg) => {
        if (!error) void handle(tool, msg);
      },
    });
    // Every instance hears a cancel (no queue group): the one doing the work stops it.
    nc.subscribe(`${subjectOf(name)}.cancel`, { callback: (error, msg) => !error && cancel(msg) });
  }
  console.log(`serving ${Object.keys(TOOLS).join(', ')} on ${subjectOf('<tool>')}`);
  const stop = () =>
    void service
      .stop()
      .then(() => nc.drain())
      .then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
