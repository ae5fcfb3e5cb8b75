import { useCallback, useEffect, useState } from 'preact/hooks';
import { gateway, ok, type Schemas } from './api';
import { Problem } from './problem';

/* Waitpoints: what runs wait for from the outside world; a runner completes one here (docs/waitpoints.md). */

type Waitpoint = Schemas['ApprovalView'];
type WaitpointStatus = 'pending' | 'completed' | 'failed' | 'expired' | 'cancelled';

/** A new Idempotency-Key: one per completion the operator means, reused when the same one is sent again. */
function newKey(): string {
  return `console-${crypto.randomUUID()}`;
}

/**
 * Completes a waitpoint with a result (JSON, checked against its schema by the service) or reports that
 * the job failed. One Idempotency-Key per intended completion: sent again after a lost answer, it is the
 * same completion, never a second.
 */
function CompleteWaitpoint({ waitpoint, onDone }: { waitpoint: Waitpoint; onDone: () => void }) {
  const [result, setResult] = useState('');
  const [code, setCode] = useState('');
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [key, setKey] = useState(newKey);
  const send = async (body: { result: Schemas['JsonValue'] } | { error: { code: string; message: string } }) => {
    setBusy(true);
    setError(null);
    try {
      await ok(
        gateway.POST('/v1/waitpoints/{id}/complete', {
          params: { path: { id: waitpoint.id }, header: { 'Idempotency-Key': key } },
          body,
        }),
      );
      setKey(newKey());
      onDone();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const complete = () => {
    let parsed: Schemas['JsonValue'];
    try {
      parsed = JSON.parse(result) as Schemas['JsonValue'];
    } catch (err) {
      setError(new Error(`The result is not JSON: ${(err as Error).message}`));
      return;
    }
    void send({ result: parsed });
  };
  const fail = () => {
    if (!code.trim()) {
      setError(new Error('Name what went wrong (a code such as ci.failed) to report a failure.'));
      return;
    }
    void send({ error: { code: code.trim(), message } });
  };
  // Another intended completion (the text changed): a new key, so it is not taken for the last one sent.
  const edit = (set: (v: string) => void) => (e: { currentTarget: { value: string } }) => {
    set(e.currentTarget.value);
    setKey(newKey());
  };
  return (
    <div class="complete-waitpoint" data-waitpoint={waitpoint.id}>
      <label>
        Result (JSON)
        <textarea name="result" rows={3} value={result} onInput={edit(setResult)} placeholder='{"build": 42}' />
      </label>
      <button class="choice complete" disabled={busy} onClick={complete}>
        complete
      </button>
      <span class="or">or the job failed:</span>
      <input name="code" placeholder="code (ci.failed)" value={code} onInput={edit(setCode)} />
      <input name="message" placeholder="what went wrong" value={message} onInput={edit(setMessage)} />
      <button class="choice fail" disabled={busy} onClick={fail}>
        report failure
      </button>
      <Problem error={error} />
    </div>
  );
}

export function Waitpoints() {
  const [status, setStatus] = useState<WaitpointStatus | ''>('pending');
  const [list, setList] = useState<Waitpoint[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = useCallback(() => {
    setError(null);
    ok(gateway.GET('/v1/waitpoints', { params: { query: status ? { status } : {} } })).then(
      (r) => setList(r.waitpoints),
      setError,
    );
  }, [status]);
  useEffect(load, [load]);
  return (
    <section>
      <h2>Waitpoints</h2>
      <p class="hint">
        Runs waiting for the outside world: a build, a payment, a form. Completing one needs the runner role.
      </p>
      <div class="filters">
        <label>
          Status
          <select
            name="status"
            value={status}
            onChange={(e) => setStatus(e.currentTarget.value as WaitpointStatus | '')}
          >
            <option value="pending">pending</option>
            <option value="">any</option>
            <option value="completed">completed</option>
            <option value="failed">failed</option>
            <option value="expired">expired</option>
            <option value="cancelled">cancelled</option>
          </select>
        </label>
      </div>
      <Problem error={error} />
      {list?.length === 0 && <p class="hint">No waitpoints match.</p>}
      {list?.map((w) => (
        <article class="inbox-item waitpoint" key={w.id} data-waitpoint={w.id}>
          <header>
            <strong>{w.id}</strong> {w.tool} · {w.agent} · <a href={`#/threads/${w.threadId}`}>{w.threadId}</a> ·{' '}
            <span class={`status ${w.status}`}>{w.status}</span>
          </header>
          <code class="args">{JSON.stringify(w.args)}</code>
          <div class="meta">
            opened at {w.requestedAt}
            {w.expiresAt ? ` · expires ${w.expiresAt}` : ''}
            {w.waitpoint
              ? ` · on expiry: ${w.waitpoint.onExpiry === 'fail_run' ? 'the run fails' : 'the model is told'}`
              : ''}
          </div>
          {w.waitpoint?.resultSchema && (
            <details class="schema">
              <summary>result schema</summary>
              <code class="args">{JSON.stringify(w.waitpoint.resultSchema)}</code>
            </details>
          )}
          {w.decision && (
            <div class="meta decision">
              {w.decision.decision} by {w.decision.by} at {w.decision.at}
              {w.decision.reason ? `: ${w.decision.reason}` : ''}
            </div>
          )}
          {w.status === 'pending' && <CompleteWaitpoint waitpoint={w} onDone={load} />}
        </article>
      ))}
    </section>
  );
}
