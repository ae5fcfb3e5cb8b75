import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { credential, follow, gateway, ok, signIn, signOut, type Schemas } from './api';
import { Problem } from './problem';
import { buildTimeline, type CallView, type LogEvent, type RunTimeline } from './timeline';
import { Usage } from './usage';
import { Waitpoints } from './waitpoints';

/* The Ratchet console: threads, runs, a thread's timeline (live), the approvals inbox, waitpoints, the agent catalog, usage. */

type ThreadSummary = Schemas['ThreadList']['threads'][number];
type Approval = Schemas['ApprovalView'];
type Decision = Schemas['ApprovalDecisionBody']['decision'];
type RunStatus = NonNullable<Schemas['RunList']['runs'][number]['status']>;
type RunWaitFilter = 'approval' | 'waitpoint' | 'operator' | 'any';
type WaitKind = NonNullable<Schemas['RunList']['runs'][number]['waiting']>['on'];

/** What a run waits for, in words (a queued run may wait for admission under the tenant's bound). */
const WAIT_NAMES: Record<WaitKind, string> = {
  approval: 'an approval',
  waitpoint: 'a waitpoint',
  operator: 'an operator',
  admission: "room under the tenant's bound",
};

const TRACE_URL_KEY = 'ratchet.traceUrl';

function useRoute(): string {
  const [hash, setHash] = useState(location.hash || '#/threads');
  useEffect(() => {
    const on = () => setHash(location.hash || '#/threads');
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [value, setValue] = useState('');
  const [trace, setTrace] = useState(localStorage.getItem(TRACE_URL_KEY) ?? '');
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    signIn(value);
    try {
      await ok(gateway.GET('/v1/threads', { params: { query: { limit: 1 } } }));
      if (trace) localStorage.setItem(TRACE_URL_KEY, trace);
      else localStorage.removeItem(TRACE_URL_KEY);
      onSignedIn();
    } catch (err) {
      signOut();
      setError(err);
    }
  };
  return (
    <form class="signin" onSubmit={submit}>
      <h1>Ratchet console</h1>
      <label>
        API key or JWT
        <input
          name="credential"
          type="password"
          autocomplete="off"
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
          required
        />
      </label>
      <label>
        Trace UI link (optional; <code>{'{traceId}'}</code> is replaced)
        <input
          name="traceUrl"
          placeholder="http://localhost:16686/trace/{traceId}"
          value={trace}
          onInput={(e) => setTrace(e.currentTarget.value)}
        />
      </label>
      <button type="submit">Sign in</button>
      <Problem error={error} />
      <p class="hint">The console acts with this credential only: its tenant, its roles.</p>
    </form>
  );
}

/**
 * Previous / Next over keyset pages: `cursors` is the stack of the cursors that led to the page shown
 * (empty on the first), `nextCursor` the page's own (absent on the last).
 */
function Paging({
  cursors,
  setCursors,
  nextCursor,
}: {
  cursors: string[];
  setCursors: (cursors: string[]) => void;
  nextCursor: string | undefined;
}) {
  return (
    <div class="paging">
      <button disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
        Previous
      </button>
      <button disabled={!nextCursor} onClick={() => nextCursor && setCursors([...cursors, nextCursor])}>
        Next
      </button>
    </div>
  );
}

function Threads() {
  const [status, setStatus] = useState('');
  const [agent, setAgent] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const [page, setPage] = useState<Schemas['ThreadList'] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const cursor = cursors.at(-1);
  useEffect(() => {
    const query = {
      limit: 20,
      ...(status ? { status: status as 'idle' | 'running' | 'queued' } : {}),
      ...(agent ? { agent } : {}),
      ...(cursor ? { cursor } : {}),
    };
    ok(gateway.GET('/v1/threads', { params: { query } })).then(setPage, setError);
  }, [status, agent, cursor]);
  return (
    <section>
      <h2>Threads</h2>
      <div class="filters">
        <label>
          Status
          <select name="status" value={status} onChange={(e) => (setCursors([]), setStatus(e.currentTarget.value))}>
            <option value="">any</option>
            <option value="running">running</option>
            <option value="queued">queued</option>
            <option value="idle">idle</option>
          </select>
        </label>
        <label>
          Agent
          <input name="agent" value={agent} onChange={(e) => (setCursors([]), setAgent(e.currentTarget.value))} />
        </label>
      </div>
      <Problem error={error} />
      <table>
        <thead>
          <tr>
            <th>Thread</th>
            <th>Status</th>
            <th>Agent</th>
            <th>Runs</th>
            <th>Version</th>
            <th>Updated</th>
          </tr>
        </thead>
        <tbody>
          {page?.threads.map((t) => (
            <tr key={t.threadId}>
              <td>
                <a href={`#/threads/${t.threadId}`}>{t.threadId}</a>
              </td>
              <td>
                <span class={`status ${t.status}`}>{t.status}</span>
              </td>
              <td>{t.agent ?? '-'}</td>
              <td>{t.runCount}</td>
              <td>v{t.version}</td>
              <td>{t.updatedAt ?? '-'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {page && page.threads.length === 0 && <p class="hint">No threads match.</p>}
      <Paging cursors={cursors} setCursors={setCursors} nextCursor={page?.nextCursor} />
    </section>
  );
}

/** Runs search (GET /v1/runs): status, agent, start time and request metadata; keyset pages. */
function Runs() {
  const [status, setStatus] = useState('');
  const [waiting, setWaiting] = useState('');
  const [agent, setAgent] = useState('');
  const [since, setSince] = useState('');
  const [metadata, setMetadata] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const [page, setPage] = useState<Schemas['RunList'] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const cursor = cursors.at(-1);
  useEffect(() => {
    const pairs = metadata
      .split(/[\s,]+/)
      .map((p) => p.trim())
      .filter(Boolean);
    const query = {
      limit: 20,
      ...(status ? { status: status as RunStatus } : {}),
      ...(waiting ? { waiting: waiting as RunWaitFilter } : {}),
      ...(agent ? { agent } : {}),
      ...(since ? { since: new Date(since).toISOString() } : {}),
      ...(pairs.length ? { metadata: pairs } : {}),
      ...(cursor ? { cursor } : {}),
    };
    setError(null);
    ok(gateway.GET('/v1/runs', { params: { query } })).then(setPage, setError);
  }, [status, waiting, agent, since, metadata, cursor]);
  const reset = () => setCursors([]);
  return (
    <section>
      <h2>Runs</h2>
      <div class="filters">
        <label>
          Status
          <select name="status" value={status} onChange={(e) => (reset(), setStatus(e.currentTarget.value))}>
            <option value="">any</option>
            {['queued', 'running', 'completed', 'failed', 'cancelled'].map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Waiting for
          <select name="waiting" value={waiting} onChange={(e) => (reset(), setWaiting(e.currentTarget.value))}>
            <option value="">-</option>
            <option value="any">any wait</option>
            <option value="approval">an approval</option>
            <option value="waitpoint">a waitpoint</option>
            <option value="operator">an operator</option>
          </select>
        </label>
        <label>
          Agent
          <input name="agent" value={agent} onChange={(e) => (reset(), setAgent(e.currentTarget.value))} />
        </label>
        <label>
          Started since
          <input
            name="since"
            type="datetime-local"
            value={since}
            onChange={(e) => (reset(), setSince(e.currentTarget.value))}
          />
        </label>
        <label>
          Metadata (key=value)
          <input
            name="metadata"
            placeholder="customer=c-42"
            value={metadata}
            onChange={(e) => (reset(), setMetadata(e.currentTarget.value))}
          />
        </label>
      </div>
      <Problem error={error} />
      <table>
        <thead>
          <tr>
            <th>Run</th>
            <th>Thread</th>
            <th>Status</th>
            <th>Agent</th>
            <th>Steps</th>
            <th>Started</th>
            <th>Ended</th>
          </tr>
        </thead>
        <tbody>
          {page?.runs.map((r) => (
            <tr key={r.runId} data-run={r.runId}>
              <td>{r.runId}</td>
              <td>
                <a href={`#/threads/${r.threadId}`}>{r.threadId}</a>
              </td>
              <td>
                <span class={`status ${r.status}`}>{r.status}</span>
                {r.waiting && (
                  <span class="waiting" data-waiting={r.waiting.on}>
                    {' '}
                    waits for {r.waiting.for ?? WAIT_NAMES[r.waiting.on]}
                    {r.waiting.until ? ` until ${r.waiting.until}` : ''}
                  </span>
                )}
              </td>
              <td>
                {r.agent} v{r.agentVersion}
              </td>
              <td>{r.steps}</td>
              <td>{r.startedAt ?? '-'}</td>
              <td>{r.endedAt ?? '-'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {page && page.runs.length === 0 && <p class="hint">No runs match.</p>}
      <Paging cursors={cursors} setCursors={setCursors} nextCursor={page?.nextCursor} />
    </section>
  );
}

function Decide({ approval, onDecided }: { approval: Approval; onDecided: () => void }) {
  const [reason, setReason] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const decide = async (decision: Decision) => {
    setBusy(true);
    setError(null);
    try {
      await ok(
        gateway.POST('/v1/approvals/{id}/decision', {
          params: { path: { id: approval.id } },
          body: { decision, reason },
        }),
      );
      onDecided();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const choices: Decision[] = approval.kind === 'tool' ? ['approve', 'reject'] : ['happened', 'retry', 'fail'];
  return (
    <div class="decide" data-approval={approval.id}>
      <input placeholder="reason" value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      {choices.map((c) => (
        <button
          key={c}
          class={`choice ${c}`}
          disabled={busy}
          onClick={() => decide(c)}
          title={approval.choices.includes(c) ? '' : 'Your roles may not decide this; the gateway will say why'}
        >
          {c}
        </button>
      ))}
      <Problem error={error} />
    </div>
  );
}

function CallCard({
  call,
  approvals,
  onDecided,
}: {
  call: CallView;
  approvals: Map<string, Approval>;
  onDecided: () => void;
}) {
  const pending = call.approval && call.approval.status === 'pending' ? approvals.get(call.approval.id) : undefined;
  return (
    <div class={`call ${call.state.replace(/ /g, '-')}`}>
      <div class="call-head">
        <strong>{call.tool}</strong> <span class="state">{call.state}</span>
      </div>
      <code class="args">{JSON.stringify(call.args)}</code>
      <div class="key" title="effect-ledger key">
        key {call.idempotencyKey}
      </div>
      {call.detail && <div class="detail">{call.detail}</div>}
      {call.approval && (
        <div class={`approval ${call.approval.status}`}>
          approval {call.approval.status} (role {call.approval.role}){call.approval.by ? ` by ${call.approval.by}` : ''}
        </div>
      )}
      {pending && <Decide approval={pending} onDecided={onDecided} />}
      {call.state === 'waiting for its waitpoint' && (
        <a class="complete-link" href="#/waitpoints">
          complete it on the waitpoints page
        </a>
      )}
    </div>
  );
}

function RunCard({
  run,
  approvals,
  live,
  onDecided,
}: {
  run: RunTimeline;
  approvals: Map<string, Approval>;
  live: Record<string, string>;
  onDecided: () => void;
}) {
  const traceUrl = localStorage.getItem(TRACE_URL_KEY);
  return (
    <article class={`run ${run.status}`} data-run={run.runId}>
      <header>
        <h3>
          {run.runId} <span class={`status ${run.status}`}>{run.status}</span>
        </h3>
        <div class="meta">
          agent {run.agent ?? '?'} · trace{' '}
          {run.traceId ? (
            traceUrl ? (
              <a href={traceUrl.replace('{traceId}', run.traceId)} target="_blank" rel="noreferrer">
                {run.traceId}
              </a>
            ) : (
              <code class="trace">{run.traceId}</code>
            )
          ) : (
            '-'
          )}
        </div>
      </header>
      {run.resumes.map((r) => (
        <div class="resume highlight" key={r.at}>
          resumed at {r.at} by {r.worker}: {r.reason}
        </div>
      ))}
      {run.steps.map((s) => (
        <section class="step" key={s.step}>
          <h4>Step {s.step}</h4>
          <div class="attempts">
            {s.attempts.map((a) => (
              <span key={a.attempt} class={`attempt${a.retry ? ' retry highlight' : ''}`} title={a.reason ?? ''}>
                model attempt {a.attempt}
                {a.retry ? ` (${a.reason ?? (a.delivery ? `delivery ${a.delivery}` : 'retry')})` : ''}
              </span>
            ))}
          </div>
          {live[`${run.runId}:${s.step}`] !== undefined && !s.answer && (
            <p class="answer live">{live[`${run.runId}:${s.step}`]}</p>
          )}
          {s.answer?.content && <p class="answer">{s.answer.content}</p>}
          {s.calls.length > 0 && (
            <div class="calls">
              {s.calls.map((c) => (
                <CallCard key={c.callId} call={c} approvals={approvals} onDecided={onDecided} />
              ))}
            </div>
          )}
        </section>
      ))}
      {run.outcome !== undefined && <p class="outcome">{run.outcome}</p>}
    </article>
  );
}

function Thread({ threadId }: { threadId: string }) {
  const [events, setEvents] = useState<LogEvent[]>([]);
  const [approvals, setApprovals] = useState<Map<string, Approval>>(new Map());
  const [live, setLive] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(null);
  const [connected, setConnected] = useState(false);
  const loadApprovals = useCallback(() => {
    ok(gateway.GET('/v1/approvals', { params: { query: { threadId, status: 'pending' } } })).then(
      (r) => setApprovals(new Map(r.approvals.map((a) => [a.id, a]))),
      setError,
    );
  }, [threadId]);
  useEffect(() => {
    let stop = () => {};
    let cancelled = false;
    (async () => {
      const all: LogEvent[] = [];
      let after = 0;
      for (;;) {
        const page = await ok(
          gateway.GET('/v1/threads/{threadId}/events', {
            params: { path: { threadId }, query: { after, limit: 1000 } },
          }),
        );
        all.push(...(page.events as LogEvent[]));
        after = page.nextAfter;
        if (!page.hasMore) break;
      }
      if (cancelled) return;
      setEvents(all);
      loadApprovals();
      stop = follow(threadId, after, {
        onEvent: (e) => {
          setConnected(true);
          const ev = e as LogEvent;
          setEvents((prev) => (prev.some((p) => p.version === ev.version) ? prev : [...prev, ev]));
          if (ev.type.startsWith('approval.')) loadApprovals();
        },
        onToken: (t) => {
          setConnected(true);
          setLive((prev) => ({
            ...prev,
            [`${t.runId}:${t.step}`]: (prev[`${t.runId}:${t.step}`] ?? '') + (t.text ?? ''),
          }));
        },
        onReset: (r) => setLive((prev) => ({ ...prev, [`${r.runId}:${r.step}`]: '' })),
        onError: (err) => (setConnected(false), setError(err)),
      });
      setConnected(true);
    })().catch(setError);
    return () => {
      cancelled = true;
      stop();
    };
  }, [threadId, loadApprovals]);
  const runs = buildTimeline(events);
  return (
    <section>
      <h2>
        Thread {threadId} <span class={`live-dot ${connected ? 'on' : 'off'}`}>{connected ? 'live' : 'offline'}</span>
      </h2>
      <p class="hint">{events.length} events · newest run last</p>
      <Problem error={error} />
      {runs.map((r) => (
        <RunCard key={r.runId} run={r} approvals={approvals} live={live} onDecided={loadApprovals} />
      ))}
    </section>
  );
}

function Inbox() {
  const [status, setStatus] = useState('pending');
  const [list, setList] = useState<Approval[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = useCallback(() => {
    // What waits for a human: waitpoints wait for the outside world and have their own page.
    const query = { kind: 'tool,escalation', ...(status ? { status: status as Approval['status'] } : {}) };
    ok(gateway.GET('/v1/approvals', { params: { query } })).then((r) => setList(r.approvals), setError);
  }, [status]);
  useEffect(load, [load]);
  return (
    <section>
      <h2>Approvals and escalations</h2>
      <div class="filters">
        <label>
          Status
          <select name="status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="pending">pending</option>
            <option value="">any</option>
            <option value="granted">granted</option>
            <option value="rejected">rejected</option>
            <option value="expired">expired</option>
            <option value="resolved">resolved</option>
            <option value="cancelled">cancelled</option>
          </select>
        </label>
      </div>
      <Problem error={error} />
      {list?.length === 0 && <p class="hint">Nothing waits for a human.</p>}
      {list?.map((a) => (
        <article class={`inbox-item ${a.kind}`} key={a.id} data-approval={a.id}>
          <header>
            <strong>{a.kind === 'escalation' ? 'Uncertain effect' : 'Tool call'}</strong> {a.tool} · {a.agent} ·{' '}
            <a href={`#/threads/${a.threadId}`}>{a.threadId}</a> · <span class={`status ${a.status}`}>{a.status}</span>
          </header>
          <code class="args">{JSON.stringify(a.args)}</code>
          <div class="meta">
            role {a.role}
            {a.fourEyes ? ' · four eyes' : ''} · asked by {a.requestedBy} at {a.requestedAt}
            {a.idempotencyKey ? ` · key ${a.idempotencyKey}` : ''}
            {a.reason ? ` · ${a.reason}` : ''}
          </div>
          {a.decision && (
            <div class="meta">
              {a.decision.decision} by {a.decision.by}
              {a.decision.reason ? `: ${a.decision.reason}` : ''}
            </div>
          )}
          {a.status === 'pending' && <Decide approval={a} onDecided={load} />}
        </article>
      ))}
    </section>
  );
}

interface Agent {
  name: string;
  version: number;
  scope?: string;
  digest?: string;
  definition?: { model?: { provider?: string; name?: string; model?: string }; tools?: { name: string }[] };
}

function Agents() {
  const [agents, setAgents] = useState<Agent[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    ok(gateway.GET('/v1/agents')).then((r) => setAgents(r.agents as Agent[]), setError);
  }, []);
  return (
    <section>
      <h2>Agents</h2>
      <Problem error={error} />
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Version</th>
            <th>Scope</th>
            <th>Model</th>
            <th>Tools</th>
          </tr>
        </thead>
        <tbody>
          {agents?.map((a) => (
            <tr key={`${a.name}@${a.version}`}>
              <td>{a.name}</td>
              <td>v{a.version}</td>
              <td>{a.scope ?? '-'}</td>
              <td>
                {a.definition?.model
                  ? `${a.definition.model.provider ?? ''} ${a.definition.model.model ?? a.definition.model.name ?? ''}`
                  : '-'}
              </td>
              <td>{a.definition?.tools?.map((t) => t.name).join(', ') ?? '-'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function App() {
  const route = useRoute();
  const [signedIn, setSignedIn] = useState(credential() !== null);
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  const thread = /^#\/threads\/([A-Za-z0-9_-]+)$/.exec(route)?.[1];
  const page = thread ? (
    <Thread threadId={thread} />
  ) : route.startsWith('#/approvals') ? (
    <Inbox />
  ) : route.startsWith('#/waitpoints') ? (
    <Waitpoints />
  ) : route.startsWith('#/agents') ? (
    <Agents />
  ) : route.startsWith('#/runs') ? (
    <Runs />
  ) : route.startsWith('#/usage') ? (
    <Usage />
  ) : (
    <Threads />
  );
  return (
    <>
      <nav>
        <strong>Ratchet</strong>
        <a href="#/threads" class={route.startsWith('#/threads') ? 'active' : ''}>
          Threads
        </a>
        <a href="#/runs" class={route.startsWith('#/runs') ? 'active' : ''}>
          Runs
        </a>
        <a href="#/approvals" class={route.startsWith('#/approvals') ? 'active' : ''}>
          Approvals
        </a>
        <a href="#/waitpoints" class={route.startsWith('#/waitpoints') ? 'active' : ''}>
          Waitpoints
        </a>
        <a href="#/agents" class={route.startsWith('#/agents') ? 'active' : ''}>
          Agents
        </a>
        <a href="#/usage" class={route.startsWith('#/usage') ? 'active' : ''}>
          Usage
        </a>
        <button class="signout" onClick={() => (signOut(), setSignedIn(false))}>
          Sign out
        </button>
      </nav>
      <main>{page}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
