// SenderProfileService: gRPC <-> use cases (app/sender-profiles.ts), one use case per RPC.
import { accountOf, invalid, type AsyncHandlers } from '@mailer/kit';
import type { senderProfilesV1 } from '@mailer/proto';
import type { CatalogDeps } from '../app/catalog-deps';
import { createSenderProfile, deleteSenderProfile, getSenderProfile, listSenderProfiles, updateSenderProfile, type SenderProfileRequest } from '../app/sender-profiles';
import type { SenderProfileDoc } from '../store/sender-profiles';

export function senderProfileToProto(p: SenderProfileDoc): senderProfilesV1.SenderProfile {
  return {
    id: p._id,
    name: p.name,
    fromEmail: p.fromEmail,
    fromName: p.fromName,
    replyTo: p.replyTo ?? undefined,
    isDefault: p.isDefault,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

function input(p: senderProfilesV1.SenderProfileInput | undefined): SenderProfileRequest {
  if (!p) throw invalid('validation_failed', 'profile is required', [{ path: 'body', problem: 'required' }]);
  return { name: p.name, fromEmail: p.fromEmail, fromName: p.fromName, replyTo: p.replyTo ?? null, isDefault: p.isDefault ?? null };
}

/** Ids are compared lowercase (paths accept UUIDs in any case). */
const idOf = (id: string) => (id ?? '').toLowerCase();

export function senderProfileHandlers(deps: CatalogDeps): AsyncHandlers<senderProfilesV1.SenderProfileServiceServer> {
  return {
    listSenderProfiles: async (req) => ({ items: (await listSenderProfiles(deps, accountOf(req))).map(senderProfileToProto) }),
    getSenderProfile: async (req) => ({ senderProfile: senderProfileToProto(await getSenderProfile(deps, accountOf(req), idOf(req.senderProfileId))) }),
    createSenderProfile: async (req) => ({ senderProfile: senderProfileToProto(await createSenderProfile(deps, accountOf(req), input(req.profile))) }),
    updateSenderProfile: async (req) => ({
      senderProfile: senderProfileToProto(await updateSenderProfile(deps, accountOf(req), idOf(req.senderProfileId), input(req.profile))),
    }),
    deleteSenderProfile: async (req) => {
      await deleteSenderProfile(deps, accountOf(req), idOf(req.senderProfileId));
      return {};
    },
  };
}
