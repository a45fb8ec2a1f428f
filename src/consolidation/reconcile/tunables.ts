/**
 * The reconcile step's tunables, in one place: each says what it trades, and the file that reads it. The
 * near-duplicate and same-subject thresholds it shares with other steps are in `facts/tunables.ts`.
 */
import { NEAR_DUPLICATE_THRESHOLD } from '../facts/tunables.js';

// Rewordings (`rewording.ts`, `fact-lookup.ts`): a missed merge is cheaper than a wrong one.
/** Least shared terms of a rewording ("lives in Lisbon": two); "Ana has a dog" and "… a cat" share one. */
export const MIN_SHARED_TERMS = 2;
/**
 * Shared terms from which a rewording may add one term, and from which the bodies alone say what the fact is
 * about (then titles, written freely, may differ).
 */
export const MIN_BODY_TERMS = 3;
/** Shared terms from which a rewording may add two terms, not one. */
export const LONG_FACT_TERMS = 6;
/**
 * Entries the terms-by-text cache holds before it is cleared, as `facts/tunables.ts`'s `FEATURES_BY_TEXT_KEPT`:
 * memory held against stemming an unchanged fact's words again on every run of a daemon.
 */
export const TERMS_BY_TEXT_KEPT = 50_000;

// The merge (`reconcile.ts`).
/**
 * Least word Jaccard of a near duplicate worth scoring in full: the threshold less a margin of 0.1 for texts
 * whose repeated words let pairs overlap a little more than words do. A wider margin scores more pairs in full
 * (slower on a large memory); a narrower one could skip a pair that reaches the threshold.
 */
export const NEAR_WORDS_BOUND = NEAR_DUPLICATE_THRESHOLD - 0.1;
/**
 * Longest supersede chain followed from an id in `replaces` (a guard against a cycle in hand-edited files),
 * and the most times a new id is drawn again when it is already in use.
 */
export const MAX_CHAIN = 100;
