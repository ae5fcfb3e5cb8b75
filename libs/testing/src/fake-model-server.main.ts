import { FakeModelServer } from './fake-model-server';

/**
 * The fake model server as a process of its own (benchmarks: thousands of connections should not share
 * the event loop of the process that measures). Prints `listening <url>` once up; `GET /_stats` answers
 * the counts as JSON. Usage: node scripts/run-ts.mjs libs/testing/src/fake-model-server.main.ts [port]
 */
const server = new FakeModelServer();
server.start(Number(process.argv[2] ?? 0)).then(
  (url) => process.stdout.write(`listening ${url}\n`),
  (error: unknown) => {
    process.stderr.write(`fake model server failed: ${String(error)}\n`);
    process.exit(1);
  },
);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => void server.stop().then(() => process.exit(0)));
