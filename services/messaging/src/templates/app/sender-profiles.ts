// Sender profile use cases (the API contract "Sender profiles"), and senderForSend, the one way a send picks
// its sender.
//
// Decisions (published in the OpenAPI document):
// - `isDefault: true` on create or PUT moves the default flag to that profile. `isDefault: false`
//   (or absent) on PUT of the current default is refused with `409 sender_profile_is_default`
//   only when explicitly false: an account always has exactly one default, so the flag can only be
//   moved, never cleared.
// - Deleting the default profile promotes the oldest remaining profile (no request is refused for
//   it); deleting the last profile leaves the account without any (sends then answer
//   `409 sender_profile_required`).
// - A profile named by an email template cannot be deleted (`409 sender_profile_in_use`, the
//   templates in `details`), nor one a form names (asked from the form service: `forms.<id>`), an RSS
//   newsletter or a SCHEDULED or SENDING broadcast sends from.
// - With MAIL_DOMAIN_VERIFICATION=required the fromEmail domain must be a VERIFIED sending domain of
//   the account on create, on PUT and at every send (`409 sender_domain_not_verified`): a profile saved
//   before verification was required, or whose domain lost its proof, cannot send.
import { failedPrecondition, notFound } from '@mailer/kit';
import type { Store } from '@mailer/store';
import { domainOf, senderProfileValues, type SenderProfileInput } from '../domain/sender-profile';
import { emailTemplatesOf } from '../store/email-templates';
import { senderProfilesOf, type SenderProfileDoc } from '../store/sender-profiles';
import type { CatalogDeps } from './catalog-deps';
import type { DomainPolicy } from './sending-domains';

export const senderProfileNotFound = (id: string) => notFound('sender_profile_not_found', `no sender profile with id ${id} exists in the account`);

/**
 * The profile a send uses: the named one, or the account's default when `senderProfileId` is null.
 * Throws `404 sender_profile_not_found` (named, unknown), `409 sender_profile_required` (no
 * profile at all) or `409 sender_domain_not_verified` (its domain, when verification is required).
 */
export async function senderForSend(deps: { store: Store; domains: Pick<DomainPolicy, 'requireVerified'> }, accountId: string, senderProfileId: string | null): Promise<SenderProfileDoc> {
  const profiles = senderProfilesOf(deps.store, accountId);
  const profile = senderProfileId ? await profiles.get(senderProfileId.toLowerCase()) : await profiles.getDefault();
  if (!profile) {
    if (senderProfileId) throw senderProfileNotFound(senderProfileId);
    throw failedPrecondition('sender_profile_required', 'the account has no sender profile: create one (POST /sender-profiles) before sending');
  }
  await deps.domains.requireVerified(accountId, domainOf(profile.fromEmail), 'SENDER', `senderProfiles.${profile._id}`);
  return profile;
}

export interface SenderProfileRequest extends SenderProfileInput {
  isDefault?: boolean | null;
}

export const listSenderProfiles = (deps: CatalogDeps, accountId: string) => senderProfilesOf(deps.store, accountId).list();

export async function getSenderProfile(deps: CatalogDeps, accountId: string, id: string): Promise<SenderProfileDoc> {
  const profile = await senderProfilesOf(deps.store, accountId).get(id);
  if (!profile) throw senderProfileNotFound(id);
  return profile;
}

/** The profile's values, its fromEmail domain checked against the account's verified domains. */
async function checkedValues(deps: CatalogDeps, accountId: string, req: SenderProfileRequest) {
  const values = senderProfileValues(req, deps.allowedFromDomains);
  await deps.domains.requireVerified(accountId, domainOf(values.fromEmail), 'SENDER', 'body.fromEmail');
  return values;
}

export async function createSenderProfile(deps: CatalogDeps, accountId: string, req: SenderProfileRequest): Promise<SenderProfileDoc> {
  const values = await checkedValues(deps, accountId, req);
  const now = deps.now();
  return senderProfilesOf(deps.store, accountId).insert({ _id: deps.newId(), ...values, createdAt: now, updatedAt: now }, req.isDefault === true);
}

export async function updateSenderProfile(deps: CatalogDeps, accountId: string, id: string, req: SenderProfileRequest): Promise<SenderProfileDoc> {
  const values = await checkedValues(deps, accountId, req);
  const profiles = senderProfilesOf(deps.store, accountId);
  if (req.isDefault === false) {
    const current = await profiles.get(id);
    if (!current) throw senderProfileNotFound(id);
    if (current.isDefault) {
      throw failedPrecondition('sender_profile_is_default', 'the default sender profile cannot stop being the default: make another profile the default instead', [
        { path: 'body.isDefault', problem: 'the profile is the account\'s default' },
      ]);
    }
  }
  const updated = await profiles.update(id, { ...values, updatedAt: deps.now() }, req.isDefault === true);
  if (!updated) throw senderProfileNotFound(id);
  return updated;
}

export async function deleteSenderProfile(deps: CatalogDeps, accountId: string, id: string): Promise<void> {
  const profiles = senderProfilesOf(deps.store, accountId);
  if (!(await profiles.get(id))) throw senderProfileNotFound(id);
  const templates = await emailTemplatesOf(deps.store, accountId).namingSender(id);
  if (templates.length) {
    throw failedPrecondition('sender_profile_in_use', `the sender profile is named by ${templates.length} email template(s); change them first`,
      templates.slice(0, 50).map((name) => ({ path: `emailTemplates.${name}`, problem: 'names this sender profile' })));
  }
  const forms = await deps.forms?.formsUsing(accountId, { senderProfileId: id });
  if (forms?.count) {
    throw failedPrecondition('sender_profile_in_use', `the sender profile sends the confirmation mail of ${forms.count} form(s); change them first`,
      forms.forms.map((f) => ({ path: `forms.${f.id}`, problem: `form "${f.name}" names this sender profile` })));
  }
  const sending = await deps.broadcasts?.naming(accountId, 'senderProfileId', id, 50);
  if (sending?.count) {
    throw failedPrecondition('sender_profile_in_use', `the sender profile sends ${sending.count} scheduled or sending broadcast(s); cancel them or wait until they are sent`,
      sending.broadcasts.map((b) => ({ path: `broadcasts.${b._id}`, problem: `broadcast "${b.name}" sends from this sender profile` })));
  }
  const newsletters = await deps.newsletters?.newslettersUsing(accountId, id);
  if (newsletters?.count) {
    throw failedPrecondition('sender_profile_in_use', `the sender profile sends ${newsletters.count} RSS newsletter(s); change them first`,
      newsletters.newsletters.map((n) => ({ path: `rssNewsletters.${n.id}`, problem: `RSS newsletter "${n.name}" sends from this sender profile` })));
  }
  if (!(await profiles.remove(id))) throw senderProfileNotFound(id);
}
