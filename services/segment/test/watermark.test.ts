/** The projection's applied watermark: contiguous progress over handlers that finish out of order. */
import { AppliedWatermark } from '../src/events/projection';

describe('AppliedWatermark', () => {
  it('advances only over a contiguous prefix when sequences complete out of order', () => {
    const w = new AppliedWatermark();
    w.complete(3);
    w.complete(2);
    expect(w.value).toBe(0);
    expect(w.held).toBe(2);
    w.complete(1);
    expect(w.value).toBe(3);
    expect(w.held).toBe(0);
    w.complete(5);
    expect(w.value).toBe(3);
    w.complete(4);
    expect(w.value).toBe(5);
  });

  it('ignores repeats and sequences at or below the watermark (redeliveries)', () => {
    const w = new AppliedWatermark(10);
    w.complete(10);
    w.complete(7);
    w.complete(11);
    w.complete(11);
    expect(w.value).toBe(11);
    expect(w.held).toBe(0);
  });

  it('raiseFloor closes gaps the consumer never sees (ack floor) and keeps what was done above it', () => {
    const w = new AppliedWatermark();
    w.complete(6);
    w.complete(8);
    w.complete(2);
    w.raiseFloor(4); // 1..4 handled elsewhere (an earlier run, another replica, a deleted message)
    expect(w.value).toBe(4);
    w.complete(5);
    expect(w.value).toBe(6);
    w.raiseFloor(7);
    expect(w.value).toBe(8);
    expect(w.held).toBe(0);
    w.raiseFloor(3); // never lowers
    expect(w.value).toBe(8);
  });

  it('random completion orders always end at the highest sequence', () => {
    for (let run = 0; run < 50; run++) {
      const seqs = Array.from({ length: 200 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
      const w = new AppliedWatermark();
      const done = new Set<number>();
      for (const s of seqs) {
        w.complete(s);
        done.add(s);
        let expected = 0;
        while (done.has(expected + 1)) expected++;
        expect(w.value).toBe(expected);
      }
      expect(w.value).toBe(200);
    }
  });

  it('wait resolves when the gap closes, and false after the timeout', async () => {
    const w = new AppliedWatermark();
    w.complete(2);
    const waiting = w.wait(2, 5_000);
    const tooFar = w.wait(3, 50);
    setTimeout(() => w.complete(1), 20);
    expect(await waiting).toBe(true);
    expect(await tooFar).toBe(false);
    expect(await w.wait(2, 0)).toBe(true);
    expect(await w.wait(9, 0)).toBe(false);
  });
});
