/** Median, p99 and friends of a list of durations (ms). */
export interface Summary {
  n: number;
  median: number;
  p99: number;
  min: number;
  max: number;
}

export function summarize(samples: number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * (s.length - 1)))] ?? NaN;
  return { n: s.length, median: at(0.5), p99: at(0.99), min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN };
}

export function table(rows: Array<Record<string, string | number>>): string {
  if (rows.length === 0) return '';
  const cols = Object.keys(rows[0] ?? {});
  const cell = (v: string | number) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : v);
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c] ?? '').length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ');
  return [
    line(cols),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(cols.map((c) => cell(r[c] ?? '')))),
  ].join('\n');
}

/** One published figure: its median over repeats, every repeat's value, and whether lower is better. */
export interface Figure {
  value: number;
  values: number[];
  unit: string;
  better: 'lower' | 'higher';
  target?: string;
}

export function median(values: number[]): number {
  return summarize(values).median;
}

export function spread(values: number[]): string {
  const s = [...values].sort((a, b) => a - b);
  const fmt = (v: number | undefined) => (v === undefined ? '?' : v >= 100 ? v.toFixed(0) : v.toFixed(2));
  return `${fmt(s[0])}–${fmt(s[s.length - 1])}`;
}

interface FigureSource {
  floor?: Array<{ perStepMs: Summary; throughput: Array<{ concurrency: number; stepsPerSecond: number }> }>;
  agentLoopLedger?: FigureSource['agentLoop'];
  agentLoop?: Array<{
    perStepClientMs: Summary;
    perStepEventMs: Summary;
    throughput: Array<{ concurrency: number; stepsPerSecond: number }>;
    pgCommitsPerStep: number;
    jsPublishesPerStep: number;
    cpuMsPerStep?: Record<string, number>;
    peakMemoryMiB: Record<string, number>;
  }>;
  resume?: Array<Array<{ events: number; withProjection: Summary; withoutProjection: Summary }>>;
  resumeFloor?: Summary[];
  core?: {
    decide: Summary;
    appends: Array<{ appendsPerSecond: number; concurrency: number }>;
    seal?: { sealUs: number; openUs: number };
  };
  slowModel?: Array<
    Array<{
      runs: number;
      limited?: boolean;
      latencyMs: number;
      completed: number;
      modelCallsPerStep: number;
      overheadPerStepMs: Summary;
      overheadPerStepFromStartMs: Summary;
      peakMemoryMiB: Record<string, number>;
      postgresConnections: number;
    }>
  >;
  firstToken?: Array<{ runs: number; firstTokenMs: Summary; fromRequestMs: Summary; tokensPerRun: number }>;
  tenantFlood?: Array<{
    runs: number;
    flood: number;
    cases: Array<{ case: string; latency: Summary; floodEndedBeforeA: number; floodSeconds: number }>;
  }>;
  admission?: Array<
    Array<{ concurrency: number; cases: Array<{ case: string; perSecond: number; latency: Summary }> }>
  >;
}

/** Flattens a bench output into named figures (median over repeats), the unit of comparison. */
export function figuresOf(out: FigureSource): Record<string, Figure> {
  const figs: Record<string, Figure> = {};
  const add = (name: string, values: number[], unit: string, better: Figure['better'], target?: string) => {
    const clean = values.filter((v) => Number.isFinite(v));
    if (clean.length === 0) return;
    figs[name] = { value: median(clean), values: clean, unit, better, ...(target ? { target } : {}) };
  };
  const floor = out.floor ?? [];
  if (floor.length > 0) {
    add(
      'floor per-step, median (two single-row commits)',
      floor.map((f) => f.perStepMs.median),
      'ms',
      'lower',
    );
    for (const c of floor[0]?.throughput.map((t) => t.concurrency) ?? [])
      add(
        `floor throughput, ${c} concurrent run(s)`,
        floor.map((f) => f.throughput.find((t) => t.concurrency === c)?.stepsPerSecond ?? NaN),
        'steps/s',
        'higher',
      );
  }
  loopFigures(add, 'agent-loop', out.agentLoop ?? [], floor, { perStep: 2.5, at64: 0.4, at16: 0.3 });
  loopFigures(add, 'agent-loop (ledger)', out.agentLoopLedger ?? [], floor, { perStep: 3.0, at64: 0.27, at16: 0.2 });
  const rs = out.resume ?? [];
  if ((out.resumeFloor ?? []).length > 0)
    add(
      'floor load-and-step, median (read a thread, append + update in one commit)',
      (out.resumeFloor ?? []).map((f) => f.median),
      'ms',
      'lower',
    );
  if (rs.length > 0) {
    for (const n of rs[0]?.map((f) => f.events) ?? []) {
      const at = (pick: (f: { withProjection: Summary; withoutProjection: Summary }) => number) =>
        rs.map((r) => {
          const f = r.find((x) => x.events === n);
          return f ? pick(f) : NaN;
        });
      add(
        `resume cost, ${n} prior events (projection)`,
        at((f) => f.withProjection.median),
        'ms',
        'lower',
        n === 1000 ? '< 10' : n === 10_000 ? '≤ 1.5 × at 10' : undefined,
      );
      const floors = out.resumeFloor ?? [];
      if (floors.length > 0)
        add(
          `resume cost, ${n} prior events (projection), × floor load-and-step`,
          rs.map((r, i) => {
            const f = r.find((x) => x.events === n);
            const floor = floors[i];
            return f && floor ? f.withProjection.median / floor.median : NaN;
          }),
          '×',
          'lower',
          n === 10 || n === 10_000 ? '≤ 2' : undefined,
        );
      add(
        `resume cost, ${n} prior events (no projection)`,
        at((f) => f.withoutProjection.median),
        'ms',
        'lower',
      );
    }
  }
  const sm = out.slowModel ?? [];
  for (const n of sm[0]?.map((f) => f.runs) ?? []) {
    const of = <T>(pick: (f: NonNullable<FigureSource['slowModel']>[number][number]) => T) =>
      sm.map((round) => {
        const f = round.find((x) => x.runs === n);
        return f ? pick(f) : (NaN as T);
      });
    const l = sm[0]?.find((f) => f.runs === n)?.latencyMs ?? 0;
    const limited = sm[0]?.find((f) => f.runs === n)?.limited ? ', under a provider limit' : '';
    const name = `slow-model (${n} runs in flight, ${l / 1000} s model${limited})`;
    add(
      `${name}: runs completed`,
      of((f) => f.completed),
      'runs',
      'higher',
      `${n}`,
    );
    add(
      `${name}: model calls per step`,
      of((f) => f.modelCallsPerStep),
      'calls',
      'lower',
      '1.00',
    );
    add(
      `${name}: overhead per step, p50`,
      of((f) => f.overheadPerStepMs.median),
      'ms',
      'lower',
    );
    add(
      `${name}: overhead per step, p99`,
      of((f) => f.overheadPerStepMs.p99),
      'ms',
      'lower',
      '≤ 20',
    );
    add(
      `${name}: overhead per step from run start, p50`,
      of((f) => f.overheadPerStepFromStartMs.median),
      'ms',
      'lower',
    );
    add(
      `${name}: overhead per step from run start, p99`,
      of((f) => f.overheadPerStepFromStartMs.p99),
      'ms',
      'lower',
    );
    for (const svc of Object.keys(sm[0]?.find((f) => f.runs === n)?.peakMemoryMiB ?? {}))
      add(
        `${name}: peak memory (VmHWM), ${svc}`,
        of((f) => f.peakMemoryMiB[svc] ?? NaN),
        'MiB',
        'lower',
        svc.startsWith('orchestrator') ? '≤ 1024' : undefined,
      );
    add(
      `${name}: Postgres connections`,
      of((f) => f.postgresConnections),
      'connections',
      'lower',
    );
  }
  const adm = out.admission ?? [];
  for (const round of adm[0] ?? [])
    for (const c of round.cases) {
      const of = (pick: (x: { perSecond: number; latency: Summary }) => number) =>
        adm.map((r) => {
          const x = r.find((y) => y.concurrency === round.concurrency)?.cases.find((y) => y.case === c.case);
          return x ? pick(x) : NaN;
        });
      const name = `admission, one tenant, C=${round.concurrency}, ${c.case}`;
      add(
        `${name}: run requests admitted`,
        of((x) => x.perSecond),
        '/s',
        'higher',
      );
      add(
        `${name}: p50`,
        of((x) => x.latency.median),
        'ms',
        'lower',
      );
      add(
        `${name}: p99`,
        of((x) => x.latency.p99),
        'ms',
        'lower',
      );
    }
  const tf = out.tenantFlood ?? [];
  for (const c of tf[0]?.cases ?? []) {
    const of = (pick: (x: NonNullable<FigureSource['tenantFlood']>[number]['cases'][number]) => number) =>
      tf.map((r) => {
        const x = r.cases.find((y) => y.case === c.case);
        return x ? pick(x) : NaN;
      });
    const name = `tenant-flood: A's runs, ${c.case}${c.case === 'alone' ? '' : ` (B: ${tf[0]?.flood} requests)`}`;
    add(
      `${name}: p99`,
      of((x) => x.latency.p99),
      'ms',
      'lower',
    );
    add(
      `${name}: p50`,
      of((x) => x.latency.median),
      'ms',
      'lower',
    );
    if (c.case !== 'alone') {
      add(
        `${name}: B's runs ended before A's last`,
        of((x) => x.floodEndedBeforeA),
        'runs',
        'lower',
      );
      add(
        `${name}: B's flood took`,
        of((x) => x.floodSeconds),
        's',
        'lower',
      );
    }
  }
  const ft = out.firstToken ?? [];
  if (ft.length > 0) {
    const name = 'first-token (model server → gateway SSE client)';
    add(
      `${name}: p50`,
      ft.map((f) => f.firstTokenMs.median),
      'ms',
      'lower',
    );
    add(
      `${name}: p99`,
      ft.map((f) => f.firstTokenMs.p99),
      'ms',
      'lower',
    );
    add(
      'first-token (request published → SSE client, 200 ms model): p50',
      ft.map((f) => f.fromRequestMs.median),
      'ms',
      'lower',
    );
    add(
      'first-token: token frames per run (15 words, 20 ms apart; pieces gather for 20 ms)',
      ft.map((f) => f.tokensPerRun),
      'frames',
      'higher',
    );
  }
  if (out.core) {
    add('decide (pure), median per decision', [out.core.decide.median], 'ms', 'lower');
    for (const a of out.core.appends) {
      add(`durable appends, ${a.concurrency} writer(s)`, [a.appendsPerSecond], 'appends/s', 'higher');
    }
    if (out.core.seal) {
      add('content at rest: seal, CPU per event of a log', [out.core.seal.sealUs], 'µs', 'lower');
      add('content at rest: open, CPU per event of a log', [out.core.seal.openUs], 'µs', 'lower');
    }
  }
  return figs;
}

type Add = (name: string, values: number[], unit: string, better: Figure['better'], target?: string) => void;
type LoopRun = NonNullable<FigureSource['agentLoop']>[number];
type FloorRun = NonNullable<FigureSource['floor']>[number];

/** The agent-loop figures of one variant, and each as a ratio to the floor measured in the same repeat. */
function loopFigures(
  add: Add,
  name: string,
  al: LoopRun[],
  floor: FloorRun[],
  targets: { perStep: number; at64: number; at16: number },
): void {
  if (al.length === 0) return;
  const ratio = (pick: (r: LoopRun) => number, pickFloor: (f: FloorRun) => number) =>
    al.map((r, i) => (floor[i] ? pick(r) / pickFloor(floor[i]!) : NaN));
  add(
    `${name} per-step overhead, median (client)`,
    al.map((r) => r.perStepClientMs.median),
    'ms',
    'lower',
  );
  add(
    `${name} per-step overhead, median, × floor`,
    ratio(
      (r) => r.perStepClientMs.median,
      (f) => f.perStepMs.median,
    ),
    '×',
    'lower',
    `≤ ${targets.perStep}`,
  );
  add(
    `${name} per-step overhead, p99 (client)`,
    al.map((r) => r.perStepClientMs.p99),
    'ms',
    'lower',
  );
  add(
    `${name} per-step overhead, median (event timestamps)`,
    al.map((r) => r.perStepEventMs.median),
    'ms',
    'lower',
  );
  for (const c of al[0]?.throughput.map((t) => t.concurrency) ?? []) {
    const at = (r: { throughput: Array<{ concurrency: number; stepsPerSecond: number }> }) =>
      r.throughput.find((t) => t.concurrency === c)?.stepsPerSecond ?? NaN;
    add(`${name} throughput, ${c} concurrent run(s)`, al.map(at), 'steps/s', 'higher');
    const target = c === 64 ? targets.at64 : c === 16 ? targets.at16 : undefined;
    add(
      `${name} throughput, ${c} concurrent run(s), × floor`,
      ratio(at, at),
      '×',
      'higher',
      target === undefined ? undefined : `≥ ${target}`,
    );
  }
  add(
    `${name}: Postgres commits per step`,
    al.map((r) => r.pgCommitsPerStep),
    'commits',
    'lower',
  );
  add(
    `${name}: JetStream publishes per step`,
    al.map((r) => r.jsPublishesPerStep),
    'msgs',
    'lower',
  );
  const top = Math.max(...(al[0]?.throughput.map((t) => t.concurrency) ?? [0]));
  for (const who of Object.keys(al[0]?.cpuMsPerStep ?? {}))
    add(
      `${name}: CPU per step at ${top} runs, ${who === 'machine' ? 'whole machine' : who}`,
      al.map((r) => r.cpuMsPerStep?.[who] ?? NaN),
      'ms',
      'lower',
    );
  for (const svc of Object.keys(al[0]?.peakMemoryMiB ?? {}))
    add(
      `${name}: peak memory (VmHWM), ${svc}`,
      al.map((r) => r.peakMemoryMiB[svc] ?? NaN),
      'MiB',
      'lower',
    );
}
