/**
 * The curation step's tunables, in one place: each says what it trades, and the file that reads it. The
 * budgets a person sets (`curation.*` in the config, `DEFAULT_CURATION`) are config, not tunables; the
 * similarity thresholds curation shares with reconcile are in `facts/tunables.ts`.
 */
// The check of the model's answer (`curate.ts`, `checkCuration`): a refused result keeps its facts as they were.
/**
 * Share of a merged fact's content words the result must hold (the rest may be reworded): higher refuses more
 * good merges that reword; lower lets a merge drop a detail.
 */
export const DETAIL_COVERAGE = 0.6;
/**
 * Title similarity (`titleSimilarity`) at or above which a fact the answer calls outdated and a newer fact of
 * the same result are taken for one subject even where their names tell them apart (a changed value names
 * another place). Lower than `SAME_SUBJECT_THRESHOLD` (`facts/tunables.ts`), which judges by code alone: here
 * the model has said the fact is outdated. Higher refuses more true updates; lower lets an unrelated fact
 * retire one.
 */
export const OUTDATED_TITLE_SIMILARITY = 0.5;

// Repeats of merged facts (`curate.ts`, `absorbRepeats`).
/**
 * Longest chain of merges followed from a merged fact to the active fact that holds it: a guard against a cycle
 * in hand-edited files; a longer chain leaves the repeat as a fact of its own.
 */
export const MAX_MERGE_CHAIN = 1_000;
