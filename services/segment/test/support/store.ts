/**
 * A real embedded store holding Contact documents, for executing compiled filters in tests.
 * The schema is the projection's own (src/store/contact-schemas.ts): filters are cast through it, as
 * mongoose does on MongoDB.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Collection, Store, openStore } from '@mailer/store';
import type { Contact } from '../../src/domain/contact';
import { contactSchema } from '../../src/store/contacts';

export { contactSchema };

export interface ContactStore {
  store: Store;
  contacts: Collection<Contact>;
  close(): Promise<void>;
}

export async function openContactStore(): Promise<ContactStore> {
  const dir = mkdtempSync(join(tmpdir(), 'segment-test-'));
  const store = await openStore({ dataDir: dir });
  const contacts = store.collection<Contact>('contacts', contactSchema);
  return {
    store,
    contacts,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
