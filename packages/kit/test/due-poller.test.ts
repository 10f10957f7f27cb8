// The kit's due poller against an in-memory table of due rows, on jest's fake clock (timers and Date),
// so "handled at 3 s" is exact and no test sleeps.
import { startDuePoller, type DuePollerOptions } from '../src/due-poller';
import { semaphore } from '../src/semaphore';

const T0 = Date.parse('2026-01-01T00:00:00Z');

interface Row {
  id: string;
  dueAt: number;
  leaseUntil?: number;
  done?: boolean;
}

/** A table of due rows with the store's claim/nextDueAt semantics (lease skipped, leased rows still count as next). */
function dueTable(rows: Row[]) {
  const table = {
    rows,
    claims: [] as Array<{ at: number; got: string[] }>,
    async claim(now: Date, leaseMs: number, limit: number): Promise<Row[]> {
      const t = now.getTime();
      const got = rows
        .filter((r) => !r.done && r.dueAt <= t && !(r.leaseUntil && r.leaseUntil > t))
        .sort((a, b) => a.dueAt - b.dueAt)
        .slice(0, limit);
      for (const r of got) r.leaseUntil = t + leaseMs;
      table.claims.push({ at: t - T0, got: got.map((r) => r.id) });
      return got;
    },
    async nextDueAt(): Promise<Date | null> {
      const open = rows.filter((r) => !r.done).map((r) => r.dueAt);
      return open.length ? new Date(Math.min(...open)) : null;
    },
  };
  return table;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const row = (id: string, dueInMs: number): Row => ({ id, dueAt: T0 + dueInMs });

function harness(rows: Row[], over: Partial<DuePollerOptions<Row>> & { workMs?: (r: Row) => number } = {}) {
  const table = dueTable(rows);
  const handled: Array<{ id: string; at: number }> = [];
  const logger = { warn: jest.fn(), error: jest.fn() };
  let active = 0;
  let maxActive = 0;
  const { workMs, ...rest } = over;
  const poller = startDuePoller<Row>({
    name: 'test',
    claim: table.claim,
    nextDueAt: table.nextDueAt,
    leaseMs: 60_000,
    concurrency: 4,
    now: () => new Date(),
    logger,
    async handle(r) {
      active++;
      maxActive = Math.max(maxActive, active);
      try {
        const ms = workMs?.(r) ?? 0;
        if (ms) await sleep(ms);
        r.done = true;
        handled.push({ id: r.id, at: Date.now() - T0 });
      } finally {
        active--;
      }
    },
    ...rest,
  });
  return { table, handled, logger, poller, maxActive: () => maxActive, ids: () => handled.map((h) => h.id) };
}

describe('startDuePoller', () => {
  beforeEach(() => jest.useFakeTimers({ now: T0 }));
  afterEach(() => jest.useRealTimers());

  it('claims the rows due at start and re-arms the timer at the next due time', async () => {
    const h = harness([row('late', 3_000), row('overdue', -1_000)]);
    await jest.advanceTimersByTimeAsync(0);
    expect(h.handled).toEqual([{ id: 'overdue', at: 0 }]);
    await jest.advanceTimersByTimeAsync(2_999);
    expect(h.ids()).toEqual(['overdue']);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.handled).toEqual([{ id: 'overdue', at: 0 }, { id: 'late', at: 3_000 }]);
    await h.poller.stop();
  });

  it('with nothing due sooner, looks at the store every 5 s (rows other replicas made due)', async () => {
    const h = harness([row('far', 60_000)]);
    await jest.advanceTimersByTimeAsync(15_000);
    expect(h.table.claims.map((c) => c.at)).toEqual([0, 5_000, 10_000, 15_000]);
    await h.poller.stop();
  });

  it('wake(earlier) re-arms the timer earlier; a later wake does not put it off', async () => {
    const h = harness([row('b', 4_000)]);
    await jest.advanceTimersByTimeAsync(0);
    h.table.rows.push(row('c', 1_000));
    h.poller.wake(new Date(T0 + 1_000));
    h.poller.wake(new Date(T0 + 4_500));
    await jest.advanceTimersByTimeAsync(999);
    expect(h.ids()).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.handled).toEqual([{ id: 'c', at: 1_000 }]);
    await jest.advanceTimersByTimeAsync(3_000);
    expect(h.handled).toEqual([{ id: 'c', at: 1_000 }, { id: 'b', at: 4_000 }]);
    await h.poller.stop();
  });

  it('works at most `concurrency` rows at once, in due order', async () => {
    const rows = Array.from({ length: 10 }, (_, i) => row(`r${i}`, -100 + i));
    const h = harness(rows, { concurrency: 3, workMs: () => 100 });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(h.ids()).toEqual(rows.map((r) => r.id));
    expect(h.maxActive()).toBe(3);
    await h.poller.stop();
  });

  it('a shared semaphore bounds the poller together with the other work that holds it', async () => {
    const shared = semaphore(2);
    let releaseOther = () => {};
    void shared(() => new Promise<void>((resolve) => (releaseOther = resolve)));
    const h = harness([row('a', 0), row('b', 0), row('c', 0)], { concurrency: shared, workMs: () => 100, awaitLastBatch: false });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(h.maxActive()).toBe(1);
    expect(h.ids()).toEqual(['a', 'b', 'c']);
    releaseOther();
    await h.poller.stop();
  });

  it('works each full batch before claiming the next, so no lease lapses in a queue', async () => {
    const h = harness([row('a', 0), row('b', 0), row('c', 0), row('d', 0), row('e', 0)], { claimBatch: 2, workMs: () => 10 });
    await jest.advanceTimersByTimeAsync(100);
    expect(h.table.claims.slice(0, 3)).toEqual([
      { at: 0, got: ['a', 'b'] },
      { at: 10, got: ['c', 'd'] },
      { at: 20, got: ['e'] },
    ]);
    expect(h.ids()).toEqual(['a', 'b', 'c', 'd', 'e']);
    await h.poller.stop();
  });

  it('a failing row is logged and the loop goes on', async () => {
    const h = harness([row('bad', 0), row('good', 0), row('later', 1_000)], {
      async handle(r) {
        if (r.id === 'bad') throw new Error('boom');
        r.done = true;
        h.handled.push({ id: r.id, at: Date.now() - T0 });
      },
    });
    await jest.advanceTimersByTimeAsync(0);
    expect(h.logger.warn).toHaveBeenCalledWith({ poller: 'test', err: 'boom' }, 'due row failed; retried when its lease lapses');
    expect(h.ids()).toEqual(['good']);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(h.ids()).toEqual(['good', 'later']);
    await h.poller.stop();
  });

  it('a failing pass is logged and tried again a second later', async () => {
    let fails = 1;
    const table = dueTable([row('a', 0)]);
    const logger = { warn: jest.fn(), error: jest.fn() };
    const handled: string[] = [];
    const poller = startDuePoller<Row>({
      name: 'test',
      claim: async (...args) => {
        if (fails-- > 0) throw new Error('store away');
        return table.claim(...args);
      },
      nextDueAt: table.nextDueAt,
      leaseMs: 60_000,
      concurrency: 1,
      now: () => new Date(),
      logger,
      handle: async (r) => {
        r.done = true;
        handled.push(`${r.id}@${Date.now() - T0}`);
      },
    });
    await jest.advanceTimersByTimeAsync(0);
    expect(logger.error).toHaveBeenCalledWith({ poller: 'test', err: 'store away' }, 'due poller pass failed; trying again');
    expect(handled).toEqual([]);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(handled).toEqual(['a@1000']);
    await poller.stop();
  });

  it('log fields and messages can be the caller\'s own (messaging keeps its wording)', async () => {
    const h = harness([row('bad', 0)], {
      logFields: {},
      rowLogFields: (r) => ({ runId: r.id }),
      messages: { rowFailed: 'resuming a waiting run failed; retried when its lease lapses' },
      handle: async () => {
        throw new Error('boom');
      },
    });
    await jest.advanceTimersByTimeAsync(0);
    expect(h.logger.warn).toHaveBeenCalledWith({ runId: 'bad', err: 'boom' }, 'resuming a waiting run failed; retried when its lease lapses');
    await h.poller.stop();
  });

  it('awaitLastBatch: false resumes a row that falls due while a long one is in work within ~1 s', async () => {
    const rows = () => [row('long', 0), row('wait', 1_000)];
    const workMs = (r: Row) => (r.id === 'long' ? 10_000 : 0);
    const quick = harness(rows(), { workMs, awaitLastBatch: false });
    await jest.advanceTimersByTimeAsync(1_200);
    expect(quick.handled).toEqual([{ id: 'wait', at: 1_000 }]);
    // The long row stays leased while in work: never claimed twice.
    expect(quick.table.claims.filter((c) => c.got.includes('long'))).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(10_000);
    await quick.poller.stop();

    jest.setSystemTime(T0);
    // The default (rss) waits for the long row: the row due at 1 s is seen only after it.
    const waiting = harness(rows(), { workMs });
    await jest.advanceTimersByTimeAsync(9_999);
    expect(waiting.ids()).toEqual([]);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(waiting.handled).toEqual([{ id: 'long', at: 10_000 }, { id: 'wait', at: 10_200 }]);
    await waiting.poller.stop();
  });

  it('stop() waits for the rows in work, and no pass runs after it', async () => {
    for (const awaitLastBatch of [true, false]) {
      jest.setSystemTime(T0);
      const h = harness([row('a', 0)], { workMs: () => 500, awaitLastBatch });
      await jest.advanceTimersByTimeAsync(100);
      let stopped = false;
      const stopping = h.poller.stop().then(() => (stopped = true));
      await jest.advanceTimersByTimeAsync(300);
      expect(stopped).toBe(false);
      await jest.advanceTimersByTimeAsync(100);
      await stopping;
      expect(h.handled).toEqual([{ id: 'a', at: 500 }]);
      const claims = h.table.claims.length;
      h.table.rows.push(row('b', 600));
      h.poller.wake(new Date(T0 + 600));
      expect(jest.getTimerCount()).toBe(0); // a wake after stop arms nothing
      await jest.advanceTimersByTimeAsync(20_000);
      expect(h.table.claims).toHaveLength(claims);
      expect(h.ids()).toEqual(['a']);
    }
  });

  it.each([
    [false, ['a']],
    [true, ['a', 'b', 'c']],
  ])('finishClaimedOnStop: %s works the claimed rows not yet started: %j', async (finishClaimedOnStop, expected) => {
    const h = harness([row('a', 0), row('b', 0), row('c', 0)], { concurrency: 1, workMs: () => 100, finishClaimedOnStop });
    await jest.advanceTimersByTimeAsync(50);
    const stopping = h.poller.stop();
    await jest.advanceTimersByTimeAsync(1_000);
    await stopping;
    expect(h.ids()).toEqual(expected);
  });
});
