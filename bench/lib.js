// Shared pieces of the benchmarks: a running system, autocannon with a summary, process RSS.
'use strict';
const fs = require('node:fs');
const autocannon = require('autocannon');

/** Runs autocannon and returns req/s and latency percentiles (ms). */
async function load(opts) {
  const result = await autocannon({ connections: 64, duration: 15, ...opts });
  const ok = result['2xx'];
  return {
    requests: result.requests.total,
    ok,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    reqPerSec: Math.round(ok / (result.duration || opts.duration || 15)),
    p50: result.latency.p50,
    p99: result.latency.p99,
  };
}

/** Resident memory of a process in MB (current and peak), read from /proc. */
function rssMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number((status.match(new RegExp(`${key}:\\s+(\\d+)`)) || [])[1] || 0);
  return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
}

function verdict(ok) {
  return ok ? 'PASS' : 'MISS';
}

/** CPU seconds (user + system) a process has used so far, read from /proc: CPU per request stays comparable on a busy machine. */
function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

module.exports = { load, rssMb, verdict, cpuSeconds };
