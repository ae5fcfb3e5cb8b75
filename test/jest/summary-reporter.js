// Prints one plain closing line ("tests: N passed, N failed, N skipped") that any CI can read.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const line = `tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests} skipped`;
    process.stdout.write(`\n${line}\n`);
  }
}
module.exports = SummaryReporter;
