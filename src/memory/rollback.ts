/**
 * Rollback: put back the bytes every file had before a run, as a new run of kind `rollback`.
 *
 * The ledger is left as it is: the run's sessions stay consolidated, so the next consolidation does not
 * learn the rolled-back facts again from them. To re-learn them, remove their entries from the ledger.
 * The caller holds the space's lock.
 */
import path from 'node:path';
import { DreamdError } from '../errors.js';
import { diffFiles } from './diff.js';
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
  const record = await commitMemoryChanges(memoryDir, {
    runId: rollbackId,
    files: restored,
    runRecord: {
      kind: 'rollback',
      rollbackOf: runId,
      summary: maintenanceSummary({
        runId: rollbackId,
        spaceId: target.summary.spaceId,
        reason: `rollback of ${runId}`,
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
