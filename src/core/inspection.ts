import type { BudgetWait } from './budget.js';
import type { Space } from '../config/schema.js';

/**
 * What the scheduler and the HTTP API know about one space, as the consolidation pipeline reports it. Cheap to
 * compute: it lists the sessions directory and reads the ledger; it does not parse sessions it already knows.
 */
export interface SpaceInspection {
  readonly spaceId: string;
  /** Sessions that are settled (ended, or quiet for `gates.quietMinutes`) and not yet consolidated. */
  readonly settledNew: number;
  /** Sessions still being written (not settled yet). */
  readonly live: number;
  /** Transcripts that cannot be read, with the reason; they are set aside, the others carry on. */
  readonly broken: readonly { readonly file: string; readonly reason: string }[];
  /** ISO 8601 time of the last run that completed (not dry runs, not skipped runs); undefined if never. */
  readonly lastSuccessfulRunAt?: string | undefined;
  /** The space's file lock when a run holds it. */
  readonly lock?:
    | { readonly owner: string; readonly pid: number; readonly host: string; readonly startedAt: string }
    | undefined;
  /**
   * Claude Code's `.consolidate-lock` in the memory folder when a live process holds it (a PID that runs and
   * an mtime within the hour): its PID, since when (ISO 8601) and for how long (ms). No run writes meanwhile.
   */
  readonly claudeCodeLock?:
    { readonly pid: number; readonly since: string; readonly ageMs: number } | undefined;
  /**
   * A session bigger than one run is part-way (its ledger entry has `progress`): the time and session-count
   * gates do not make it wait; the next part goes at the next tick.
   */
  readonly continuing?: boolean | undefined;
  /** Set when the space could not be inspected (directory vanished, unreadable ledger …): its gates stay closed. */
  readonly error?: string | undefined;
  /** Set when the space's monthly budget is spent: its gates stay closed, `force` included, until `resumesAt`. */
  readonly budget?: BudgetWait | undefined;
}

/** Inspects one space. Injected into the daemon; the consolidation pipeline provides the real one. */
export type InspectSpaceFunction = (space: Space) => Promise<SpaceInspection>;
