// The embedded planner and partial unique indexes: a lookup pinned to key values that pass the
// index's filter reads the one owning document (a dedupe-key lookup must not scan an account of a
// million messages); values the index may not hold (null, a failing value) fall back to a scan, so
// results never change.
import { CollectionData } from '../src/embedded/collection-data';
import { planCandidates } from '../src/embedded/plan';

function data() {
  const d = new CollectionData('messages');
  d.defineUniqueIndexes([{ name: 'accountId_dedupeKey', fields: ['accountId', 'dedupeKey'], sparse: false, partialFilterExpression: { dedupeKey: { $gt: '' } } }]);
  const docs = [
    { _id: 'm1', accountId: 'a', dedupeKey: 'k1' },
    { _id: 'm2', accountId: 'a', dedupeKey: null },
    { _id: 'm3', accountId: 'a' },
    { _id: 'm4', accountId: 'a', dedupeKey: '' },
    { _id: 'm5', accountId: 'b', dedupeKey: 'k1' },
  ];
  for (const doc of docs) {
    d.setDocument(doc._id, doc);
    d.indexUnique(doc);
  }
  return d;
}
const ids = (plan: ReturnType<typeof planCandidates>) => plan.sources.flatMap((s) => [...s].map((doc) => doc._id as string));

it('a key that passes the partial filter is looked up in the index: only its owner is a candidate', () => {
  const plan = planCandidates(data(), { accountId: 'a', dedupeKey: 'k1' });
  expect(ids(plan)).toEqual(['m1']);
  expect(plan.scanKey).toBeUndefined();
  expect(ids(planCandidates(data(), { accountId: 'a', dedupeKey: 'other' }))).toEqual([]);
});

it('null or a value the filter refuses scans the account: the index does not hold those documents', () => {
  expect(ids(planCandidates(data(), { accountId: 'a', dedupeKey: null })).sort()).toEqual(['m1', 'm2', 'm3', 'm4']);
  expect(ids(planCandidates(data(), { accountId: 'a', dedupeKey: '' })).sort()).toEqual(['m1', 'm2', 'm3', 'm4']);
});

it('a partial filter on a field outside the index never uses the index', () => {
  const d = new CollectionData('x');
  d.defineUniqueIndexes([{ name: 'i', fields: ['accountId', 'k'], sparse: false, partialFilterExpression: { live: true } }]);
  const doc = { _id: 'x1', accountId: 'a', k: 'v', live: false };
  d.setDocument(doc._id, doc);
  d.indexUnique(doc);
  expect(ids(planCandidates(d, { accountId: 'a', k: 'v' }))).toEqual(['x1']); // found by the account scan
  expect(planCandidates(d, { accountId: 'a', k: 'v' }).scanKey).toBeDefined();
});
