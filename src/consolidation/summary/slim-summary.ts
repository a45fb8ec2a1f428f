/**
 * What a finished job keeps in Redis: the run's summary as the API, `dreamd consolidate` through a daemon and
 * the dashboard show it, without the bytes that live in the run record on disk. Redis then holds a few hundred
 * bytes per retained job whatever the run changed (the diff of a big run is megabytes, and BullMQ used to keep
 * it twice: the return value and the job's last progress).
 */
import { runRecordPath } from '../../space/paths.js';
import type { RunSummary } from '../../core/run.js';
import { SLIM_PROBLEMS } from './tunables.js';

export interface SlimRunSummary extends Omit<
  RunSummary,
  'diff' | 'problems' | 'sessions' | 'unconsolidated'
> {
  /**
   * Empty for a run that committed (its diff is in the run record: `dreamd history show <runId>`); a dry run
   * has no record, so its diff, the whole point of it, stays.
   */
  readonly diff: string;
  /** Bytes of the diff the run record holds. */
  readonly diffBytes: number;
  /** Where the whole record is, relative to the space's memory directory (for runs that committed). */
  readonly runRecord: string | null;
  readonly sessions: readonly string[];
  /** Sessions consolidated; `sessions` lists at most {@link SLIM_PROBLEMS} of them. */
  readonly sessionCount: number;
  readonly problems: readonly { readonly file: string; readonly reason: string }[];
  /** Problems in all; `problems` lists at most {@link SLIM_PROBLEMS}. */
  readonly problemCount: number;
  /** Sessions left waiting, at most {@link SLIM_PROBLEMS} of them. */
  readonly unconsolidated: NonNullable<RunSummary['unconsolidated']>;
  /** Sessions left waiting in all. */
  readonly unconsolidatedCount: number;
}

/** The job return value for `summary`: the same fields the API shows, the diff and long lists left on disk. */
export function slimRunSummary(summary: RunSummary): SlimRunSummary {
  return {
    ...summary,
    diff: summary.status === 'dry-run' ? summary.diff : '',
    diffBytes: Buffer.byteLength(summary.diff),
    runRecord: summary.status === 'completed' ? runRecordPath(summary.runId) : null,
    sessions: summary.sessions.slice(0, SLIM_PROBLEMS),
    sessionCount: summary.sessions.length,
    problems: summary.problems.slice(0, SLIM_PROBLEMS),
    problemCount: summary.problems.length,
    unconsolidated: (summary.unconsolidated ?? []).slice(0, SLIM_PROBLEMS),
    unconsolidatedCount: summary.unconsolidated?.length ?? 0,
  };
}
