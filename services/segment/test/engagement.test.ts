import { foldEngagement, type EngagementEvent, type EngagementFacts, type EngagementType } from '../src/domain/engagement';

const at = (day: number) => new Date(Date.UTC(2026, 0, day));
const ev = (type: EngagementType, day: number): EngagementEvent => ({ type, accountId: 'a', subscriberId: 's', occurredAt: at(day) });
const d = (day: number) => ev('email.delivered', day);
const o = (day: number) => ev('email.opened', day);
const c = (day: number) => ev('email.clicked', day);
const fold = (events: EngagementEvent[], from: EngagementFacts = {}) => events.reduce<EngagementFacts>(foldEngagement, from);
const days = (f: EngagementFacts) => ({
  delivered: f.lastDeliveredAt?.getUTCDate() ?? null,
  response: f.lastResponseAt?.getUTCDate() ?? null,
  silenceFrom: f.firstUnansweredDeliveryAt?.getUTCDate() ?? null,
});

describe('foldEngagement', () => {
  it.each([
    ['nothing', [], { delivered: null, response: null, silenceFrom: null }],
    ['deliveries without response: silence from the first', [d(1), d(5)], { delivered: 5, response: null, silenceFrom: 1 }],
    ['a response ends the silence', [d(1), d(5), o(6)], { delivered: 5, response: 6, silenceFrom: null }],
    ['a delivery after the response starts a new one', [d(1), o(2), d(7), d(9)], { delivered: 9, response: 2, silenceFrom: 7 }],
    ['a click counts as a response', [d(3), c(4)], { delivered: 3, response: 4, silenceFrom: null }],
    ['a response whose delivery fact never came', [o(4)], { delivered: null, response: 4, silenceFrom: null }],
    ['out of order: the delivery after a late-arriving older response keeps the silence', [d(1), d(9), o(5)], { delivered: 9, response: 5, silenceFrom: 9 }],
    ['out of order: an older delivery arriving after a response changes nothing', [o(5), d(3)], { delivered: 3, response: 5, silenceFrom: null }],
    ['out of order: an older delivery arriving later moves the silence start back', [d(5), d(3)], { delivered: 5, response: null, silenceFrom: 3 }],
    ['an older response arriving late does not move the latest back', [o(8), o(2)], { delivered: null, response: 8, silenceFrom: null }],
  ])('%s', (_name, events, expected) => {
    expect(days(fold(events))).toEqual(expected);
  });

  it('is idempotent: every event applied twice gives the same facts', () => {
    const events = [d(1), o(2), d(7), c(8), d(9), o(3), d(4)];
    expect(days(fold(events.flatMap((e) => [e, e])))).toEqual(days(fold(events)));
  });
});
