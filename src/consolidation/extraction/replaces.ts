/**
 * The facts of one run, before they have fact ids: the ids later calls of the run know them by
 * ({@link runFactId}), and which of them replaces which, so a subject learned twice in one run is kept at its
 * newest with the older as its history.
 */
import type { ExtractedFact } from './extraction.js';

/** The run's facts (by {@link runFactId}) one call was shown, and the call's number. */
export interface ShownToCall {
  readonly seen: ReadonlySet<string>;
  readonly call: number;
}

const RUN_ID = /^run-\d+$/;

/** Id under which a fact of an earlier call of this run is listed to later calls (it has no fact id yet). */
export function runFactId(position: number): string {
  return `run-${position + 1}`;
}

/** Whether an id names a fact of this run ({@link runFactId}) rather than a fact in memory. */
export function isRunFactId(id: string): boolean {
  return RUN_ID.test(id);
}

/**
 * Candidates of one run whose `replaces` names another candidate of the same run (by {@link runFactId}, earlier
 * or later in the run). Of the two, the newer observation (on the same day, the one that names the other) wins,
 * and nothing is lost:
 * - the winner also names the facts in memory the older one replaces, so memory's chain continues through it;
 * - the older one stays, as history: the winner names it by its exact title (reconcile resolves the title of a
 *   fact of the same batch and type, after applying the older first), so it is kept superseded by the winner
 *   (Lisbon ← Porto ← Braga), in the archive like any replaced fact;
 * - only when the two are of one day or of different types (no order to apply them in, no title to name) is
 *   the older one left out, the same subject kept once at its newest, as the model asked.
 */
export function resolveRunReplaces(candidates: readonly ExtractedFact[]): ExtractedFact[] {
  const result = candidates.map((candidate) => ({ ...candidate, replaces: [...candidate.replaces] }));
  const dropped = new Set<number>();
  const paired = new Set<string>();
  result.forEach((candidate, index) => {
    for (const id of candidate.replaces.filter(isRunFactId)) {
      const target = Number(id.slice(4)) - 1;
      const other = result[target];
      const pair = `${Math.min(index, target)}:${Math.max(index, target)}`;
      if (other === undefined || target === index || paired.has(pair)) continue;
      if (dropped.has(target) || dropped.has(index)) continue;
      paired.add(pair);
      const [winner, loser, loserIndex] =
        other.observed > candidate.observed ? [other, candidate, index] : [candidate, other, target];
      const memoryIds = loser.replaces.filter((replaced) => !isRunFactId(replaced));
      const kept = loser.observed < winner.observed && loser.type === winner.type;
      if (!kept) dropped.add(loserIndex);
      winner.replaces = [...new Set([...winner.replaces, ...memoryIds, ...(kept ? [loser.title] : [])])];
    }
  });
  return result
    .filter((_, index) => !dropped.has(index))
    .map((candidate) => ({ ...candidate, replaces: candidate.replaces.filter((id) => !isRunFactId(id)) }));
}
