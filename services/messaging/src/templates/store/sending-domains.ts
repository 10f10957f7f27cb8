// Sending domains (collection 'sending_domains'): one record per account and domain, unique by a
// store index so two concurrent creates cannot both win. Two accounts may hold the same domain, each
// with its own token and key. The DKIM private key is stored sealed (app/sending-domains.ts), never in
// clear. Every query filters by accountId first.
import { DuplicateKeyError, mongoose, type Collection, type Store } from '@mailer/store';
import type { SendingDomainStatus } from '../domain/sending-domain';

const { Schema } = mongoose;

export interface SendingDomainDoc {
  _id: string;
  accountId: string;
  /** Canonical (lower case, ASCII). */
  domain: string;
  status: SendingDomainStatus;
  /** The value of the ownership record after `mailer-verification=`. */
  token: string;
  dkim: {
    selector: string;
    /** Base64 of the DER SubjectPublicKeyInfo (the `p=` of the DKIM record). */
    publicKey: string;
    /** The PKCS#8 PEM private key, sealed with the account and domain as context. */
    sealedPrivateKey: string;
  };
  /** What the last verification found wrong (empty before the first one). */
  problems: string[];
  verifiedAt: Date | null;
  checkedAt: Date | null;
  createdAt: Date;
}

export const sendingDomainSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    domain: { type: String, required: true },
    status: { type: String, required: true, enum: ['PENDING', 'VERIFIED'] },
    token: { type: String, required: true },
    dkim: {
      type: new Schema(
        { selector: { type: String, required: true }, publicKey: { type: String, required: true }, sealedPrivateKey: { type: String, required: true } },
        { _id: false },
      ),
      required: true,
    },
    problems: { type: [String], default: [] },
    verifiedAt: { type: Date, default: null },
    checkedAt: { type: Date, default: null },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
export const SENDING_DOMAIN_INDEX = 'accountId_1_domain_1';
sendingDomainSchema.index({ accountId: 1, domain: 1 }, { unique: true, name: SENDING_DOMAIN_INDEX });

export const SENDING_DOMAINS = 'sending_domains';

export const sendingDomainCollection = (store: Store): Collection<SendingDomainDoc> => store.collection<SendingDomainDoc>(SENDING_DOMAINS, sendingDomainSchema);

/** Thrown by insert when the account already has the domain. */
export class SendingDomainExistsError extends Error {
  constructor(readonly domain: string) {
    super(`the account already has the sending domain ${domain}`);
    this.name = 'SendingDomainExistsError';
  }
}

/** One account's sending domains. */
export function sendingDomainsOf(store: Store, accountId: string) {
  const domains = sendingDomainCollection(store);
  return {
    /** By domain name. */
    list: (): Promise<SendingDomainDoc[]> => domains.find({ accountId }, { sort: { domain: 1 } }),
    get: (domain: string): Promise<SendingDomainDoc | null> => domains.findOne({ accountId, domain }),
    /** The domain when the account has VERIFIED it, else null. */
    verified: (domain: string): Promise<SendingDomainDoc | null> => domains.findOne({ accountId, domain, status: 'VERIFIED' }),
    async insert(doc: Omit<SendingDomainDoc, 'accountId'>): Promise<SendingDomainDoc> {
      const full = { ...doc, accountId };
      try {
        await domains.insertOne(full);
      } catch (err) {
        if (err instanceof DuplicateKeyError && err.index === SENDING_DOMAIN_INDEX) throw new SendingDomainExistsError(doc.domain);
        throw err;
      }
      return full;
    },
    /** Records a verification's outcome; null when the domain is gone. */
    recordCheck: (domain: string, set: Pick<SendingDomainDoc, 'status' | 'problems' | 'verifiedAt' | 'checkedAt'>): Promise<SendingDomainDoc | null> =>
      domains.findOneAndUpdate({ accountId, domain }, { $set: set }, { returnDocument: 'after' }),
    /**
     * Replaces the sealed private key (re-sealed under the current key), conditional on the value read:
     * a delete or another re-seal meanwhile wins. Whether this one was written.
     */
    replaceSealedKey: async (domain: string, read: string, resealed: string): Promise<boolean> =>
      (await domains.updateOne({ accountId, domain, 'dkim.sealedPrivateKey': read }, { $set: { 'dkim.sealedPrivateKey': resealed } })).modifiedCount > 0,
    /** False when it did not exist. */
    remove: async (domain: string): Promise<boolean> => (await domains.deleteOne({ accountId, domain })) > 0,
  };
}
export type SendingDomainRepository = ReturnType<typeof sendingDomainsOf>;
