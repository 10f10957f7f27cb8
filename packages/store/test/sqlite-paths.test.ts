// Which paths the SQL translation may compare (paths.ts): typed scalars through plain objects and
// single subdocuments, arrays of strings and numbers; never through an array, never Mixed.
import { mongoose } from '../src';
import { documentArrayOf, pathKind } from '../src/sqlite/paths';

const consent = new mongoose.Schema({ text: String, at: Date }, { _id: false });
const order = new mongoose.Schema({ sku: String, at: Date, qty: Number });
const schema = new mongoose.Schema({
  _id: String,
  name: String,
  n: Number,
  ok: Boolean,
  at: Date,
  tags: [String],
  nums: [Number],
  profile: { city: String, geo: { lat: Number } },
  consent: { type: consent },
  orders: [order],
  m: mongoose.Schema.Types.Mixed,
  oid: mongoose.Schema.Types.ObjectId,
});

test('kinds', () => {
  const kinds = Object.fromEntries(
    ['_id', 'name', 'n', 'ok', 'at', 'tags', 'nums', 'profile.city', 'profile.geo.lat', 'consent.at', 'consent.text', 'orders', 'orders.sku', 'orders.0.sku', 'm', 'm.x', 'oid', 'name.x', 'missing', 'profile', '$where'].map((p) => [p, pathKind(schema, p) ?? null]),
  );
  expect(kinds).toEqual({
    _id: 'id', name: 'string', n: 'number', ok: 'boolean', at: 'date', tags: 'string[]', nums: 'number[]',
    'profile.city': 'string', 'profile.geo.lat': 'number', 'consent.at': 'date', 'consent.text': 'string',
    orders: null, 'orders.sku': null, 'orders.0.sku': null, m: null, 'm.x': null, oid: null, 'name.x': null, missing: null, profile: null, $where: null,
  });
});

test('document arrays: the array, the path inside its elements, their schema', () => {
  expect(documentArrayOf(schema, 'orders.at')).toMatchObject({ array: 'orders', rest: 'at' });
  expect(documentArrayOf(schema, 'orders')).toMatchObject({ array: 'orders', rest: '' });
  expect(pathKind(documentArrayOf(schema, 'orders.at')!.schema, 'at')).toBe('date');
  expect(documentArrayOf(schema, 'tags')).toBeUndefined();
  expect(documentArrayOf(schema, 'consent.at')).toBeUndefined();
});
