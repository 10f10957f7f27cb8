/**
 * `LOCK` in the data directory: the pid of the one process using it. The engine keeps a writer and a
 * reader connection and orders writes itself, which holds within one process only.
 */
import fs from 'node:fs';
import path from 'node:path';

export const LOCK_FILE = 'LOCK';

/** Data dirs locked by stores open in this process. */
const lockedHere = new Set<string>();

/**
 * Takes the directory lock. A lock left by a dead process (kill -9) is stale and taken over;
 * a live holder (another process, or another open store in this one) is an error, because two
 * processes would each order their writes alone. A lock naming our own pid that no store of ours
 * holds is stale too: a restarted container gets the same pid (often 1) as its predecessor.
 */
export function acquireLock(dir: string): void {
  const lockPath = path.join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      lockedHere.add(dir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(fs.readFileSync(lockPath, 'utf8').trim());
    if (holder === process.pid ? lockedHere.has(dir) : holder && isAlive(holder)) {
      throw new Error(`@mailer/store: data dir ${dir} is in use by process ${holder}${holder === process.pid ? ' (this process: close the other store first)' : ''}`);
    }
    fs.rmSync(lockPath, { force: true });
  }
  throw new Error(`@mailer/store: could not lock data dir ${dir}`);
}

export function releaseLock(dir: string): void {
  lockedHere.delete(dir);
  const lockPath = path.join(dir, LOCK_FILE);
  try {
    if (Number(fs.readFileSync(lockPath, 'utf8').trim()) === process.pid) fs.rmSync(lockPath, { force: true });
  } catch {
    // already gone
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
