/**
 * Rollback: put back the bytes every file had before a run, as a new run of kind `rollback`.
 *
 * The ledger goes back with the memory, in the same transaction: the run's sessions leave the ledger, so the
 * next consolidation reads them again and learns their facts again (to keep a fact out for good, `dreamd
 * memory forget` it). A session is reopened whole: the ledger does not keep the entry a run replaced, so a
 * session that grew between two runs is read in full, and reconcile drops what memory already holds.
 * The caller holds the space's lock.
 */
import { DreamdError } from '../errors.js';
import { diffFiles } from '../memory/diff.js';
import { readLedger, serializeLedger, type Ledger } from './ledger.js';
import { sha256 } from '../memory/hash.js';
import { newRunId, readTextIfExists, spaceFilePath } from './paths.js';
import { mergeArrived } from '../memory/arrived-bytes.js';
import { listRuns, type FileChange, type RunRecord } from './run-history.js';
import { maintenanceSummary } from './run-summary.js';
import { commitMemoryChanges, type MaintenanceCommitOptions } from './transaction.js';

export interface RollbackOptions extends MaintenanceCommitOptions {
  /** Roll back, newest first, the later runs that changed the same files. Default false: refuse. */
  readonly cascade?: boolean;
  /** Overwrite files changed since the run by something other than a dreamd run (e.g. by hand). Default false. */
  readonly force?: boolean;
}

export class RollbackRefusedError extends DreamdError {
  override readonly name = 'RollbackRefusedError';
  constructor(
    message: string,
    readonly runId: string,
    readonly blockingRuns: readonly string[] = [],
  ) {
    super(message);
  }
}

function overlaps(a: RunRecord, b: RunRecord): boolean {
  return Object.keys(a.files).some((file) => file in b.files);
}

/**
 * The runs a rollback of `target` must undo first: every later consolidation or forget not undone yet that
 * changed a file `target` changed, or a file one of those changed (and so on), newest first.
 */
function cascadeOf(runs: readonly RunRecord[], target: RunRecord, undone: ReadonlySet<string>): RunRecord[] {
  const chain: RunRecord[] = [target];
  for (const run of [...runs].sort((a, b) => a.seq - b.seq)) {
    if (run.seq <= target.seq || run.kind === 'rollback' || undone.has(run.runId)) continue;
    if (chain.some((earlier) => overlaps(run, earlier))) chain.push(run);
  }
  return chain.slice(1).reverse();
}

/** Files of `run` whose bytes in `state` are not the ones it wrote; a file not in `state` is read from disk. */
async function changedSinceRun(
  memoryDir: string,
  run: RunRecord,
  state: Map<string, string | null>,
): Promise<string[]> {
  const changed: string[] = [];
  for (const [file, change] of Object.entries(run.files)) {
    if (!state.has(file)) state.set(file, await readTextIfExists(spaceFilePath(memoryDir, file)));
    const text = state.get(file) ?? null;
    if ((text === null ? null : sha256(text)) !== change.afterHash) changed.push(file);
  }
  return changed;
}

/**
 * What a rollback puts back in a file: the bytes before the run; and, when someone's bytes arrived while the
 * run committed and were merged into its own (`change.planned`), those bytes too, merged three ways (the run's
 * planned bytes as the base, the file now as theirs, the bytes before the run as ours). When they cannot be
 * merged, the bytes before the run, as without them.
 */
export function restoredBytes(file: string, change: FileChange, now: string | null): string | null {
  if (change.planned === undefined || now === null) return change.before;
  const merged = mergeArrived(file, change.planned, now, change.before ?? '');
  if (merged === undefined) return change.before;
  return change.before === null && merged === '' ? null : merged;
}

function refuseChanged(runId: string, changed: readonly string[]): RollbackRefusedError {
  return new RollbackRefusedError(
    `run ${runId}: ${changed.join(', ')} changed since the run (edited by hand?); rolling back would lose that. ` +
      'Pass force to restore the old bytes anyway.',
    runId,
  );
}

/**
 * Restore every file run `runId` changed to its previous bytes (deleting files it created). Returns the
 * rollback run records written, in order (cascaded ones first, the requested one last).
 *
 * A refused rollback changes nothing: with `cascade`, the whole chain is checked first, each run against the
 * bytes the rollbacks before it would leave, and only then written. The runs are then rolled back one by one,
 * newest first, each in its own transaction with its own rollback record (history keeps one rollback per run,
 * and a transaction carries one run record): a crash in the middle leaves the newer runs rolled back and the
 * older ones not, each state whole, and running the same command again finishes the chain.
 */
export async function rollbackRun(
  memoryDir: string,
  runId: string,
  options: RollbackOptions = {},
): Promise<RunRecord[]> {
  const runs = await listRuns(memoryDir);
  const target = runs.find((run) => run.runId === runId);
  if (!target)
    throw new RollbackRefusedError(
      `no run ${runId} in the history of ${memoryDir}; see \`dreamd history\``,
      runId,
    );
  const undoneBy = new Map(
    runs.filter((run) => run.rollbackOf !== undefined).map((run) => [run.rollbackOf ?? '', run.runId]),
  );
  const undone = undoneBy.get(runId);
  if (undone !== undefined)
    throw new RollbackRefusedError(`run ${runId} was already rolled back by ${undone}`, runId);

  const later = runs.filter(
    (run) =>
      run.seq > target.seq && run.kind !== 'rollback' && !undoneBy.has(run.runId) && overlaps(run, target),
  );
  if (later.length > 0 && !options.cascade) {
    const ids = later.map((run) => run.runId);
    throw new RollbackRefusedError(
      `run ${runId} cannot be rolled back alone: later runs changed the same files (${ids.join(', ')}). ` +
        'Roll those back first, or pass cascade to roll them all back, newest first.',
      runId,
      ids,
    );
  }
  const chain = [...(later.length > 0 ? cascadeOf(runs, target, new Set(undoneBy.keys())) : []), target];

  // Check the whole chain before any write: each run against the bytes the rollbacks before it leave.
  if (!options.force) {
    const state = new Map<string, string | null>();
    for (const run of chain) {
      const changed = await changedSinceRun(memoryDir, run, state);
      if (changed.length > 0) throw refuseChanged(run.runId, changed);
      for (const [file, change] of Object.entries(run.files))
        state.set(file, restoredBytes(file, change, state.get(file) ?? null));
    }
  }

  const written: RunRecord[] = [];
  for (const run of chain) written.push(await commitRollback(memoryDir, run, options));
  return written;
}

/** Rolls back one run in one transaction; the caller checked it (the check is repeated, for hand edits now). */
async function commitRollback(
  memoryDir: string,
  target: RunRecord,
  options: RollbackOptions,
): Promise<RunRecord> {
  const now = options.now ?? (() => new Date());
  const started = now().getTime();
  const runId = target.runId;
  const current = new Map<string, string | null>();
  const restored = new Map<string, string | null>();
  const changedSince = await changedSinceRun(memoryDir, target, current);
  if (changedSince.length > 0 && !options.force) throw refuseChanged(runId, changedSince);
  for (const [file, change] of Object.entries(target.files))
    restored.set(
      file,
      changedSince.includes(file) ? change.before : restoredBytes(file, change, current.get(file) ?? null),
    );
  const rollbackId = newRunId(now(), 'rollback');
  const reopened = reopenSessions(await readLedger(memoryDir), target);
  return commitMemoryChanges(memoryDir, {
    runId: rollbackId,
    files: restored,
    // The bytes put back were on disk: a person's hidden characters among them come back too.
    theirs: new Map(Object.entries(target.files).map(([file, change]) => [file, change.before])),
    ...(reopened.sessionIds.length > 0 ? { ledger: serializeLedger(reopened.ledger) } : {}),
    runRecord: {
      kind: 'rollback',
      rollbackOf: runId,
      summary: maintenanceSummary({
        runId: rollbackId,
        spaceId: target.summary.spaceId,
        reason:
          reopened.sessionIds.length > 0
            ? `rollback of ${runId}; ${reopened.sessionIds.length} session(s) reopened for the next run`
            : `rollback of ${runId}`,
        diff: diffFiles(current, restored),
        durationMs: now().getTime() - started,
      }),
    },
    now,
    ...(options.faultInjection ? { faultInjection: options.faultInjection } : {}),
  });
}

/**
 * The ledger without the sessions the run consolidated: those it names in its summary and any entry it
 * wrote. Pure.
 */
export function reopenSessions(
  ledger: Ledger,
  run: Pick<RunRecord, 'runId' | 'summary'>,
): { ledger: Ledger; sessionIds: string[] } {
  const named = new Set(run.summary.sessions);
  const sessions: Ledger['sessions'] = {};
  const sessionIds: string[] = [];
  for (const [id, entry] of Object.entries(ledger.sessions)) {
    if (named.has(id) || entry.runId === run.runId) sessionIds.push(id);
    else sessions[id] = entry;
  }
  return { ledger: { version: 1, sessions }, sessionIds: sessionIds.sort() };
}
