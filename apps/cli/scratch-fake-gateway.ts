import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { PgThreadStore, openServiceDatabase, connectNats } from '@ratchet/adapters';
import { subjects } from '@ratchet/contracts';
import { demoRunEvents } from './test/fixtures/demo-run.events';

async function main() {
  const db = await openServiceDatabase(process.env.DATABASE_URL!, 'orchestrator', 2);
  const store = new PgThreadStore(db, () => ({ status: 'idle', agent: null, activeRunId: null }));
  const nc = await connectNats({ url: 'nats://127.0.0.1:4222', name: 'fake' });
  const s = subjects(process.env.RATCHET_SUBJECT_PREFIX!);
  const mode = process.env.FAKE_MODE ?? 'ok';
  createServer((req, res) => {
    console.error('fake gateway got', req.method, req.url, req.headers['authorization'], req.headers['idempotency-key']);
    if (mode === 'unauth') { res.writeHead(401, {'content-type':'application/json'}); res.end(JSON.stringify({ error: { code: 'auth.invalid_key', message: 'unknown API key' } })); return; }
    const threadId = `th_${randomUUID().slice(0, 8)}`;
    const runId = `run_${randomUUID().slice(0, 8)}`;
    res.writeHead(202, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ runId, threadId, requestId: String(req.headers['idempotency-key']) }));
    let events = demoRunEvents('demo', threadId, runId);
    if (mode === 'stall') events = events.slice(0, 7);
    void (async () => {
      await new Promise((r) => setTimeout(r, 200));
      // publish half before, half after: feed must catch earlier ones
      await store.transaction((tx) => tx.appendEvents('demo', threadId, 0, events));
      const js = nc.jetstream();
      for (const e of events) { await js.publish(s.events('demo', threadId), JSON.stringify(e), { msgID: e.id }); await new Promise((r) => setTimeout(r, 30)); }
    })();
  }).listen(18080, '127.0.0.1', () => console.error('fake gateway up'));
}
void main();
