// Prints the closing lines of a run, plain text whatever the runner: "N passed, N failed, N skipped",
// then every skipped leg with its reason, one line each, so a green run says what did not run.
//
// A leg that cannot run here is written as a skipped test or describe whose title carries the
// reason: `test.skip('mongo adapter (skipped: MONGODB_URI is unset)', ...)`. A skip without a
// reason fails the run: nothing may be left out silently. Tests left out by `-t` are only counted.
'use strict';
const path = require('node:path');

const MARKER = /\bskipped: (.+?)\)?$/;

/** The skipped legs of a run: one per skipped test or describe that carries a reason. */
function skippedLegs(results, rootDir) {
  const legs = new Map();
  const unexplained = [];
  for (const file of results.testResults) {
    const rel = path.relative(rootDir, file.testFilePath);
    for (const t of file.testResults) {
      if (t.status !== 'pending' && t.status !== 'todo') continue;
      const titles = [...t.ancestorTitles, t.title];
      const at = titles.findIndex((title) => MARKER.test(title));
      if (at < 0) {
        unexplained.push(`${rel} › ${titles.join(' › ')}${t.status === 'todo' ? ' (todo)' : ''}`);
        continue;
      }
      const key = `${rel} › ${titles.slice(0, at + 1).map((title) => title.replace(/\s*\(?skipped: .*$/, '')).join(' › ')}`;
      const leg = legs.get(key) ?? { reason: MARKER.exec(titles[at])[1], tests: 0 };
      leg.tests++;
      legs.set(key, leg);
    }
  }
  return { legs, unexplained };
}

class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    // With -t (or a focused test) jest reports every test it did not select as skipped.
    this.selecting = Boolean(globalConfig.testNamePattern);
    this.error = undefined;
  }

  onRunComplete(_contexts, results) {
    const { legs, unexplained } = skippedLegs(results, this.rootDir);
    const out = [`\ntests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests + results.numTodoTests} skipped`];
    out.push(`skipped legs: ${legs.size}`);
    for (const [leg, { reason, tests }] of legs) out.push(`  ${leg}${tests > 1 ? ` (${tests} tests)` : ''}: ${reason}`);
    if (unexplained.length && this.selecting) out.push(`deselected by -t: ${unexplained.length} tests`);
    else if (unexplained.length) {
      out.push(`skipped without a reason: ${unexplained.length} (put "skipped: <reason>" in the test's or describe's title)`);
      for (const t of unexplained) out.push(`  ${t}`);
      this.error = new Error(`${unexplained.length} tests skipped without a reason`);
    }
    process.stdout.write(out.join('\n') + '\n');
  }

  /** Jest fails the run when a reporter has an error. */
  getLastError() {
    return this.error;
  }
}

module.exports = SummaryReporter;
module.exports.skippedLegs = skippedLegs;
