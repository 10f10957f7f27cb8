// Reading a running process's Prometheus metrics (the metrics port of its ready line): how a test
// counts what a real process did (the RPCs it served, the store operations it ran) without reaching
// into it.
import type { RunningProcess } from './processes';

/** The sum of the samples of metric `name` whose labels include every one of `labels` (0: none). */
export async function metricSum(proc: Pick<RunningProcess, 'ready'>, name: string, labels: Record<string, string> = {}): Promise<number> {
  const port = proc.ready.metricsPort;
  if (typeof port !== 'number') throw new Error('the process did not report a metricsPort in its ready line');
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.startsWith(`${name}{`) ? line.slice(name.length, line.lastIndexOf('}') + 1) : '';
    if (wanted.every((w) => labelText.includes(w))) sum += Number(line.split(' ').at(-1));
  }
  return sum;
}
