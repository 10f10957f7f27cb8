// Paths that would walk into an object's prototype (`__proto__`, `constructor`, `prototype`) are
// refused in filters, updates and projections, before anything is read or written: a `$set` of
// `__proto__.x` would otherwise set `x` on Object.prototype for the whole process.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mongoose, openStore, type Store } from '../src';

interface Item {
  _id: string;
  accountId: string;
  profile?: Record<string, unknown>;
}

const schema = new mongoose.Schema({ _id: String, accountId: String, profile: { type: mongoose.Schema.Types.Mixed } }, { versionKey: false });
let dir: string;
let store: Store;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-unsafe-'));
  store = await openStore({ dataDir: dir });
  await store.collection<Item>('items', schema).insertOne({ _id: 'a', accountId: 'acc', profile: { city: 'Oslo' } });
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
  delete (Object.prototype as Record<string, unknown>).polluted;
});

const UNSAFE = ['__proto__.polluted', 'profile.__proto__.polluted', 'constructor.prototype.polluted', 'profile.constructor', 'prototype'];

it.each(UNSAFE)('refuses %s in $set, $inc, $unset, $push, $rename, a replacement-style update and bulkWrite, and writes nothing', async (p) => {
  const items = store.collection<Item>('items', schema);
  for (const update of [{ $set: { [p]: 'yes' } }, { $inc: { [p]: 1 } }, { $unset: { [p]: '' } }, { $push: { [p]: 1 } }, { $rename: { 'profile.city': p } }, { [p]: 'yes' }]) {
    await expect(items.updateOne({ _id: 'a' }, update)).rejects.toThrow(/unsafe path/);
    await expect(items.findOneAndUpdate({ _id: 'a' }, update)).rejects.toThrow(/unsafe path/);
    await expect(items.updateMany({}, update)).rejects.toThrow(/unsafe path/);
    await expect(items.bulkWrite([{ updateOne: { filter: { _id: 'a' }, update } }])).rejects.toThrow(/unsafe path/);
    await expect(items.updateOne({ _id: 'b' }, update, { upsert: true })).rejects.toThrow(/unsafe path/);
  }
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(await items.find({})).toEqual([{ _id: 'a', accountId: 'acc', profile: { city: 'Oslo' } }]);
});

it.each(UNSAFE)('refuses %s in filters (at any depth) and projections', async (p) => {
  const items = store.collection<Item>('items', schema);
  await expect(items.find({ [p]: 1 })).rejects.toThrow(/unsafe path/);
  await expect(items.find({ $or: [{ accountId: 'acc' }, { [p]: { $exists: true } }] })).rejects.toThrow(/unsafe path/);
  await expect(items.countDocuments({ $and: [{ [p]: 1 }] })).rejects.toThrow(/unsafe path/);
  await expect(items.find({ lines: { $elemMatch: { [p]: 1 } } })).rejects.toThrow(/unsafe path/);
  await expect(items.deleteMany({ [p]: { $ne: 1 } })).rejects.toThrow(/unsafe path/);
  await expect(items.find({ accountId: 'acc' }, { projection: { [p]: 1 } })).rejects.toThrow(/unsafe path/);
  await expect(items.aggregate([{ $match: { [p]: 1 } }])).rejects.toThrow(/unsafe path/);
  expect(await items.countDocuments({})).toBe(1);
});

it('still accepts paths that merely contain those words', async () => {
  const items = store.collection<Item>('items', schema);
  await items.updateOne({ _id: 'a' }, { $set: { 'profile.prototypes': 1, 'profile.my_constructor': 2, 'profile.__proto': 3 } });
  expect(await items.findOne({ 'profile.prototypes': 1 }, { projection: { 'profile.my_constructor': 1 } })).toEqual({ _id: 'a', profile: { my_constructor: 2 } });
});
