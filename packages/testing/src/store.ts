// An embedded store in a fresh temporary directory, for in-process tests of repositories and use
// cases (`@mailer/testing/store`: a subpath of its own, it loads mongoose).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore, type Store, type StoreConfig } from '@mailer/store';

export interface TempStore {
  store: Store;
  dir: string;
  /** Closes the store and deletes its directory. */
  close(): Promise<void>;
}

/** `options`: other settings of the embedded store (a retention test's short `pruneIntervalMs`). */
export async function openTempStore(prefix = 'mailer-store', options: Omit<StoreConfig, 'dataDir' | 'mongodbUri'> = {}): Promise<TempStore> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const store = await openStore({ ...options, dataDir: dir });
  return {
    store,
    dir,
    async close() {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
