/**
 * One run's writes as a single transaction over several files.
 *
 * States of `.dreamd/staging/<runId>/`:
 *   absent            nothing started, or finished and cleaned up
 *   staged            files and manifest written and fsynced, no COMMITTED marker: discarded by recovery
 *   committed         COMMITTED marker exists (its name is the commit point, made durable by a directory fsync
 *                     after every staged file is durable; its text, the commit time, is informational):
 *                     recovery moves every staged file into place
 *   applying          some files moved: recovery moves the rest (a moved file is gone from staging, so
 *                     moving again is a no-op) and deletes what the manifest deletes
 * Order of the moves (manifest order): new and changed memory files (topic files, fact files, quarantine)
 * first, then the index `MEMORY.md`, then deletions, then the ledger, then the run record, then pruned old run
 * records. So a commit interrupted anywhere never shows an index naming a file that is not there yet, state
 * never gets ahead of memory, and a crash at any instant leaves all the old bytes or (after `recoverMemory`)
 * all the new ones. Callers hold the space's lock (`acquireLock`) and call `recoverMemory` before reading
 * memory; readers without the lock call `recoverSpace` (recover-space.ts).
 */
import {
  mkdir,
  open,
  readdir,
  rename,
  rm,
  rmdir,
  unlink,
  writeFile,
  type FileHandle,
} from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { DreamdError, MemoryFormatError, errorMessage } from '../errors.js';
import type { RunSummary } from '../core/run.js';
import { sha256 } from './hash.js';
import { describeIoError } from './io-errors.js';
import { writableText } from './visible-text.js';
import {
  LEDGER_FILE,
  LOCK_FILE,
  RUNS_DIR,
  STAGING_DIR,
  assertRunId,
  readTextIfExists,
  resolveInside,
  runRecordPath,
} from './paths.js';
import {
  nextRunSeq,
  runsToPrune,
  serializeRunRecord,
  type FileChange,
  type RunKind,
  type RunRecord,
} from './run-history.js';

const COMMITTED_MARKER = 'COMMITTED';
/** The index: moved after every file it may name, before any deletion. */
const INDEX_PATH = 'MEMORY.md';
const MANIFEST_FILE = 'manifest.json';

const ManifestSchema = z.object({
  runId: z.string(),
  /** In the order they are applied. `staged` is the file under the staging dir; null deletes the target. */
  entries: z.array(z.object({ path: z.string(), staged: z.string().nullable() })),
});
type Manifest = z.infer<typeof ManifestSchema>;

/**
 * Named points of a commit, in order, passed to `faultInjection` just before the step runs:
 * `stage` (nothing written yet), `commit` (staged, not committed), `apply:<n>` (committed, n files moved),
 * `cleanup` (all moved, staging still there).
 */
export type CommitStep = 'stage' | 'commit' | `apply:${number}` | 'cleanup';

export interface CommitOptions {
  readonly runId: string;
  /** New content per relative path; null deletes the file. Unchanged files are left out of the record. */
  readonly files: ReadonlyMap<string, string | null>;
  /** New content of `.dreamd/ledger.json` (see `nextLedgerContent`); omitted: the ledger stays. */
  readonly ledger?: string;
  readonly runRecord: { readonly summary: RunSummary; readonly kind?: RunKind; readonly rollbackOf?: string };
  readonly now?: () => Date;
  /**
   * The fence: awaited after staging, just before the commit point. Throwing from it (LockLostError) discards
   * the staged files and writes nothing.
   */
  readonly beforeCommit?: () => Promise<void>;
  /**
   * Run records to keep (`history.keepRuns`); older ones are deleted in this same transaction. The newest
   * successful consolidation is always kept (the time gate reads it). Omitted: every record is kept.
   */
  readonly keepRuns?: number;
  /** Test hook: called before each step; throw from it to simulate a crash there. */
  readonly faultInjection?: (step: CommitStep) => void;
}

/**
 * A commit failed after its commit point: some files are in place, the rest wait in staging. Memory is not
 * "unchanged": the next command that reads memory (or the next run) finishes the transaction.
 */
export class CommitIncompleteError extends DreamdError {
  override readonly name = 'CommitIncompleteError';
  constructor(
    message: string,
    readonly runId: string,
    /** Files moved into place before the failure, and in all. */
    readonly applied: number,
    readonly total: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const RESERVED = [STAGING_DIR, RUNS_DIR, LOCK_FILE, LEDGER_FILE];

function assertWritable(relativePath: string): void {
  resolveInside('/', relativePath);
  if (
    RESERVED.some(
      (reserved) =>
        relativePath === reserved ||
        relativePath.startsWith(`${reserved}/`) ||
        relativePath.startsWith(`${reserved}.`),
    )
  ) {
    throw new MemoryFormatError(
      `${relativePath} is dreamd's own state; it cannot be written as a memory file`,
      relativePath,
    );
  }
}

async function fsyncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Create every file (none may exist) with its content and make them durable: bytes fsynced, and the
 * directories holding them fsynced, so their names are on disk too. All at once: the fsyncs are independent,
 * and the file system commits them together. No temp file and rename: only staging files are written this
 * way, in a directory of the run's own that nobody reads before the COMMITTED marker exists, and the marker is
 * created only after this resolves. A crash before that leaves an uncommitted staging directory, which
 * recovery discards.
 */
async function writeNewDurable(
  files: readonly { file: string; content: string }[],
  directories: readonly string[],
): Promise<void> {
  const handles: FileHandle[] = [];
  try {
    await Promise.all(
      files.map(async ({ file, content }) => {
        const handle = await open(file, 'wx');
        handles.push(handle);
        await handle.writeFile(content, 'utf8');
      }),
    );
    await Promise.all([
      ...handles.map((handle) => handle.sync()),
      ...directories.map((directory) => fsyncDirectory(directory)),
    ]);
  } finally {
    await Promise.all(handles.map((handle) => handle.close().catch(() => undefined)));
  }
}

/**
 * An empty staging directory for this run; a leftover of the same run id is removed. Staged files sit in it
 * directly (`file-<n>`), next to the manifest, so one directory fsync covers all their names. (Staging
 * directories of earlier versions kept them under `files/`; recovery follows the manifest either way.)
 */
async function createStagingDir(stagingDir: string): Promise<void> {
  try {
    await mkdir(stagingDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      await mkdir(path.dirname(stagingDir), { recursive: true });
    } else if (code === 'EEXIST') {
      await rm(stagingDir, { recursive: true, force: true });
    } else {
      throw error;
    }
    await mkdir(stagingDir);
  }
}

/** Rename, creating the target's directory when it is missing. False when the source is gone (moved already). */
async function renameInto(source: string, target: string): Promise<boolean> {
  try {
    await rename(source, target);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  // ENOENT: the source was moved by an earlier, interrupted attempt, or the target's directory is missing.
  await mkdir(path.dirname(target), { recursive: true });
  try {
    await rename(source, target);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return false;
  }
}

async function unlinkIfExists(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/**
 * Remove a staging directory once everything is in place. The marker first: a crash in the middle of the
 * removal leaves an uncommitted staging directory, which recovery discards (everything is in place already),
 * never a committed one without its manifest. What is left after the renames is the manifest (and, for a
 * staging directory of an earlier version, an empty `files/`): removed by name, anything else recursively.
 */
async function removeStagingDir(stagingDir: string): Promise<void> {
  await unlinkIfExists(path.join(stagingDir, COMMITTED_MARKER));
  await unlinkIfExists(path.join(stagingDir, MANIFEST_FILE));
  try {
    await rmdir(stagingDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    await rm(stagingDir, { recursive: true, force: true });
  }
}

/**
 * Write a run's files, ledger and run record as one transaction (see the states above). Returns the run
 * record as stored.
 *
 * Durability, in order: (1) every staged file and the manifest are written, then they and their directories
 * are fsynced, all in parallel (nothing refers to them yet); (2) the COMMITTED marker is created and the staging
 * directory fsynced again: from here on recovery finishes the run;
 * (3) files are renamed into place in manifest order and every directory they went to is fsynced once, after
 * the last rename (a crash before that fsync is covered by the durable marker: recovery redoes the renames
 * that did not reach the disk); (4) the staging directory is removed, marker first. Three fsync round trips in
 * a row, whatever the number of files (there were two per file).
 */
export async function commitMemoryChanges(memoryDir: string, options: CommitOptions): Promise<RunRecord> {
  const { runId, faultInjection } = options;
  assertRunId(runId);
  const now = options.now ?? (() => new Date());
  const changes: Record<string, FileChange> = {};
  const entries: { path: string; content: string | null }[] = [];
  const paths = [...options.files.keys()].sort();
  for (const relativePath of paths) assertWritable(relativePath);
  const befores = await Promise.all(
    paths.map((relativePath) => readTextIfExists(resolveInside(memoryDir, relativePath))),
  );
  for (const [index, relativePath] of paths.entries()) {
    const content = writableText(relativePath, options.files.get(relativePath) ?? null);
    const before = befores[index] ?? null;
    if (before === content) continue;
    changes[relativePath] = { before, afterHash: content === null ? null : sha256(content) };
    entries.push({ path: relativePath, content });
  }
  entries.sort((a, b) => applyRank(a) - applyRank(b));
  if (options.ledger !== undefined)
    entries.push({ path: LEDGER_FILE, content: writableText(LEDGER_FILE, options.ledger) });
  if ((await readTextIfExists(path.join(memoryDir, runRecordPath(runId)))) !== null) {
    throw new MemoryFormatError(
      `run ${runId} is already in the history; use a new run id`,
      runRecordPath(runId),
    );
  }
  const seq = await nextRunSeq(memoryDir);
  const record: RunRecord = {
    version: 1,
    runId,
    kind: options.runRecord.kind ?? 'consolidation',
    seq,
    committedAt: now().toISOString(),
    rollbackOf: options.runRecord.rollbackOf,
    summary: options.runRecord.summary,
    files: changes,
  };
  entries.push({ path: runRecordPath(runId), content: serializeRunRecord(record) });
  if (options.keepRuns !== undefined) {
    for (const old of await runsToPrune(memoryDir, options.keepRuns - 1))
      entries.push({ path: old, content: null });
  }

  faultInjection?.('stage');
  const stagingDir = path.join(memoryDir, STAGING_DIR, runId);
  await createStagingDir(stagingDir).catch((error: unknown) => {
    throw describeIoError(error, path.join(STAGING_DIR, runId), 'stage the new memory files');
  });
  const manifest: Manifest = {
    runId,
    entries: entries.map((entry, index) => ({
      path: entry.path,
      staged: entry.content === null ? null : `file-${index}`,
    })),
  };
  const staged: { file: string; content: string }[] = [];
  for (const [index, entry] of entries.entries()) {
    if (entry.content !== null)
      staged.push({ file: path.join(stagingDir, `file-${index}`), content: entry.content });
  }
  staged.push({ file: path.join(stagingDir, MANIFEST_FILE), content: JSON.stringify(manifest, null, 2) });
  try {
    await writeNewDurable(staged, [stagingDir]);
  } catch (error) {
    await rm(stagingDir, { recursive: true, force: true }).catch(() => undefined);
    throw describeIoError(
      error,
      path.join(STAGING_DIR, runId),
      'stage the new memory files; memory is unchanged',
    );
  }
  if (options.beforeCommit !== undefined) {
    try {
      await options.beforeCommit();
    } catch (error) {
      await rm(stagingDir, { recursive: true, force: true });
      throw error;
    }
  }

  faultInjection?.('commit');
  // The marker's name is the commit: recovery asks only whether it exists. So its bytes need no fsync of their
  // own; the fsync of the staging directory makes the name durable, after everything it refers to.
  await writeFile(path.join(stagingDir, COMMITTED_MARKER), `${record.committedAt}\n`, { flag: 'wx' });
  await fsyncDirectory(stagingDir);

  const progress: { applied: number; file?: string } = { applied: 0 };
  try {
    await applyStaged(memoryDir, stagingDir, manifest, faultInjection, progress);
  } catch (error) {
    const described = describeIoError(
      error,
      progress.file ?? STAGING_DIR,
      'move a committed file into place',
    );
    throw new CommitIncompleteError(
      `run ${runId} is committed but only ${progress.applied} of ${manifest.entries.length} files are in place: ` +
        `${errorMessage(described)}. The rest waits in ${STAGING_DIR}/${runId}; the next dreamd command that ` +
        'reads this memory (or the next run) moves it into place',
      runId,
      progress.applied,
      manifest.entries.length,
      { cause: error },
    );
  }
  return record;
}

/** Memory files first, then the index, then deletions (see the header). Stable sort keeps paths sorted. */
function applyRank(entry: { path: string; content: string | null }): number {
  if (entry.content === null) return 2;
  return entry.path === INDEX_PATH ? 1 : 0;
}

async function applyStaged(
  memoryDir: string,
  stagingDir: string,
  manifest: Manifest,
  faultInjection?: (step: CommitStep) => void,
  progress: { applied: number; file?: string } = { applied: 0 },
): Promise<void> {
  const touched = new Set<string>();
  for (const [index, entry] of manifest.entries.entries()) {
    faultInjection?.(`apply:${index}`);
    const target = resolveInside(memoryDir, entry.path);
    progress.file = entry.path;
    touched.add(path.dirname(target));
    if (entry.staged === null) await rm(target, { force: true });
    else await renameInto(path.join(stagingDir, entry.staged), target);
    progress.applied = index + 1;
  }
  // One fsync per directory, after its last rename: the renames and deletions are durable before the marker
  // goes (below). Independent directories, so in parallel.
  await Promise.all([...touched].map((directory) => fsyncDirectory(directory)));
  faultInjection?.('cleanup');
  await removeStagingDir(stagingDir);
}

export interface RecoveryReport {
  /** Runs that were committed and are now fully in place. */
  readonly finished: readonly string[];
  /** Runs that never committed; their staged files were removed and memory is as before them. */
  readonly discarded: readonly string[];
}

/**
 * True when a transaction is committed and not yet fully in place (a run crashed, or is applying it right
 * now). Cheap when there is nothing: one readdir of a directory that usually does not exist.
 */
export async function hasCommittedTransaction(memoryDir: string): Promise<boolean> {
  const root = path.join(memoryDir, STAGING_DIR);
  let names: string[];
  try {
    names = await readdir(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  for (const name of names) {
    if ((await readTextIfExists(path.join(root, name, COMMITTED_MARKER)).catch(() => null)) !== null)
      return true;
  }
  return false;
}

/**
 * Finish or discard interrupted transactions. Call it with the lock held, before reading memory.
 * Safe to run any number of times.
 */
export async function recoverMemory(memoryDir: string): Promise<RecoveryReport> {
  const root = path.join(memoryDir, STAGING_DIR);
  let names: string[];
  try {
    names = await readdir(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { finished: [], discarded: [] };
    throw error;
  }
  const finished: string[] = [];
  const discarded: string[] = [];
  for (const name of names.sort()) {
    const stagingDir = path.join(root, name);
    const marker = await readTextIfExists(path.join(stagingDir, COMMITTED_MARKER));
    if (marker === null) {
      await rm(stagingDir, { recursive: true, force: true });
      discarded.push(name);
      continue;
    }
    const manifestText = await readTextIfExists(path.join(stagingDir, MANIFEST_FILE));
    const manifest = ManifestSchema.safeParse(parseJsonOrUndefined(manifestText));
    if (!manifest.success) {
      // The marker is written only after the manifest is fsynced, so this means outside damage.
      throw new MemoryFormatError(
        `${STAGING_DIR}/${name}: committed but its manifest is unreadable; move the directory away and check the memory files by hand`,
        `${STAGING_DIR}/${name}`,
      );
    }
    await applyStaged(memoryDir, stagingDir, manifest.data);
    finished.push(name);
  }
  return { finished, discarded };
}

function parseJsonOrUndefined(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
