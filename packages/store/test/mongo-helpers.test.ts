// Pure parts of the MongoDB adapter, testable without a server (the contract suite covers the rest
// when MONGODB_URI is set).
import { DocumentValidationError, DuplicateKeyError, mongoose } from '../src';
import { mapMongoError, standaloneProblem, withUpsertId } from '../src/mongo/store';

describe('mapMongoError', () => {
  test('E11000 from a single write, an insertMany bulk error, and a bulk error without keyValue', () => {
    const single = Object.assign(new Error('E11000 duplicate key error collection: db.subs index: accountId_1_email_1 dup key: { accountId: "a", email: "x" }'), {
      code: 11000,
      keyValue: { accountId: 'a', email: 'x' },
    });
    const mapped = mapMongoError(single, 'subs') as DuplicateKeyError;
    expect(mapped).toBeInstanceOf(DuplicateKeyError);
    expect(mapped).toMatchObject({ code: 11000, collection: 'subs', index: 'accountId_1_email_1', key: { accountId: 'a', email: 'x' } });

    const bulk = Object.assign(new Error('bulk write failed'), {
      code: 11000,
      writeErrors: [{ code: 11000, errmsg: 'E11000 duplicate key error collection: db.subs index: _id_ dup key: { _id: "1" }', keyValue: { _id: '1' } }],
    });
    expect(mapMongoError(bulk, 'subs')).toMatchObject({ index: '_id_', key: { _id: '1' } });

    const nested = { writeErrors: [{ err: { code: 11000, errmsg: 'E11000 duplicate key error index: code_1 dup key', keyValue: { code: 'K' } } }] };
    expect(mapMongoError(nested, 'subs')).toMatchObject({ index: 'code_1', key: { code: 'K' } });
  });

  test('mongoose validation and cast errors become DocumentValidationError; others pass through', () => {
    const schema = new mongoose.Schema({ _id: String, n: { type: Number, min: 0 }, s: { type: String, required: true } });
    const Model = new mongoose.Mongoose().model('m', schema);
    const validation = new Model({ _id: 'x', n: -1 }).validateSync();
    const mapped = mapMongoError(validation, 'm') as DocumentValidationError;
    expect(mapped).toBeInstanceOf(DocumentValidationError);
    expect(mapped.problems.map((p) => p.path).sort()).toEqual(['n', 's']);
    const cast = new mongoose.Error.CastError('Number', 'abc', 'n');
    expect(mapMongoError(cast, 'm')).toMatchObject({ problems: [{ path: 'n' }] });
    const other = new Error('network');
    expect(mapMongoError(other, 'm')).toBe(other);
  });
});

describe('withUpsertId', () => {
  test('gives an upsert a UUID unless the filter or the update names the _id', () => {
    const generated = withUpsertId({ email: 'x' }, { $set: { a: 1 } }, true) as { $setOnInsert: { _id: string } };
    expect(generated.$setOnInsert._id).toMatch(/^[0-9a-f-]{36}$/);
    expect(withUpsertId({ email: 'x' }, { a: 1 }, true)).toMatchObject({ $set: { a: 1 }, $setOnInsert: { _id: expect.any(String) } });
    const own = { $setOnInsert: { _id: 'mine' } };
    expect(withUpsertId({ email: 'x' }, own, true)).toEqual(own);
    expect(withUpsertId({ _id: 'id' }, { $set: { a: 1 } }, true)).toEqual({ $set: { a: 1 } });
    expect(withUpsertId({ email: 'x' }, { $set: { a: 1 } }, false)).toEqual({ $set: { a: 1 } });
  });
});

describe('standaloneProblem', () => {
  test('a replica set member and a mongos pass; a standalone server is refused with what to do', () => {
    expect(standaloneProblem({ setName: 'rs0', isWritablePrimary: true } as never)).toBeUndefined();
    expect(standaloneProblem({ msg: 'isdbgrid' })).toBeUndefined();
    const problem = standaloneProblem({ isWritablePrimary: true } as never);
    expect(problem).toMatch(/standalone MongoDB server/);
    expect(problem).toMatch(/--replSet rs0.*rs\.initiate\(\).*\?replicaSet=rs0/);
  });
});
