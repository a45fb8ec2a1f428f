/**
 * dreamd's state in a memory folder (`.dreamd/`: staging, run records, the ledger, the lock, pending facts)
 * lives only in folders and files dreamd creates itself. Anything else found at one of those names is never
 * followed and never written through:
 *
 *   a symbolic link     refused: writing through it would put dreamd's state (or read it) outside the memory
 *                       folder; the message names the link, where it points and the fix (remove the link)
 *   a folder where a    refused likewise (a file where a folder should be too)
 *   file should be
 *   a stray entry in    ignored: recovery looks only at folders there (`.DS_Store` is skipped), so it never
 *   `.dreamd/staging/`  blocks a space
 *
 * Checked with lstat, which never follows a link, before every lock, commit and recovery, and by `status`,
 * the scheduler's inspection and `doctor`, which report a space that cannot run and why. A refusal is never
 * permanent: it ends when the person removes what the message names.
 */
import { lstat, readlink } from 'node:fs/promises';
import path from 'node:path';
import { DreamdError } from '../errors.js';
import {
  FORGOTTEN_FILE,
  LEDGER_FILE,
  LOCK_FILE,
  BATCH_IN_FLIGHT_FILE,
  DEFERRED_FACTS_FILE,
  QUARANTINE_FILE,
  REVIEW_FILE,
  ARCHIVE_FILE,
  KEPT_OUT_FILE,
  RUNS_DIR,
  STAGING_DIR,
  STATE_DIR,
} from './paths.js';

/** dreamd's state at one of its names is something dreamd did not create; `file` is the relative path. */
export class StateHijackError extends DreamdError {
  override readonly name = 'StateHijackError';
  constructor(
    message: string,
    readonly file: string,
  ) {
    super(message);
  }
}

/** Folders dreamd creates in a memory folder, parents first. */
export const STATE_FOLDERS = [STATE_DIR, RUNS_DIR, STAGING_DIR, `${STATE_DIR}/conflicts`] as const;
/** Files dreamd writes there. */
export const STATE_FILES = [
  LEDGER_FILE,
  LOCK_FILE,
  `${LOCK_FILE}.takeover`,
  DEFERRED_FACTS_FILE,
  BATCH_IN_FLIGHT_FILE,
  FORGOTTEN_FILE,
  QUARANTINE_FILE,
  REVIEW_FILE,
  ARCHIVE_FILE,
  KEPT_OUT_FILE,
] as const;

async function problemAt(
  memoryDir: string,
  relative: string,
  kind: 'folder' | 'file',
): Promise<string | undefined> {
  const absolute = path.join(memoryDir, ...relative.split('/'));
  let info;
  try {
    info = await lstat(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
  if (info.isSymbolicLink()) {
    const target = await readlink(absolute).catch(() => 'somewhere unreadable');
    return (
      `${relative} is a symbolic link (to ${target}); dreamd keeps its state only in files and folders it creates ` +
      `inside the memory folder and never follows a link out of it. Remove the link (rm ${absolute}); the next run ` +
      'creates a real one (what the link points to is left alone)'
    );
  }
  if (kind === 'folder' && !info.isDirectory())
    return `${relative} should be a folder dreamd creates, but it is a file; move it away (${absolute}) and run again`;
  if (kind === 'file' && !info.isFile())
    return `${relative} should be a file dreamd writes, but it is ${info.isDirectory() ? 'a folder' : 'not a regular file'}; move it away (${absolute}) and run again`;
  return undefined;
}

/** Why dreamd's state in this memory folder cannot be used, one message per path; empty when it can. */
export async function stateProblems(memoryDir: string): Promise<{ file: string; reason: string }[]> {
  const problems: { file: string; reason: string }[] = [];
  for (const folder of STATE_FOLDERS) {
    const reason = await problemAt(memoryDir, folder, 'folder');
    if (reason !== undefined) problems.push({ file: folder, reason });
    // Nothing under a folder that is not dreamd's is looked at (it may lead out of the memory folder).
    if (reason !== undefined && folder === STATE_DIR) return problems;
  }
  for (const file of STATE_FILES) {
    const reason = await problemAt(memoryDir, file, 'file');
    if (reason !== undefined) problems.push({ file, reason });
  }
  return problems;
}

/** Throws StateHijackError naming the first path that is not dreamd's (see the header). */
export async function assertStateIsOwn(memoryDir: string): Promise<void> {
  const [first] = await stateProblems(memoryDir);
  if (first !== undefined) throw new StateHijackError(`${memoryDir}: ${first.reason}`, first.file);
}

/** True when `name` in `.dreamd/staging/` is a real folder (not a stray file, not a link). */
export async function isStagingFolder(stagingRoot: string, name: string): Promise<boolean> {
  try {
    return (await lstat(path.join(stagingRoot, name))).isDirectory();
  } catch {
    return false;
  }
}
