import { decideIssue, initialIssueState, issueSubject, newItems, type PendingItem } from '../src/domain/issues';

const T0 = new Date('2026-11-24T12:00:00Z');
const DAY = 86_400_000;

const item = (n: number, ageDays = 0, extra: Partial<PendingItem> = {}): PendingItem => ({
  key: `k${n}`,
  guid: `g${n}`,
  title: `Item ${n}`,
  link: `https://blog.example/${n}`,
  publishedAt: new Date(T0.getTime() - ageDays * DAY - n * 1000),
  summary: '',
  content: '',
  author: '',
  imageUrl: '',
  foundAt: T0,
  ...extra,
});

describe('newItems', () => {
  const seen = { keys: new Set(['k1']), links: new Set(['https://blog.example/2']) };
  it('keeps items whose key and link are both unseen, each once, in feed order', () => {
    const got = newItems([item(3), item(1), item(4), item(3)], seen);
    expect(got.map((i) => i.key)).toEqual(['k3', 'k4']);
  });
  it('an item whose guid changed but whose link did not is not new', () => {
    expect(newItems([item(2, 0, { key: 'changed-guid' })], seen)).toEqual([]);
  });
  it('an item without a link is judged by its key alone', () => {
    expect(newItems([item(5, 0, { link: '' })], { keys: new Set(), links: new Set(['']) })).toHaveLength(1);
  });
});

describe('decideIssue', () => {
  const base = { minItems: null, thresholdMaxAgeDays: null, maxItemsPerIssue: 10 };
  it('INSTANT: any waiting item makes an issue; nothing waiting makes none', () => {
    expect(decideIssue({ ...base, triggerMode: 'INSTANT' }, [item(1)], { now: T0, tick: false }).issueItems).toHaveLength(1);
    expect(decideIssue({ ...base, triggerMode: 'INSTANT' }, [], { now: T0, tick: true }).issueItems).toHaveLength(0);
  });
  it('SCHEDULE: only at a tick, and none when nothing waits', () => {
    const mode = { ...base, triggerMode: 'SCHEDULE' as const };
    expect(decideIssue(mode, [item(1), item(2)], { now: T0, tick: false }).issueItems).toHaveLength(0);
    expect(decideIssue(mode, [item(1), item(2)], { now: T0, tick: true }).issueItems).toHaveLength(2);
    expect(decideIssue(mode, [], { now: T0, tick: true }).issueItems).toHaveLength(0);
  });
  it('THRESHOLD: an issue once minItems wait; expired items drop out of the wait', () => {
    const mode = { ...base, triggerMode: 'THRESHOLD' as const, minItems: 3, thresholdMaxAgeDays: 7 };
    expect(decideIssue(mode, [item(1), item(2)], { now: T0, tick: false }).issueItems).toHaveLength(0);
    expect(decideIssue(mode, [item(1), item(2), item(3)], { now: T0, tick: false }).issueItems).toHaveLength(3);
    const withOld = decideIssue(mode, [item(1), item(2), item(3, 8)], { now: T0, tick: false });
    expect(withOld.issueItems).toHaveLength(0);
    expect(withOld.expired.map((i) => i.key)).toEqual(['k3']);
  });
  it('maxItemsPerIssue: the newest items go in, the rest stay', () => {
    const d = decideIssue({ ...base, triggerMode: 'INSTANT', maxItemsPerIssue: 2 }, [item(3, 2), item(1, 0), item(2, 1)], { now: T0, tick: false });
    expect(d.issueItems.map((i) => i.key)).toEqual(['k1', 'k2']);
  });
});

describe('initialIssueState', () => {
  it('AUTO releases at once; REVIEW waits, until reviewAutoReleaseMinutes when set', () => {
    expect(initialIssueState('AUTO', 30, T0)).toEqual({ status: 'RELEASED', releasedAt: T0, autoReleaseAt: null, sendDueAt: T0 });
    expect(initialIssueState('REVIEW', null, T0)).toEqual({ status: 'PENDING_REVIEW', releasedAt: null, autoReleaseAt: null, sendDueAt: null });
    expect(initialIssueState('REVIEW', 30, T0).autoReleaseAt).toEqual(new Date(T0.getTime() + 30 * 60_000));
  });
});

describe('issueSubject', () => {
  const n = { name: 'Digest', feedTitle: 'The Blog', siteUrl: null };
  it('renders subjectPattern with items and newsletter', () => {
    expect(issueSubject({ ...n, subjectPattern: '{{ newsletter.feedTitle }}: {{ items[0].title }} (+{{ items.size | minus: 1 }})' }, [item(1), item(2)])).toBe('The Blog: Item 1 (+1)');
  });
  it('falls back to the name when the pattern renders blank or fails', () => {
    expect(issueSubject({ ...n, subjectPattern: '{{ nothing }}' }, [item(1)])).toBe('Digest');
    expect(issueSubject({ ...n, subjectPattern: '{{ items[0].title ' }, [item(1)])).toBe('Digest');
  });
});
