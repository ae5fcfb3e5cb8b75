// Prints the slowest suites, then one plain closing line ("tests: N passed, N failed, N skipped") that
// any CI can read.
const path = require('node:path');

const SLOWEST = 12;

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const suites = results.testResults
      .map((r) => ({ file: path.relative(process.cwd(), r.testFilePath), ms: r.perfStats.end - r.perfStats.start }))
      .filter((s) => s.ms > 0)
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SLOWEST);
    if (suites.length > 0) {
      const lines = suites.map((s) => `  ${(s.ms / 1000).toFixed(1).padStart(7)} s  ${s.file}`);
      process.stdout.write(`\nslowest suites:\n${lines.join('\n')}\n`);
    }
    const line = `tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests} skipped`;
    process.stdout.write(`\n${line}\n`);
  }
}
module.exports = SummaryReporter;
