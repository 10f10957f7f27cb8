// atomically: a read-validate-write unit in one store transaction, re-run when a guarded write lost
// a race (ConcurrentChange), ABORTED concurrent_modification after a few lost races. Real embedded store.
import { mongoose, type Store } from '@mailer/store';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { atomically, ConcurrentChange } from '../src/atomically';
import { DomainError, GrpcStatus } from '../src/errors';

let temp: TempStore;
let store: Store;
const schema = new mongoose.Schema({ _id: String, accountId: String, n: Number }, { versionKey: false });
const items = () => store.collection<{ _id: string; accountId: string; n: number }>('items', schema);

beforeAll(async () => {
  temp = await openTempStore('kit-atomically');
  store = temp.store;
});
afterAll(() => temp?.close());

it('commits the unit\'s writes together and returns its result', async () => {
  const out = await atomically(store, async (tx) => {
    await items().insertOne({ _id: 'a', accountId: 'acc', n: 1 }, { tx });
    await items().insertOne({ _id: 'b', accountId: 'acc', n: 2 }, { tx });
    return 'done';
  });
  expect(out).toBe('done');
  expect(await items().countDocuments({ accountId: 'acc' })).toBe(2);
});

it('re-runs the whole unit after a lost race, and nothing of the lost attempt is written', async () => {
  let attempts = 0;
  await atomically(store, async (tx) => {
    attempts++;
    await items().insertOne({ _id: `retry-${attempts}`, accountId: 'retry', n: attempts }, { tx });
    if (attempts < 3) throw new ConcurrentChange('item');
  });
  expect(attempts).toBe(3);
  expect((await items().find({ accountId: 'retry' })).map((d) => d._id)).toEqual(['retry-3']);
});

it('answers ABORTED concurrent_modification after five lost races', async () => {
  let attempts = 0;
  const err = await atomically(store, async () => {
    attempts++;
    throw new ConcurrentChange('item');
  }).catch((e: unknown) => e);
  expect(attempts).toBe(5);
  expect(err).toBeInstanceOf(DomainError);
  expect(err).toMatchObject({ code: GrpcStatus.ABORTED, errorId: 'concurrent_modification' });
});

it('any other error ends the unit at once, unretried and unwritten', async () => {
  let attempts = 0;
  await expect(
    atomically(store, async (tx) => {
      attempts++;
      await items().insertOne({ _id: 'x', accountId: 'other', n: 0 }, { tx });
      throw new Error('validation failed');
    }),
  ).rejects.toThrow('validation failed');
  expect(attempts).toBe(1);
  expect(await items().countDocuments({ accountId: 'other' })).toBe(0);
});
