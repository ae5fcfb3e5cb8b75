import { runSoak } from '../soak/soak';

/*
 * The CI-sized soak: three seeds of ~20 s of requests each, over the HTTP API with API keys, every scenario
 * a deployment mixes (remote and MCP tools, approvals granted, rejected and left to expire, runs queued,
 * interrupted and cancelled, an OpenAI-compatible model that rate-limits), while services and tool
 * processes are SIGKILLed and nats-server and Postgres are crashed and restarted. `npm run soak` is the long
 * form. SOAK_SEED replays a schedule (as far as timing lets it), SOAK_SECONDS sets the window.
 */
const first = Number(process.env['SOAK_SEED'] ?? Date.now() % 1_000_000);
const seconds = Number(process.env['SOAK_SECONDS'] ?? 20);

describe('soak', () => {
  it.each([0, 1, 2])(
    'seed +%i: every run ends, one run per request, no effect twice, every invariant holds',
    async (i) => {
      const seed = first + i;
      const report = await runSoak({ seed, seconds, log: () => undefined });
      process.stdout.write(
        `soak seed ${seed}: ${report.requests} requests ${JSON.stringify(report.scenarios)}, faults ${JSON.stringify(report.actions)}, ` +
          `decisions ${JSON.stringify(report.decisions)}, ${report.effects} effects, ${report.resent} resent, ${report.seconds} s\n`,
      );
      expect(report.actions['restart postgres']).toBeGreaterThan(0);
      expect(report.actions['restart nats-server']).toBeGreaterThan(0);
      expect(report.invariants.filter((x) => !x.ok)).toEqual([]);
      expect(report.ok).toBe(true);
    },
    600_000,
  );
});
