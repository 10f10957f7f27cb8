// Prints one plain closing line ("N passed, N failed, N skipped") that CI can read whatever the runner.
'use strict';
class SummaryReporter {
  onRunComplete(_contexts, results) {
    process.stdout.write(`\ntests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests + results.numTodoTests} skipped\n`);
  }
}
module.exports = SummaryReporter;
