import { useEffect, useState } from 'preact/hooks';
import { gateway, ok, type Schemas } from './api';
import { Problem } from './problem';

/* Usage: what the tenant's model calls spent, by UTC day, agent and model (docs/flow-control.md#usage). */

type Report = Schemas['UsageReport'];
type Dimension = 'day' | 'month' | 'agent' | 'model' | 'run';

const DIMENSIONS: { name: Dimension; title: string }[] = [
  { name: 'day', title: 'Day' },
  { name: 'month', title: 'Month' },
  { name: 'agent', title: 'Agent' },
  { name: 'model', title: 'Model' },
  { name: 'run', title: 'Run' },
];

/** The first day (UTC) of the current month, as the date input shows it. */
function monthStart(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString().slice(0, 10);
}

const numbers = new Intl.NumberFormat('en');
const costs = new Intl.NumberFormat('en', { minimumFractionDigits: 2, maximumFractionDigits: 6 });

function Figures({ f }: { f: Report['total'] }) {
  return (
    <>
      <td class="num">{numbers.format(f.calls)}</td>
      <td class="num">{numbers.format(f.inputTokens)}</td>
      <td class="num">{numbers.format(f.outputTokens)}</td>
      <td class="num">{numbers.format(f.totalTokens)}</td>
      <td
        class="num"
        title={f.unpricedCalls > 0 ? `${f.unpricedCalls} calls of unpriced models are not in it` : undefined}
      >
        {f.unpricedCalls === f.calls && f.calls > 0 ? '-' : costs.format(f.cost)}
        {f.unpricedCalls > 0 && f.unpricedCalls < f.calls ? '*' : ''}
      </td>
      <td class="num">{f.abortedCalls > 0 ? numbers.format(f.abortedCalls) : '-'}</td>
    </>
  );
}

export function Usage() {
  const [from, setFrom] = useState(monthStart);
  const [to, setTo] = useState('');
  const [by, setBy] = useState<Dimension[]>(['day', 'agent', 'model']);
  const [report, setReport] = useState<Report | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setError(null);
    const query = {
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
      ...(by.length ? { by: by.join(',') } : {}),
    };
    ok(gateway.GET('/v1/usage', { params: { query } })).then(setReport, (err: unknown) => {
      setReport(null);
      setError(err);
    });
  }, [from, to, by]);
  const toggle = (d: Dimension) =>
    setBy((current) =>
      current.includes(d)
        ? current.filter((x) => x !== d)
        : DIMENSIONS.map((x) => x.name).filter((x) => x === d || current.includes(x)),
    );
  const shown = DIMENSIONS.filter((d) => report?.by.includes(d.name));
  return (
    <section>
      <h2>Usage</h2>
      <div class="filters">
        <label>
          From (UTC day)
          <input name="from" type="date" value={from} onChange={(e) => setFrom(e.currentTarget.value)} />
        </label>
        <label>
          To (UTC day, not included)
          <input name="to" type="date" value={to} onChange={(e) => setTo(e.currentTarget.value)} />
        </label>
        <fieldset class="group-by">
          <legend>Group by</legend>
          {DIMENSIONS.map((d) => (
            <label key={d.name}>
              <input
                type="checkbox"
                name={`by-${d.name}`}
                checked={by.includes(d.name)}
                onChange={() => toggle(d.name)}
              />
              {d.title}
            </label>
          ))}
        </fieldset>
      </div>
      <Problem error={error} />
      {report && (
        <table class="usage">
          <thead>
            <tr>
              {shown.map((d) => (
                <th key={d.name}>{d.title}</th>
              ))}
              <th>Calls</th>
              <th>Input tokens</th>
              <th>Output tokens</th>
              <th>Total tokens</th>
              <th title="By the deployment's price table (MODEL_PRICES); - : the model has no price">Cost</th>
              <th title="Calls made whose answer the run did not use; they may have been billed">Aborted</th>
            </tr>
          </thead>
          <tbody>
            {report.groups.map((g, i) => (
              <tr key={i}>
                {shown.map((d) => (
                  <td key={d.name}>
                    {d.name === 'run' && g.runId ? (
                      <code>{g.runId}</code>
                    ) : (
                      (g[d.name === 'run' ? 'runId' : d.name] ?? '-')
                    )}
                  </td>
                ))}
                <Figures f={g} />
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr class="total">
              {shown.length > 0 ? <th colSpan={shown.length}>Total</th> : null}
              <Figures f={report.total} />
            </tr>
          </tfoot>
        </table>
      )}
      {report?.truncated && <p class="hint">More groups than shown; the total counts them all.</p>}
      {report && report.total.calls === 0 && report.total.abortedCalls === 0 && (
        <p class="hint">No model calls in this window.</p>
      )}
      <p class="hint">
        Tokens as the providers reported them, for every answer the log recorded; cost by the deployment's price table,
        in its currency (*: calls of unpriced models are not in it). Days are UTC; the figures outlive the threads they
        came from.
      </p>
    </section>
  );
}
