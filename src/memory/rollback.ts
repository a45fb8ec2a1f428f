/**
 * Rollback: put back the bytes every file had before a run, as a new run of kind `rollback`.
 *
 * The ledger goes back with the memory, in the same transaction: the run's sessions leave the ledger, so the
 * next consolidation reads them again and learns their facts again (to keep a fact out for good, `dreamd
 * memory forget` it). A session is reopened whole: the ledger does not keep the entry a run replaced, so a
 * session that grew between two runs is read in full, and reconcile drops what memory already holds.
 * The caller holds the space's lock.
 */
import path from 'node:path';
import { DreamdError } from '../errors.js';
import { diffFiles } from './diff.js';
import { readLedger, serializeLedger, type Ledger } from './ledger.js';
import { sha256 } from './hash.js';
import { newRunId, readTextIfExists } from './paths.js';
import { listRuns, type RunRecord } from './run-history.js';
import { maintenanceSummary } from './run-summary.js';
import { commitMemoryChanges, type CommitStep } from './transaction.js';

export interface RollbackOptions {
  /** Roll back, newest first, the later runs that changed the same files. Default false: refuse. */
  readonly cascade?: boolean;
  /** Overwrite files changed since the run by something other than a dreamd run (e.g. by hand). Default false. */
  readonly force?: boolean;
  readonly now?: () => Date;
  readonly faultInjection?: (step: CommitStep) => void;
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
 * Restore every file run `runId` changed to its previous bytes (deleting files it created). Returns the
 * rollback run records written, in order (cascaded ones first, the requested one last).
 */
export async function rollbackRun(
  memoryDir: string,
  runId: string,
  options: RollbackOptions = {},
): Promise<RunRecord[]> {
  const now = options.now ?? (() => new Date());
  const started = now().getTime();
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
  const written: RunRecord[] = [];
  if (later.length > 0) {
    const ids = later.map((run) => run.runId);
    if (!options.cascade) {
      throw new RollbackRefusedError(
        `run ${runId} cannot be rolled back alone: later runs changed the same files (${ids.join(', ')}). ` +
          'Roll those back first, or pass cascade to roll them all back, newest first.',
        runId,
        ids,
      );
    }
    for (const run of [...later].reverse()) {
      if (written.some((record) => record.rollbackOf === run.runId)) continue;
      written.push(...(await rollbackRun(memoryDir, run.runId, { ...options, cascade: true })));
    }
  }

  const current = new Map<string, string | null>();
  const restored = new Map<string, string | null>();
  const changedSince: string[] = [];
  for (const [file, change] of Object.entries(target.files)) {
    const text = await readTextIfExists(path.join(memoryDir, ...file.split('/')));
    current.set(file, text);
    restored.set(file, change.before);
    if ((text === null ? null : sha256(text)) !== change.afterHash) changedSince.push(file);
  }
  if (changedSince.length > 0 && !options.force) {
    throw new RollbackRefusedError(
      `run ${runId}: ${changedSince.join(', ')} changed since the run (edited by hand?); rolling back would lose that. ` +
        'Pass force to restore the old bytes anyway.',
      runId,
    );
  }
  const rollbackId = newRunId(now(), 'rollback');
  const reopened = reopenSessions(await readLedger(memoryDir), target);
  const record = await commitMemoryChanges(memoryDir, {
    runId: rollbackId,
    files: restored,
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
  written.push(record);
  return written;
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
