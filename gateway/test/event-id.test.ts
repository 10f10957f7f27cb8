import { eventIdFor, uuidV5 } from '../src/events/event-id';

const DNS_NAMESPACE = '6ba7b810-9dad-11d1-80b4-00c04fd430c8';

describe('event ids', () => {
  it('uuidV5 matches the RFC test vector', () => {
    // Python: uuid.uuid5(uuid.NAMESPACE_DNS, 'www.example.com')
    expect(uuidV5('www.example.com', DNS_NAMESPACE)).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
    expect(() => uuidV5('x', 'nope')).toThrow();
  });

  it('same account and idempotencyKey -> same v5 id; anything different -> another id', () => {
    const a = eventIdFor('acc-1', 'order-42');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(eventIdFor('acc-1', 'order-42')).toBe(a);
    expect(eventIdFor('acc-2', 'order-42')).not.toBe(a);
    expect(eventIdFor('acc-1', 'order-43')).not.toBe(a);
    // The separator keeps (account, key) pairs apart.
    expect(eventIdFor('acc-1o', 'rder-42')).not.toBe(eventIdFor('acc-1', 'order-42'));
  });

  it('without an idempotencyKey every id is new (v4)', () => {
    const a = eventIdFor('acc', undefined);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4/);
    expect(eventIdFor('acc', undefined)).not.toBe(a);
  });
});
