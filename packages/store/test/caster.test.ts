// The compiled caster (src/caster.ts) against mongoose, its reference: for every input either the
// caster declines (FALLBACK, mongoose decides) or it builds exactly what mongoose builds, key order
// included (compared through the journal encoding). Errors always come from mongoose.
import { compileCaster, FALLBACK } from '../src/caster';
import { encodeRecord } from '../src/codec';
import { DocumentValidationError } from '../src/errors';
import { castWithMongoose, prepareDocument } from '../src/schema';
import { mongoose } from '../src';

const { Schema } = mongoose;
const m = new mongoose.Mongoose({ autoIndex: false, autoCreate: false, bufferCommands: false });

const STATUSES = ['QUEUED', 'SENT', 'DELIVERED'];

function messageLike(minimize: boolean) {
  return new Schema(
    {
      _id: { type: String, required: true },
      accountId: { type: String, required: true },
      kind: { type: String, required: true, enum: ['A', 'B'] },
      templateName: { type: String, default: null },
      subject: { type: String, default: '' },
      links: { type: [String], default: [] },
      tags: [String],
      times: [Date],
      counts: { type: [Number], default: [1, 2] },
      tracking: { opens: { type: Boolean, required: true }, clicks: { type: Boolean, required: true } },
      meta: { note: String, n: Number },
      status: { type: String, required: true, enum: STATUSES },
      history: { type: [Schema.Types.Mixed], default: [] },
      sending: { type: Schema.Types.Mixed, default: null },
      headers: { type: Schema.Types.Mixed, default: {} },
      list: { type: Schema.Types.Mixed, default: [] },
      preset: { type: Schema.Types.Mixed, default: { a: 1, nested: { b: [1] } } },
      createdAt: { type: Date, required: true },
      sentAt: { type: Date, default: null },
      openCount: { type: Number, default: 0 },
      flag: Boolean,
      audienceKey: { type: String },
    },
    { versionKey: false, minimize },
  );
}

const schemas = { full: messageLike(false), minimized: messageLike(true) };
const models = Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, m.model(`caster_${name}`, schema, `caster_${name}`)]));

const at = new Date('2024-05-01T10:00:00.000Z');
const base = () => ({
  _id: 'm1',
  accountId: 'acc',
  kind: 'A',
  tracking: { opens: true, clicks: false },
  status: 'QUEUED',
  createdAt: at,
});

/** Inputs the caster should take itself. */
const accepted: Record<string, any>[] = [
  base(),
  { ...base(), templateName: 't', subject: 'hi', links: ['a', 'b'], tags: ['x'], times: [at], counts: [] },
  { status: 'SENT', createdAt: at, _id: 'm2', kind: 'B', accountId: 'acc', tracking: { clicks: true, opens: false } }, // any key order
  { ...base(), history: [{ status: 'QUEUED', at }, { nested: {} }], sending: { token: 't', at, deep: { empty: {} } }, headers: { 'List-Unsubscribe': '<x>' } },
  { ...base(), headers: {}, list: [], preset: {}, sending: {} },
  { ...base(), meta: { n: 3, note: 'x' } },
  { ...base(), meta: {} },
  { ...base(), meta: null },
  { ...base(), meta: undefined, sentAt: undefined, headers: undefined, audienceKey: undefined },
  { ...base(), templateName: null, sentAt: null, links: null, sending: null },
  { ...base(), openCount: 5, flag: false, sentAt: at, audienceKey: 'k' },
  { ...base(), tags: [null, 'a'], history: [null, 1, 'x', [1, [2]], { a: undefined }] },
  { ...base(), sending: Buffer.from('abc'), history: [new mongoose.Types.ObjectId('65f000000000000000000001')] },
];

/** Inputs the caster must leave to mongoose (casts, errors, unknown keys). */
const declined: Record<string, any>[] = [
  { ...base(), openCount: '5' },
  { ...base(), createdAt: '2024-05-01T10:00:00.000Z' },
  { ...base(), subject: 12 },
  { ...base(), flag: 'true' },
  { ...base(), links: 'single' },
  { ...base(), tags: [1, 'a'] },
  { ...base(), tags: [undefined] },
  { ...base(), times: ['2024-01-01'] },
  { ...base(), status: 'NOPE' },
  { ...base(), status: null },
  { ...base(), kind: undefined },
  { ...base(), accountId: '' },
  { ...base(), createdAt: new Date(NaN) },
  { ...base(), openCount: NaN },
  { ...base(), tracking: { opens: true } },
  { ...base(), tracking: null },
  { ...base(), tracking: 'yes' },
  { ...base(), tracking: { opens: true, clicks: false, extra: 1 } },
  { ...base(), unknown: 1 },
  { ...base(), 'tracking.opens': false },
  { _id: 'm3' },
];

describe('compiled caster', () => {
  for (const [name, schema] of Object.entries(schemas)) {
    const caster = compileCaster(schema)!;
    const model = models[name];

    it(`${name}: compiles`, () => expect(caster).toBeDefined());

    for (const isNew of [true, false]) {
      it(`${name}, isNew ${isNew}: builds what mongoose builds, key order included`, () => {
        for (const input of accepted) {
          const fast = caster.cast(input, isNew);
          const error = new model(input, null, { defaults: isNew }).validateSync();
          if (error) {
            // without defaults a required path may be missing: then the caster must decline
            expect(fast).toBe(FALLBACK);
            continue;
          }
          expect(fast).not.toBe(FALLBACK);
          const reference = castWithMongoose(model, input, { isNew, collection: 'c' });
          expect(encodeRecord([['c', '', fast as any]])).toBe(encodeRecord([['c', '', reference]]));
          expect(prepareDocument(model, input, { isNew, collection: 'c' })).toEqual(reference);
        }
      });

      it(`${name}, isNew ${isNew}: leaves casts and invalid documents to mongoose`, () => {
        for (const input of declined) expect(caster.cast(input, isNew)).toBe(FALLBACK);
        class Input {
          constructor(readonly _id: string) {}
        }
        expect(caster.cast(Object.assign(new Input('m9'), base()), isNew)).toBe(FALLBACK);
        expect(caster.cast(new model(base()), isNew)).toBe(FALLBACK);
      });
    }

    it(`${name}: the result shares nothing with the input`, () => {
      const input = { ...base(), history: [{ at }], sending: { token: 't' }, links: ['a'], meta: { n: 1 } };
      const out = caster.cast(input, true) as any;
      expect(out.createdAt).not.toBe(input.createdAt);
      expect(out.createdAt).toEqual(input.createdAt);
      expect(out.history).not.toBe(input.history);
      expect(out.history[0]).not.toBe(input.history[0]);
      expect(out.history[0].at).not.toBe(at);
      expect(out.sending).not.toBe(input.sending);
      expect(out.links).not.toBe(input.links);
      expect(out.tracking).not.toBe(input.tracking);
      expect(out.meta).not.toBe(input.meta);
    });

    it(`${name}: prepareDocument reports mongoose's errors for what the caster declines`, () => {
      const expectProblems = (input: Record<string, unknown>, paths: string[]) => {
        let caught: unknown;
        try {
          prepareDocument(model, input, { isNew: true, collection: 'c' });
        } catch (err) {
          caught = err;
        }
        expect(caught).toBeInstanceOf(DocumentValidationError);
        expect((caught as DocumentValidationError).problems.map((p) => p.path).sort()).toEqual(paths);
        expect(String((caught as Error).message)).toBe(String(mongooseError(model, input)));
      };
      expectProblems({ ...base(), status: 'NOPE' }, ['status']);
      expectProblems({ ...base(), kind: undefined, accountId: '' }, ['accountId', 'kind']);
      expectProblems({ ...base(), tracking: { opens: true } }, ['tracking.clicks']);
      expectProblems({ ...base(), openCount: 'many' }, ['openCount']);
      expectProblems({ ...base(), createdAt: 'not a date' }, ['createdAt']);
    });
  }

  it('casts what it declines exactly as before (mongoose)', () => {
    const model = models.full;
    const out = prepareDocument(model, { ...base(), openCount: '5', createdAt: '2024-05-01T10:00:00.000Z', tags: [1] }, { isNew: true, collection: 'c' });
    expect(out.openCount).toBe(5);
    expect(out.createdAt).toEqual(at);
    expect(out.tags).toEqual(['1']);
  });

  it('does not compile schemas with setters, custom validators, subdocuments or non-strict mode', () => {
    expect(compileCaster(new Schema({ _id: String, email: { type: String, lowercase: true } }))).toBeUndefined();
    expect(compileCaster(new Schema({ _id: String, n: { type: Number, min: 0 } }))).toBeUndefined();
    expect(compileCaster(new Schema({ _id: String, n: { type: Number, validate: () => true } }))).toBeUndefined();
    expect(compileCaster(new Schema({ _id: String, lines: [{ sku: String }] }))).toBeUndefined();
    expect(compileCaster(new Schema({ _id: String, child: new Schema({ a: String }) }))).toBeUndefined();
    expect(compileCaster(new Schema({ _id: String, a: String }, { strict: false }))).toBeUndefined();
    expect(compileCaster(new Schema({ _id: String, at: { type: Date, default: Date.now } }))).toBeUndefined();
    expect(compileCaster(new Schema({ _id: String, id2: mongoose.Schema.Types.ObjectId }))).toBeUndefined();
    expect(compileCaster(new Schema({ _id: String, a: { b: { c: String } } }))).toBeUndefined();
  });
});

function mongooseError(model: mongoose.Model<any>, input: Record<string, unknown>): string {
  const doc = new model(input, null, { defaults: true });
  const error = doc.validateSync()!;
  const problems = Object.entries(error.errors).map(([path, sub]: [string, any]) => `${sub.path ?? path}: ${sub.message}`);
  return `document failed validation in c: ${problems.join('; ')}`;
}
