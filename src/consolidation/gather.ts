/**
 * Gather: the new messages of a space's settled sessions, digested and packed into as few model calls as the
 * token budget allows. Sessions past the run's call budget wait, whole, for the next run.
 */
import type { LimitsConfig } from '../config/schema.js';
import { digestSession, planBatches, type Batch } from '../digest/index.js';
import type { LedgerLookup } from '../memory/types.js';
import { readSettledSessions, type ReadSessionRecord, type ScanResult } from '../transcripts/index.js';
import type { RunProgress } from '../core/run.js';

export interface Gathered {
  /** Batches to send now, each with the ids of the sessions it carries. */
  readonly batches: readonly { readonly batch: Batch; readonly sessionIds: readonly string[] }[];
  /** Sessions consolidated by this run (ids, in reading order). */
  readonly sessions: readonly string[];
  /** Files read this run that the ledger records once memory is on disk (deferred ones excluded). */
  readonly records: readonly ReadSessionRecord[];
  /** Date (YYYY-MM-DD) each session started, to date a fact the model left undated. */
  readonly sessionDates: ReadonlyMap<string, string>;
  /** Sessions past `limits.maxCallsPerRun`: they wait for the next run. */
  readonly deferred: ReadonlySet<string>;
  /** Files reported and set aside. */
  readonly problems: readonly { readonly file: string; readonly reason: string }[];
}

/**
 * Digest tokens one call may carry: the call's budget less what its memory list may take (never under a
 * quarter of the budget, so a memory budget set too high cannot starve the digest).
 */
export function digestBudget(
  limits: Pick<LimitsConfig, 'digestTokensPerCall' | 'memoryTokensPerCall'>,
): number {
  return Math.max(
    Math.ceil(limits.digestTokensPerCall / 4),
    limits.digestTokensPerCall - limits.memoryTokensPerCall,
  );
}

export async function gatherSessions(
  scan: ScanResult,
  options: { ledger: LedgerLookup; limits: LimitsConfig; onProgress: (progress: RunProgress) => void },
): Promise<Gathered> {
  const { limits } = options;
  const read = await readSettledSessions(scan, {
    ledger: options.ledger,
    maxBytes: limits.maxSessionBytes,
    // The reader may drop what the digest never reads of a tool result (it reads a window of 3 × the kept
    // characters, at least 512), keeping a big transcript's memory flat; never less than the reader's default.
    maxToolResultChars: Math.max(2_000, 3 * limits.toolResultChars, 512),
  });
  const sessionDates = new Map<string, string>();
  const digests = read.sessions.map((session, index) => {
    sessionDates.set(session.id, session.startedAt.slice(0, 10));
    const digest = digestSession(session, {
      toolResultChars: limits.toolResultChars,
      fromMessage: session.messages[0]?.index ?? 0,
    });
    options.onProgress({ phase: 'gather', done: index + 1, total: read.sessions.length });
    return digest;
  });
  const planned = digests.length > 0 ? planBatches(digests, { tokensPerCall: digestBudget(limits) }) : [];
  // A session split over several batches goes only if all of its parts fit the call budget.
  const deferred = new Set(planned.slice(limits.maxCallsPerRun).flatMap((batch) => batch.sessionIds));
  const batches = planned
    .slice(0, limits.maxCallsPerRun)
    .map((batch) => ({ batch, sessionIds: batch.sessionIds.filter((id) => !deferred.has(id)) }))
    .filter((entry) => entry.sessionIds.length > 0);
  return {
    batches,
    sessions: read.sessions.map((session) => session.id).filter((id) => !deferred.has(id)),
    records: read.records.filter((record) => !deferred.has(record.sessionId)),
    sessionDates,
    deferred,
    problems: read.problems.map((problem) => ({ file: problem.file, reason: problem.message })),
  };
}
