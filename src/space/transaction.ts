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
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import { DreamdError, MemoryFormatError, errorMessage } from '../errors.js';
import type { RunSummary } from '../core/run.js';
import { isMergeable } from '../memory/arrived-bytes.js';
import { factsToHold, holdInPending } from './deferred-facts.js';
import {
  guardedReplace,
  parseBase,
  recheckLate,
  serializeBase,
  type HeldOldFile,
  type ReplaceOutcome,
  type WindowObserver,
} from './guarded-replace.js';
import { sha256 } from '../memory/hash.js';
import { assertStateIsOwn, isStagingFolder, stateProblems } from './state-dir.js';
import { describeIoError } from './io-errors.js';
import { writableText } from '../memory/visible-text.js';
import {
  LEDGER_FILE,
  LOCK_FILE,
  PROPOSALS_DIR,
  RUNS_DIR,
  STAGING_DIR,
  assertRunId,
  readTextIfExists,
  spaceFilePath,
  runRecordPath,
} from './paths.js';
import {
  nextRunSeq,
  parseRunRecord,
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
  entries: z.array(
    z.object({
      path: z.string(),
      staged: z.string().nullable(),
      /**
       * Staging file holding the bytes `staged` was built from (`{"base": text | null}`): the target is compared
       * with them before and after the rename (guarded-replace.ts). Absent: moved without comparing (dreamd's
       * own state, and staging directories of earlier versions).
       */
      base: z.string().optional(),
    }),
  ),
});
type Manifest = z.infer<typeof ManifestSchema>;

/**
 * Named points of a commit, in order, passed to `faultInjection` just before the step runs:
 * `stage` (nothing written yet), `commit` (staged, not committed), `apply:<n>` (committed, n files moved),
 * `checked:<path>` (a compared file's check found the bytes it expects, its rename is next; once per attempt),
 * `cleanup` (all moved, staging still there).
 */
export type CommitStep = 'stage' | 'commit' | `apply:${number}` | `checked:${string}` | 'cleanup';

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
  /**
   * The bytes each file's new content was built from (what the run read), by relative path; null: the file
   * did not exist. `MEMORY.md` and the topic files are compared with them before and after their rename, and
   * bytes that arrived since are merged in (guarded-replace.ts). Omitted for a path: the bytes on disk when the
   * commit starts.
   */
  readonly basis?: ReadonlyMap<string, string | null>;
  /**
   * Bytes, by relative path, that a file's new content may hold as they are besides the file's own (the
   * bytes a rollback puts back): a hidden character a person wrote there is theirs (`memory/visible-text.ts`).
   */
  readonly theirs?: ReadonlyMap<string, string | null>;
  /** Test hook: called before each step; throw from it to simulate a crash there. */
  readonly faultInjection?: (step: CommitStep) => void;
  /** Measuring hook: milliseconds between each compare and its rename (the window no check can see). */
  readonly onRenameWindow?: WindowObserver;
}

/** What a maintenance run (forget, rollback, a note) passes on to its commit as it got it: the clock, the test hook. */
export type MaintenanceCommitOptions = Pick<CommitOptions, 'now' | 'faultInjection'>;

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

const RESERVED = [STAGING_DIR, RUNS_DIR, LOCK_FILE, LEDGER_FILE, PROPOSALS_DIR];

function assertWritable(relativePath: string): void {
  spaceFilePath('/', relativePath);
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

/** One file a commit writes (or deletes, `content` null), with the base a mergeable file was written from. */
interface CommitEntry {
  readonly path: string;
  readonly content: string | null;
  readonly base?: string | null;
}

/**
 * The memory files that change, as entries in apply order (the ledger last), and each one's change for the run
 * record. A file whose text stays the same is left out.
 */
async function changedEntries(
  memoryDir: string,
  options: CommitOptions,
): Promise<{ entries: CommitEntry[]; changes: Record<string, FileChange> }> {
  const changes: Record<string, FileChange> = {};
  const entries: CommitEntry[] = [];
  const paths = [...options.files.keys()].sort();
  for (const relativePath of paths) assertWritable(relativePath);
  const befores = await Promise.all(
    paths.map((relativePath) => readTextIfExists(spaceFilePath(memoryDir, relativePath))),
  );
  for (const [index, relativePath] of paths.entries()) {
    const before = befores[index] ?? null;
    // A person's hidden and bidi characters stay; only those dreamd's own text would bring are dropped.
    const content = writableText(relativePath, options.files.get(relativePath) ?? null, [
      before,
      options.basis?.get(relativePath),
      options.theirs?.get(relativePath),
    ]);
    if (before === content) continue;
    changes[relativePath] = { before, afterHash: content === null ? null : sha256(content) };
    if (content !== null && isMergeable(relativePath)) {
      const basis = options.basis?.has(relativePath) === true ? options.basis.get(relativePath) : before;
      entries.push({ path: relativePath, content, base: basis ?? null });
    } else entries.push({ path: relativePath, content });
  }
  entries.sort((a, b) => applyRank(a) - applyRank(b));
  if (options.ledger !== undefined)
    entries.push({ path: LEDGER_FILE, content: writableText(LEDGER_FILE, options.ledger) });
  return { entries, changes };
}

/** The run's record, next in the history; a run id already in it is refused. */
async function newRunRecord(
  memoryDir: string,
  options: CommitOptions,
  changes: Record<string, FileChange>,
  now: () => Date,
): Promise<RunRecord> {
  const { runId } = options;
  if ((await readTextIfExists(path.join(memoryDir, runRecordPath(runId)))) !== null) {
    throw new MemoryFormatError(
      `run ${runId} is already in the history; use a new run id`,
      runRecordPath(runId),
    );
  }
  const seq = await nextRunSeq(memoryDir);
  return {
    version: 1,
    runId,
    kind: options.runRecord.kind ?? 'consolidation',
    seq,
    committedAt: now().toISOString(),
    rollbackOf: options.runRecord.rollbackOf,
    summary: options.runRecord.summary,
    files: changes,
  };
}

/**
 * Writes every entry's content (and a mergeable file's base) and the manifest into a new staging directory,
 * durably. A failure removes the staging directory: memory is unchanged.
 */
async function stageEntries(
  stagingDir: string,
  runId: string,
  entries: readonly CommitEntry[],
): Promise<Manifest> {
  await createStagingDir(stagingDir).catch((error: unknown) => {
    throw describeIoError(error, path.join(STAGING_DIR, runId), 'stage the new memory files');
  });
  const manifest: Manifest = {
    runId,
    entries: entries.map((entry, index) => ({
      path: entry.path,
      staged: entry.content === null ? null : `file-${index}`,
      ...(entry.base !== undefined ? { base: `base-${index}` } : {}),
    })),
  };
  const staged: { file: string; content: string }[] = [];
  for (const [index, entry] of entries.entries()) {
    if (entry.content !== null)
      staged.push({ file: path.join(stagingDir, `file-${index}`), content: entry.content });
    if (entry.base !== undefined)
      staged.push({ file: path.join(stagingDir, `base-${index}`), content: serializeBase(entry.base) });
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
  return manifest;
}

/** Moves a committed run's files into place; a failure part way says how many are in place and that recovery ends it. */
async function applyCommitted(
  memoryDir: string,
  stagingDir: string,
  manifest: Manifest,
  options: CommitOptions,
): Promise<RunRecord | undefined> {
  const { runId, faultInjection } = options;
  const progress: { applied: number; file?: string } = { applied: 0 };
  try {
    return await applyStaged(memoryDir, stagingDir, manifest, {
      faultInjection,
      progress,
      observe: options.onRenameWindow,
    });
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
  await assertStateIsOwn(memoryDir);
  const now = options.now ?? (() => new Date());
  const { entries, changes } = await changedEntries(memoryDir, options);
  const record = await newRunRecord(memoryDir, options, changes, now);
  entries.push({ path: runRecordPath(runId), content: serializeRunRecord(record) });
  if (options.keepRuns !== undefined) {
    for (const old of await runsToPrune(memoryDir, options.keepRuns - 1))
      entries.push({ path: old, content: null });
  }

  faultInjection?.('stage');
  const stagingDir = path.join(memoryDir, STAGING_DIR, runId);
  const manifest = await stageEntries(stagingDir, runId, entries);
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
  const applied = await applyCommitted(memoryDir, stagingDir, manifest, options);
  return applied ?? record;
}

/** Memory files first, then the index, then deletions (see the header). Stable sort keeps paths sorted. */
function applyRank(entry: { path: string; content: string | null }): number {
  if (entry.content === null) return 2;
  return entry.path === INDEX_PATH ? 1 : 0;
}

/**
 * How long replaced files are watched after the last rename before the last look (`recheckLate`), in ms.
 * 50 ms: an appender writes into a replaced file only between its open and its write, which took at most
 * ~10 ms in the attack test on a loaded 2-core machine (a preempted process waits for a CPU); 50 ms is five
 * times that, and nothing next to a run's model calls.
 */
const WATCH_MS = 50;

interface ApplyOptions {
  readonly faultInjection?: ((step: CommitStep) => void) | undefined;
  readonly progress?: { applied: number; file?: string };
  readonly observe?: WindowObserver | undefined;
}

/** What the compare-and-merge did to one file, for the run record. */
/** A compared file's outcome, with the bytes the run meant to write (`planned`). */
type Settled = { readonly path: string; readonly target: string; readonly planned: string } & ReplaceOutcome;

/**
 * Move the staged files into place in manifest order; compared files go through `guardedReplace`. Before the
 * first file of dreamd's state (the ledger, the run record), the memory files' directories are fsynced and
 * their old files looked at a last time, so the run record says what is really in place: the hash of merged
 * bytes, and the files deferred (their facts are held in the pending file, and the reason is a problem of the
 * run). Returns the run record as stored when this transaction carries one.
 */
async function applyStaged(
  memoryDir: string,
  stagingDir: string,
  manifest: Manifest,
  options: ApplyOptions = {},
): Promise<RunRecord | undefined> {
  const { faultInjection, observe } = options;
  const progress = options.progress ?? { applied: 0 };
  const touched = new Set<string>();
  const held: HeldOldFile[] = [];
  const settled: Settled[] = [];
  let settledMemory = false;
  let record: RunRecord | undefined;
  let lastRenameAt = 0;
  const settleMemory = async (): Promise<void> => {
    if (settledMemory) return;
    settledMemory = true;
    await Promise.all([...touched].map((directory) => fsyncDirectory(directory)));
    // A writer that opened a file before its rename and was preempted before its write still writes into the
    // old file: give it WATCH_MS after the last rename before the last look.
    const wait = WATCH_MS - (performance.now() - lastRenameAt);
    if (held.length > 0 && wait > 0) await delay(wait);
    for (const old of held.splice(0)) {
      const outcome = await recheckLate(old, observe);
      settled.push({ path: old.file.path, target: old.file.target, planned: old.file.content, ...outcome });
    }
    const deferrals = settled.filter((outcome) => outcome.status === 'deferred');
    for (const outcome of deferrals)
      await holdInPending(memoryDir, factsToHold(outcome.path, outcome.seen, outcome.content));
  };
  try {
    for (const [index, entry] of manifest.entries.entries()) {
      faultInjection?.(`apply:${index}`);
      const target = spaceFilePath(memoryDir, entry.path);
      progress.file = entry.path;
      const isState = entry.path === LEDGER_FILE || entry.path.startsWith(`${RUNS_DIR}/`);
      if (isState) await settleMemory();
      touched.add(path.dirname(target));
      if (entry.staged === null) await rm(target, { force: true });
      else if (entry.base !== undefined) {
        const outcome = await applyCompared(
          stagingDir,
          entry.staged,
          entry.base,
          entry.path,
          target,
          observe,
          faultInjection,
        );
        lastRenameAt = performance.now();
        if (outcome !== undefined) {
          if (outcome.status === 'replaced' && outcome.held !== undefined) held.push(outcome.held);
          else settled.push({ path: entry.path, target, ...outcome });
        }
      } else {
        if (entry.path === runRecordPath(manifest.runId))
          record = await amendRunRecord(path.join(stagingDir, entry.staged), settled);
        await renameInto(path.join(stagingDir, entry.staged), target);
      }
      progress.applied = index + 1;
    }
    await settleMemory();
  } finally {
    await Promise.all(
      held.flatMap((old) => old.watched.map((entry) => entry.handle.close().catch(() => undefined))),
    );
  }
  // One fsync per directory, after its last rename: the renames and deletions are durable before the marker
  // goes (below). Independent directories, so in parallel.
  await Promise.all([...touched].map((directory) => fsyncDirectory(directory)));
  faultInjection?.('cleanup');
  await removeStagingDir(stagingDir);
  return record;
}

/** One compared file (see guardedReplace); undefined when it was moved already (an earlier attempt). */
async function applyCompared(
  stagingDir: string,
  staged: string,
  baseName: string,
  relativePath: string,
  target: string,
  observe: WindowObserver | undefined,
  faultInjection: ((step: CommitStep) => void) | undefined,
): Promise<(ReplaceOutcome & { readonly planned: string }) | undefined> {
  const stagedFile = path.join(stagingDir, staged);
  const baseFile = path.join(stagingDir, baseName);
  const [content, baseText] = await Promise.all([readTextIfExists(stagedFile), readTextIfExists(baseFile)]);
  if (content === null) return undefined;
  const base = parseBase(baseText);
  if (base === undefined) {
    // The base cannot be read (outside damage): never replace blindly, keep the file as it is and defer.
    await unlinkIfExists(stagedFile);
    return {
      planned: content,
      status: 'deferred',
      seen: await readTextIfExists(target),
      content,
      reason: `${relativePath}: the bytes this run read are unreadable in staging; the file is kept as it is`,
    };
  }
  const outcome = await guardedReplace(
    {
      path: relativePath,
      target,
      staged: stagedFile,
      base,
      content,
      ...(faultInjection === undefined ? {} : { onChecked: () => faultInjection(`checked:${relativePath}`) }),
    },
    observe,
  );
  return { ...outcome, planned: content };
}

/** sha256 of a file's bytes now; null when it is gone. */
async function hashOf(file: string): Promise<string | null> {
  const text = await readTextIfExists(file);
  return text === null ? null : sha256(text);
}

/**
 * The staged run record, amended with what the compare-and-merge did: merged bytes get their real hash, a
 * deferred file is left out of the record (it did not change) and its reason becomes a problem of the run.
 */
async function amendRunRecord(
  stagedRecord: string,
  settled: readonly Settled[],
): Promise<RunRecord | undefined> {
  const text = await readTextIfExists(stagedRecord);
  if (text === null) return undefined;
  const record = parseRunRecord(text, stagedRecord);
  const files = { ...record.files };
  const problems = [...record.summary.problems];
  let amendments = 0;
  for (const outcome of settled) {
    const change = files[outcome.path];
    if (change === undefined) continue;
    if (outcome.status === 'deferred') {
      // Given up before its bytes landed: the file did not change. After: it holds them, merged.
      if (outcome.landed === true)
        files[outcome.path] = { ...change, afterHash: await hashOf(outcome.target) };
      else delete files[outcome.path];
      problems.push({ file: outcome.path, reason: outcome.reason, kind: 'memory' });
      amendments += 1;
    } else if (sha256(outcome.content) !== change.afterHash) {
      files[outcome.path] = { ...change, afterHash: sha256(outcome.content), planned: outcome.planned };
      amendments += 1;
    }
  }
  if (amendments === 0) return record;
  const amended: RunRecord = { ...record, files, summary: { ...record.summary, problems } };
  const temporary = `${stagedRecord}.next`;
  await unlinkIfExists(temporary);
  await writeFile(temporary, serializeRunRecord(amended), { flag: 'wx' });
  await rename(temporary, stagedRecord);
  return amended;
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
  // A staging folder that is a link is never followed; the lock and status say why the space cannot run.
  if ((await stateProblems(memoryDir)).length > 0) return false;
  let names: string[];
  try {
    names = await readdir(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  for (const name of names) {
    if (!(await isStagingFolder(root, name))) continue;
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
  await assertStateIsOwn(memoryDir);
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
    // A stray file (`.DS_Store`) or a link there is not a transaction: left alone, never followed.
    if (!(await isStagingFolder(root, name))) continue;
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
