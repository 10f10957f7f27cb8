// What a process writes is readable by its own user only: the stores hold customers' data and
// secrets, logs hold addresses. umask 077 makes every directory created from here on 0700 and every
// file 0600, whatever creates it (the embedded store's engine, a library, a log file); a data
// directory left by an older version with wider modes is narrowed once at start.
import fs from 'node:fs';
import path from 'node:path';

type Warn = (extra: object, msg: string) => void;

/**
 * Sets umask 077 for the process, narrows `dataDir` itself (shared by the processes of one machine:
 * its other entries are theirs) and everything under `ownDir` (this process's own directory).
 */
export function ownerOnlyFiles(dataDir: string, ownDir: string, warn: Warn): void {
  process.umask(0o077);
  narrow(dataDir, false, warn);
  narrow(ownDir, true, warn);
}

function narrow(target: string, recursive: boolean, warn: Warn): void {
  try {
    const stat = fs.lstatSync(target);
    if (stat.isSymbolicLink()) return;
    if ((stat.mode & 0o077) !== 0) fs.chmodSync(target, stat.mode & 0o700);
    if (recursive && stat.isDirectory()) for (const name of fs.readdirSync(target)) narrow(path.join(target, name), true, warn);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // Missing: created 0700 by whoever makes it. Otherwise (a volume root owned by someone else) say so and go on.
    if (code !== 'ENOENT') warn({ path: target, err: (err as Error).message }, 'could not narrow the mode of a data path to its owner');
  }
}
