/**
 * PROPERTY: for random expressions over random contacts, the compiled filters EXECUTED BY THE EMBEDDED
 * STORE classify every contact exactly as the reference evaluator does (TRUE -> trueFilter only,
 * FALSE -> falseFilter only, UNKNOWN -> unknownFilter only), and never match another account's contacts.
 * Seeded: SEGMENT_PROPERTY_SEED=<n> reproduces a run; the seed is printed on failure.
 */
import { validateExpression } from '../src/domain/validate';
import type { SegmentExpression } from '../src/domain/expression';
import { compileSegment } from '../src/domain/compile';
import { classify } from './support/builders';
import { ALL_OPERATORS, Rng, World, makeExpression, makeWorld } from './support/random';
import { ContactStore, openContactStore } from './support/store';

const SEED = Number(process.env.SEGMENT_PROPERTY_SEED ?? 20250310);
const WORLDS = 8;
const CONTACTS_PER_WORLD = 80;
/** Per world: single-condition expressions cycling through every operator, then random compound ones. */
const SINGLE_PER_WORLD = 30;
const COMPOUND_PER_WORLD = 30;

describe(`compiled filters agree with the reference evaluator (seed ${SEED})`, () => {
  let db: ContactStore;
  const worlds: World[] = [];
  const rng = new Rng(SEED);

  beforeAll(async () => {
    db = await openContactStore();
    for (let w = 0; w < WORLDS; w++) worlds.push(makeWorld(rng, w, CONTACTS_PER_WORLD));
    await db.contacts.insertMany(worlds.flatMap((w) => w.contacts));
  });
  afterAll(() => db.close());

  it(`${WORLDS * (SINGLE_PER_WORLD + COMPOUND_PER_WORLD)} expressions x ${CONTACTS_PER_WORLD} contacts`, async () => {
    const outcomes = new Map<string, Set<string>>();
    const totals: Record<string, number> = { TRUE: 0, FALSE: 0, UNKNOWN: 0 };
    let checked = 0;
    let operatorCursor = 0;
    for (const [w, world] of worlds.entries()) {
      const segmentIds = Object.keys(world.context.segments);
      for (let e = 0; e < SINGLE_PER_WORLD + COMPOUND_PER_WORLD; e++) {
        const single = e < SINGLE_PER_WORLD;
        const operator = single ? ALL_OPERATORS[operatorCursor++ % ALL_OPERATORS.length] : undefined;
        const expression: SegmentExpression = single
          ? makeExpression(rng, world, segmentIds, { groups: 1, conditions: 1, operator })
          : makeExpression(rng, world, segmentIds);
        const where = `seed ${SEED}, world ${w}, expression ${e}`;

        const validation = validateExpression(expression, world.catalog);
        if (!validation.valid) throw new Error(`${where}: the generator drew an invalid expression: ${JSON.stringify(validation.problems)}`);

        const result = await classify(db.contacts, expression, world.contacts, world.context, world.accountId);
        for (const [id, { evaluated, compiled }] of result) {
          if (evaluated !== compiled) {
            const c = world.contacts.find((x) => x._id === id);
            const filters = compileSegment(expression, { ...world.context, accountId: world.accountId });
            throw new Error(
              `${where}: contact ${id} evaluated ${evaluated} but the compiled filters said ${compiled}\n` +
                `now: ${world.context.now.toISOString()}\nsources: ${JSON.stringify(world.context.purchaseSources)}\n` +
                `expression: ${JSON.stringify(expression)}\ncontact: ${JSON.stringify(c)}\n` +
                `segments: ${JSON.stringify(world.context.segments)}\nfilters: ${JSON.stringify(filters)}`,
            );
          }
          totals[evaluated]++;
          checked++;
          if (operator) outcomes.set(operator, (outcomes.get(operator) ?? new Set()).add(evaluated));
        }
      }
    }
    // The draw must exercise the logic, not just agree on trivia: every outcome occurs often, and
    // every operator is seen with at least two different outcomes.
    expect(checked).toBe(WORLDS * (SINGLE_PER_WORLD + COMPOUND_PER_WORLD) * CONTACTS_PER_WORLD);
    for (const t of ['TRUE', 'FALSE', 'UNKNOWN']) expect(totals[t]).toBeGreaterThan(checked * 0.1);
    const dull = ALL_OPERATORS.filter((op) => (outcomes.get(op)?.size ?? 0) < 2);
    expect(dull).toEqual([]);
    console.log(`segment property test (seed ${SEED}): ${checked} contact checks, outcomes ${JSON.stringify(totals)}`);
  });
});
