import { commonV1 } from '@mailer/proto';
import { usageFromProto } from '../src/clients/field-usage';
import { classifyUsages, formsOf, usageProblem, type FieldUsage } from '../src/domain/usage';

const usage = (over: Partial<FieldUsage>): FieldUsage => ({
  category: 'SEGMENT',
  area: 'segments',
  artifactId: 'a1',
  artifactName: 'VIPs',
  status: 'active',
  reason: 'filters on the field',
  link: '/segments/a1',
  permanentDeleteBlocking: false,
  effect: 'WARNING',
  ...over,
});

describe('classifyUsages', () => {
  it('sorts usages by effect and lists permanent-delete blockers too', () => {
    const form = usage({ category: 'FORM', artifactId: 'f1', effect: 'BLOCKS_ARCHIVE', permanentDeleteBlocking: true });
    const segment = usage({ effect: 'WARNING' });
    const merge = usage({ category: 'CONTENT_MERGE_TAG', effect: 'CONTENT_MERGE_TAG' });
    const hint = usage({ category: 'EXTERNAL_HINT', effect: 'EXTERNAL_HINT' });
    const send = usage({ category: 'SEND_IN_PROGRESS', effect: 'WARNING', permanentDeleteBlocking: true });
    const out = classifyUsages([
      { service: 'segment', answered: true, usages: [segment] },
      { service: 'form', answered: true, usages: [form] },
      { service: 'messaging', answered: true, usages: [merge, hint, send] },
      { service: 'rss', answered: true, usages: [] },
    ]);
    expect(out).toEqual({
      archiveBlocked: true,
      permanentDeleteBlocked: true,
      blockingUsages: [form],
      warningUsages: [segment, send],
      contentMergeTagUsages: [merge],
      permanentDeleteBlockingUsages: [form, send],
      externalHints: [hint],
      sources: [
        { service: 'segment', answered: true },
        { service: 'form', answered: true },
        { service: 'messaging', answered: true },
        { service: 'rss', answered: true },
      ],
      unanswered: [],
    });
  });

  it('nothing blocks when every source answered with non-blocking usages', () => {
    const out = classifyUsages([{ service: 'segment', answered: true, usages: [usage({})] }]);
    expect([out.archiveBlocked, out.permanentDeleteBlocked]).toEqual([false, false]);
  });

  it('a usage without a known effect blocks (never archive on a guess)', () => {
    const odd = usage({ effect: 'UNSPECIFIED' });
    expect(classifyUsages([{ service: 'segment', answered: true, usages: [odd] }]).blockingUsages).toEqual([odd]);
  });

  it('an unanswered source makes both blocked and is named in sources', () => {
    const out = classifyUsages([
      { service: 'segment', answered: true, usages: [] },
      { service: 'form', answered: false, error: 'UNAVAILABLE: connection refused' },
    ]);
    expect(out).toMatchObject({
      archiveBlocked: true,
      permanentDeleteBlocked: true,
      blockingUsages: [],
      unanswered: ['form'],
      sources: [
        { service: 'segment', answered: true },
        { service: 'form', answered: false, error: 'UNAVAILABLE: connection refused' },
      ],
    });
  });
});

describe('formsOf and usageProblem', () => {
  it('lists FORM usages once per form', () => {
    expect(formsOf([usage({ category: 'FORM', artifactId: 'f1', artifactName: 'Footer' }), usage({ category: 'FORM', artifactId: 'f1', artifactName: 'Footer' }), usage({})])).toEqual([{ id: 'f1', name: 'Footer' }]);
  });
  it('describes a usage for error details', () => {
    expect(usageProblem(usage({ category: 'FORM', artifactId: 'f1', artifactName: 'Footer', reason: 'writes the field' }), 'blockingUsages[0]')).toEqual({
      path: 'blockingUsages[0]',
      problem: 'FORM "Footer" (f1): writes the field',
    });
  });
});

describe('usages reported by other services', () => {
  const base = { area: 'a', artifactId: 'x', artifactName: 'n', status: 's', reason: 'r', link: '', permanentDeleteBlocking: false };

  it('keeps known categories and effects', () => {
    const u = usageFromProto({ ...base, category: commonV1.FieldUsageCategory.FIELD_USAGE_CATEGORY_FORM, effect: commonV1.FieldUsageEffect.FIELD_USAGE_EFFECT_WARNING });
    expect(u).toMatchObject({ category: 'FORM', effect: 'WARNING' });
  });

  it.each([0, 99, -1])('shows an unknown category %p as an external hint, keeping its (blocking) effect', (category) => {
    const u = usageFromProto({ ...base, category, effect: commonV1.FieldUsageEffect.FIELD_USAGE_EFFECT_BLOCKS_ARCHIVE });
    expect(u).toMatchObject({ category: 'EXTERNAL_HINT', effect: 'BLOCKS_ARCHIVE' });
    expect(classifyUsages([{ service: 'segment', answered: true, usages: [u] }]).archiveBlocked).toBe(true);
  });
});
