/**
 * When a session taught again a fact memory already held (pure): the session started after the fact was saved.
 * A fact is saved by the run that first consolidated one of its sources (the ledger's `consolidatedAt`); a
 * session of a backlog that was written before that run said the rule before memory held it, and is no
 * re-teach. A fact none of whose sources the ledger knows (written by hand, or older than the ledger) counts as
 * saved at the end of the day it was observed.
 */
import type { Fact } from '../../memory/types.js';

const DAY_MS = 86_400_000;

/**
 * The `taughtAfterSaved` test of reconcile: `starts` holds each session's start (ISO timestamp) as the run read
 * it, `consolidatedAt` the ISO time the ledger recorded a session consolidated (undefined: not yet).
 */
export function createTaughtAfterSaved(
  starts: ReadonlyMap<string, string>,
  consolidatedAt: (sessionId: string) => string | undefined,
): (fact: Fact, sessionId: string) => boolean {
  return (fact, sessionId) => {
    const started = Date.parse(starts.get(sessionId) ?? '');
    if (Number.isNaN(started)) return false;
    const saves = fact.sources
      .map((source) => Date.parse(consolidatedAt(source) ?? ''))
      .filter((time) => !Number.isNaN(time));
    const saved = saves.length > 0 ? Math.min(...saves) : Date.parse(fact.observed) + DAY_MS;
    return !Number.isNaN(saved) && started > saved;
  };
}
