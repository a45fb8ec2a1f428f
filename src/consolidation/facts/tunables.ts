/**
 * The tunables of `facts/`, the shared bottom folder, in one place: the similarity thresholds that reconcile,
 * the update check and the rejected list judge by, and the caps of the feature index. Each says what it trades,
 * and the file that reads it.
 */
// Similarity thresholds on `similarity.ts`'s scores (read by `reconcile/reconcile.ts`,
// `approval/rejected-match.ts`, `extraction/update-check.ts`).
/**
 * Near-duplicate threshold on `textSimilarity` (0..1): two facts of the same type at or above it are the
 * same fact said twice. 0.6 because, on the phrasings we test against, rewordings of one fact ("User orders a
 * flat white with oat milk" / "User's usual coffee order is a flat white with oat milk") score 0.6–0.8, while
 * two different values of one subject ("home address … Lisbon" / "home address … Porto") and reversals
 * ("prefers tabs over spaces" / "prefers spaces over tabs", which word sets alone rate 1.0) stay at or below 0.5.
 */
export const NEAR_DUPLICATE_THRESHOLD = 0.6;

/**
 * Same-subject threshold on `titleSimilarity`: two facts of the same type whose titles score at or above
 * it (and have at least {@link SAME_SUBJECT_MIN_TITLE_WORDS} words) describe the same subject, so a newer one with
 * different content supersedes the older (when they name the same names and numbers, see `features.ts`). The
 * score counts words in order, so for the short titles facts have (2–6 words) 0.8 means "the same words in the
 * same order, give or take one in five": two-word titles must match exactly, and "Dog walker" never matches
 * "Walker dog".
 */
export const SAME_SUBJECT_THRESHOLD = 0.8;

/** A one-word title ("Editor", "Testing") is too vague to say two facts share a subject. */
export const SAME_SUBJECT_MIN_TITLE_WORDS = 2;

// The feature index (`features.ts`).
/**
 * Longest text whose numbers and links are read for the index, characters: a candidate is at most
 * `limits.maxFactChars` (100,000 at most), so only a fact written by hand can be longer. Such a fact gets a
 * partition of its own (see `numbersAndLinksKey`): it is found by its exact body or by `replaces`, never
 * by similarity, and its megabytes are never scanned with the link pattern (which overflows the stack there).
 */
export const NUMBERS_SCAN_MAX_CHARS = 100_000;

/**
 * Entries the features-by-text caches (features and details) hold before they are cleared: about 0.5 KB each,
 * 25 MB at most, against computing an unchanged fact's features again on every run of a daemon.
 */
export const FEATURES_BY_TEXT_KEPT = 50_000;
