// Sender profiles and email templates on a real embedded store: the default rules (first profile,
// moving the flag, promoting on delete, at most one default under concurrent creates), in-use
// refusals, name uniqueness, versions, senderForSend / templateForSend and the compiled cache.
import { randomUUID } from 'node:crypto';
import { DomainError } from '@mailer/kit';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import type { CatalogDeps } from '../src/templates/app/catalog-deps';
import { createEmailTemplate, deleteEmailTemplate, renderEmailTemplate, templateForSend, updateEmailTemplate } from '../src/templates/app/email-templates';
import { domainPolicy } from '../src/templates/app/sending-domains';
import { createSenderProfile, deleteSenderProfile, listSenderProfiles, senderForSend, updateSenderProfile } from '../src/templates/app/sender-profiles';
import { AUTOMATIONS, automationSchema } from '../src/automations/store/automations';

const A = 'acct-a';
const B = 'acct-b';
let tmp: TempStore;
let deps: CatalogDeps;
let clock = 0;

beforeEach(async () => {
  tmp = await openTempStore('catalog');
  deps = { store: tmp.store, now: () => new Date(Date.UTC(2026, 0, 1) + ++clock * 1000), newId: randomUUID, allowedFromDomains: [], domains: domainPolicy({ store: tmp.store, verification: 'off', keys: null, operatorKeys: {} }) };
});
afterEach(() => tmp.close());

const profile = (name: string, extra: Record<string, unknown> = {}) => ({ name, fromEmail: ` ${name}@Example.ORG `, fromName: `${name} sender`, ...extra });
async function errorOf(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a DomainError');
}
const defaults = async (accountId: string) => (await listSenderProfiles(deps, accountId)).filter((p) => p.isDefault).map((p) => p.name);

describe('sender profiles', () => {
  it('the first profile becomes the default; fromEmail is canonical; later ones are not default unless asked', async () => {
    const first = await createSenderProfile(deps, A, profile('ann'));
    expect(first).toMatchObject({ isDefault: true, fromEmail: 'ann@example.org', replyTo: null });
    expect(first.createdAt).toBeInstanceOf(Date);
    await createSenderProfile(deps, A, profile('bob'));
    expect(await defaults(A)).toEqual(['ann']);
    await createSenderProfile(deps, A, profile('cat', { isDefault: true }));
    expect(await defaults(A)).toEqual(['cat']);
  });

  it('PUT isDefault moves the flag; clearing it on the default is refused', async () => {
    const ann = await createSenderProfile(deps, A, profile('ann'));
    const bob = await createSenderProfile(deps, A, profile('bob'));
    await updateSenderProfile(deps, A, bob._id, profile('bob', { isDefault: true }));
    expect(await defaults(A)).toEqual(['bob']);
    expect((await errorOf(updateSenderProfile(deps, A, bob._id, profile('bob', { isDefault: false })))).errorId).toBe('sender_profile_is_default');
    // Without isDefault the flag stays where it is.
    await updateSenderProfile(deps, A, bob._id, profile('bobby'));
    expect(await defaults(A)).toEqual(['bobby']);
    await updateSenderProfile(deps, A, ann._id, profile('ann', { isDefault: false }));
    expect(await defaults(A)).toEqual(['bobby']);
  });

  it('deleting the default promotes the oldest remaining profile', async () => {
    const ann = await createSenderProfile(deps, A, profile('ann'));
    const bob = await createSenderProfile(deps, A, profile('bob'));
    await createSenderProfile(deps, A, profile('cat'));
    await deleteSenderProfile(deps, A, ann._id);
    expect(await defaults(A)).toEqual(['bob']);
    await deleteSenderProfile(deps, A, bob._id);
    expect(await defaults(A)).toEqual(['cat']);
  });

  it('concurrent first creates leave exactly one default', async () => {
    await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((n) => createSenderProfile(deps, A, profile(n))));
    expect(await defaults(A)).toHaveLength(1);
    await Promise.all(['g', 'h', 'i'].map((n) => createSenderProfile(deps, A, profile(n, { isDefault: true }))));
    expect(await defaults(A)).toHaveLength(1);
  });

  it('senderForSend: the default, a named one, sender_profile_required, sender_profile_not_found; per account', async () => {
    expect((await errorOf(senderForSend(deps, A, null))).errorId).toBe('sender_profile_required');
    const ann = await createSenderProfile(deps, A, profile('ann'));
    const bob = await createSenderProfile(deps, A, profile('bob'));
    expect((await senderForSend(deps, A, null))._id).toBe(ann._id);
    expect((await senderForSend(deps, A, bob._id.toUpperCase()))._id).toBe(bob._id);
    expect((await errorOf(senderForSend(deps, B, bob._id))).errorId).toBe('sender_profile_not_found');
    expect((await errorOf(senderForSend(deps, B, null))).errorId).toBe('sender_profile_required');
  });

  it('refuses bad values: blank name, header-breaking fromName, invalid addresses, other domains', async () => {
    expect((await errorOf(createSenderProfile(deps, A, profile('x', { name: '  ' })))).errorId).toBe('validation_failed');
    expect((await errorOf(createSenderProfile(deps, A, profile('x', { fromName: 'a\r\nBcc: evil@x.org' })))).errorId).toBe('validation_failed');
    expect((await errorOf(createSenderProfile(deps, A, profile('x', { fromEmail: 'not-an-address' })))).errorId).toBe('invalid_email');
    expect((await errorOf(createSenderProfile(deps, A, profile('x', { replyTo: 'a@b@c' })))).errorId).toBe('invalid_email');
    const strict = { ...deps, allowedFromDomains: ['example.com'] };
    const err = await errorOf(createSenderProfile(strict, A, profile('x')));
    expect(err.errorId).toBe('sender_domain_not_allowed');
    expect((await createSenderProfile(strict, A, profile('x', { fromEmail: 'X@EXAMPLE.com' }))).fromEmail).toBe('x@example.com');
  });
});

const tpl = (name: string, extra: Record<string, unknown> = {}) => ({ name, subject: 'Hi {{ subscriber.firstName }}', html: '<p>{{ greeting }} {{ subscriber.email }}</p>', ...extra });

describe('email templates', () => {
  it('stores sources, variables, version 1, tracking defaults; a PUT counts a save', async () => {
    const t = await createEmailTemplate(deps, A, tpl('welcome'));
    expect(t).toMatchObject({ name: 'welcome', text: null, version: 1, variables: ['greeting', 'subscriber'], tracking: { opens: true, clicks: true }, senderProfileId: null });
    const u = await updateEmailTemplate(deps, A, 'welcome', tpl('welcome', { text: '{{ other }}', tracking: { opens: false } }));
    expect(u).toMatchObject({ version: 2, text: '{{ other }}', variables: ['greeting', 'other', 'subscriber'], tracking: { opens: false, clicks: true } });
    expect(u.updatedAt.getTime()).toBeGreaterThan(u.createdAt.getTime());
  });

  it('name unique per account (another account may use it); immutable on PUT', async () => {
    await createEmailTemplate(deps, A, tpl('welcome'));
    expect((await errorOf(createEmailTemplate(deps, A, tpl('welcome')))).errorId).toBe('template_name_exists');
    await createEmailTemplate(deps, B, tpl('welcome'));
    expect((await errorOf(updateEmailTemplate(deps, A, 'welcome', tpl('hello')))).errorId).toBe('template_name_immutable');
    expect((await errorOf(updateEmailTemplate(deps, A, 'nope', tpl('nope')))).errorId).toBe('template_not_found');
  });

  it('a syntax error refuses the save with line and column', async () => {
    const err = await errorOf(createEmailTemplate(deps, A, tpl('bad', { html: '<p>\n\n  {% if x %}open' })));
    expect(err.errorId).toBe('template_syntax_error');
    expect(err.details).toEqual([{ path: 'html', problem: expect.stringMatching(/^line 3, col 3: /) }]);
  });

  it('senderProfileId must be a profile of the account; a named profile cannot be deleted', async () => {
    const ann = await createSenderProfile(deps, A, profile('ann'));
    expect((await errorOf(createEmailTemplate(deps, B, tpl('w', { senderProfileId: ann._id })))).errorId).toBe('sender_profile_not_found');
    await createEmailTemplate(deps, A, tpl('w', { senderProfileId: ann._id }));
    const err = await errorOf(deleteSenderProfile(deps, A, ann._id));
    expect(err.errorId).toBe('sender_profile_in_use');
    expect(err.details).toEqual([{ path: 'emailTemplates.w', problem: expect.any(String) }]);
    await deleteEmailTemplate(deps, A, 'w');
    await deleteSenderProfile(deps, A, ann._id);
  });

  it('a template named by an automation step cannot be deleted', async () => {
    const automations = tmp.store.collection(AUTOMATIONS, automationSchema);
    await automations.insertOne({ _id: 'auto-1', accountId: A, name: 'Onboarding', active: true, steps: [{ type: 'SEND_EMAIL', templateName: 'welcome' }], createdAt: new Date() });
    await createEmailTemplate(deps, A, tpl('welcome'));
    expect((await errorOf(deleteEmailTemplate(deps, A, 'welcome'))).errorId).toBe('template_in_use');
    await createEmailTemplate(deps, B, tpl('welcome'));
    await deleteEmailTemplate(deps, B, 'welcome');
  });

  it('templateForSend: compiled once per version; a recreated name never gets the old compiled form', async () => {
    await createEmailTemplate(deps, A, tpl('w'));
    const first = await templateForSend(deps, A, 'w');
    expect((await templateForSend(deps, A, 'w')).compiled).toBe(first.compiled);
    await updateEmailTemplate(deps, A, 'w', tpl('w', { html: '<b>v2</b>' }));
    const second = await templateForSend(deps, A, 'w');
    expect(second.compiled).not.toBe(first.compiled);
    await deleteEmailTemplate(deps, A, 'w');
    expect((await errorOf(templateForSend(deps, A, 'w'))).errorId).toBe('template_not_found');
    await createEmailTemplate(deps, A, tpl('w', { html: '<i>new</i>' }));
    const again = await renderEmailTemplate(deps, A, 'w', {});
    expect(again.html).toContain('<i>new</i>');
    expect((await errorOf(templateForSend(deps, B, 'w'))).errorId).toBe('template_not_found');
  });

  it('render: escaping, raw, reserved keys, subscriber {email} for unknown addresses', async () => {
    await createEmailTemplate(deps, A, tpl('w', { subject: 'Hi {{ name }}', html: '<p>{{ v }}|{{ v | raw }}|{{ subscriber.email }}</p>' }));
    const out = await renderEmailTemplate(deps, A, 'w', { email: 'Ann@Example.org', substitutionData: { v: '<script>', name: 'a\r\nBcc: x@y.z' } });
    expect(out.html).toContain('&lt;script&gt;|<script>|ann@example.org');
    expect(out.subject).toBe('Hi a Bcc: x@y.z');
    expect((await errorOf(renderEmailTemplate(deps, A, 'w', { substitutionData: { links: 1 } }))).errorId).toBe('reserved_substitution_key');
    expect((await errorOf(renderEmailTemplate(deps, A, 'w', { email: 'nope' }))).errorId).toBe('invalid_email');
  });
});
