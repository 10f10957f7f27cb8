// The outcome of a consumed custom event (GET /events `outcome`): the first rule that applies wins.
import { eventOutcome, type OutcomeInput } from '../src/automations/domain/event-outcome';

const input = (over: Partial<OutcomeInput> = {}): OutcomeInput => ({ triggerAutomations: true, subscriberId: 'sub-1', subscriberCreated: false, matchedAutomationIds: ['auto-1'], ...over });

describe('eventOutcome', () => {
  it('RUNS_STARTED when active automations match a known subscriber', () => {
    expect(eventOutcome(input())).toBe('RUNS_STARTED');
  });
  it('NO_MATCHING_AUTOMATION when none matches', () => {
    expect(eventOutcome(input({ matchedAutomationIds: [] }))).toBe('NO_MATCHING_AUTOMATION');
  });
  it('NO_SUBSCRIBER for an address that is no subscriber, matching automations or not', () => {
    expect(eventOutcome(input({ subscriberId: null }))).toBe('NO_SUBSCRIBER');
    expect(eventOutcome(input({ subscriberId: null, matchedAutomationIds: [] }))).toBe('NO_SUBSCRIBER');
  });
  it('SUBSCRIBER_CREATED for a consent signup, before matching', () => {
    expect(eventOutcome(input({ subscriberCreated: true }))).toBe('SUBSCRIBER_CREATED');
    expect(eventOutcome(input({ subscriberCreated: true, matchedAutomationIds: [] }))).toBe('SUBSCRIBER_CREATED');
  });
  it('NOT_TRIGGERED wins over everything when triggerAutomations is false', () => {
    for (const over of [{}, { subscriberId: null }, { subscriberCreated: true }, { matchedAutomationIds: [] }]) {
      expect(eventOutcome(input({ ...over, triggerAutomations: false }))).toBe('NOT_TRIGGERED');
    }
  });
});
