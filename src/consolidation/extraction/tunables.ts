/**
 * The extraction step's tunables, in one place: each says what it trades, and the file that reads it.
 */
// How the calls are sized: the yield of facts a user line gives (`answer-yield.ts`, `extract-queue.ts`).
/**
 * Expected facts are multiplied by this before they are held against the answer limit: a batch's lines yield
 * about the run's mean, and some more.
 */
export const YIELD_MARGIN = 1.25;
/** Weight of the prior yield, in user lines: small, so the first answers set it (a lagging yield throws answers away). */
export const PRIOR_LINES = 2;
/**
 * Share of `limits.maxFactsPerAnswer` an answer must reach for the limit to bind: below it, answers are far
 * from the limit and batches are left as planned, however many facts a user line yields (an agent's facts come
 * from tool output as much as from the user's few lines).
 */
export const BINDING_SHARE = 0.8;
/**
 * Facts per user line a probe is sized for: a dense dialogue's (a register read out plot by plot, a mentor's
 * list of rules), so the probe's own answer stays under the limit however dense the run turns out to be. A
 * sparser run pays one call more for it than the planned batch; a denser one saves the answer thrown away.
 */
export const PROBE_FACTS_PER_USER_LINE = 1;
/**
 * Batches a run must plan for its probe to be cut: the cut costs one call more, at most a third more in a
 * backlog of three batches or more, where learning a dense yield first saves an answer thrown away (its whole
 * output, at five times the input's price) and the halves asked again; a run of two batches sends its probe
 * as planned (a sparse dialogue would pay half as many calls again for the cut, a dense one one answer).
 */
export const PROBE_CUT_MIN_BATCHES = 3;

// The memory list each call shows (`memory-list.ts`).
/**
 * Smallest prefix, in estimated tokens, that the cached part must reach: Claude Haiku 4.5 (and Opus 4.5/4.6)
 * cache prompts of 4,096 tokens or more; 10 % more, because {@link CHARS_PER_TOKEN} is an estimate.
 */
export const MIN_CACHED_PREFIX_TOKENS = 4_500;
/** Share of a call's digest tokens its memory list may take (beside the stable part), plus a floor. */
export const MEMORY_SHARE_OF_DIGEST = 0.1;
export const MEMORY_FLOOR_TOKENS = 200;
/** Share of the list's budget (after the run's own facts) kept for the most recent facts. */
export const RECENT_SHARE = 0.2;
/** Best matches of each message that take turns before the rest are ranked by score alone. */
export const MATCHES_PER_MESSAGE = 3;
/** Queries one call runs at most: the longest user messages beyond this are joined into the last one. */
export const MAX_QUERIES = 200;

// The update check (`update-check.ts`).
/** Neighbours shown beside one new fact, the closest first: those that share its words, then its names. */
export const NEIGHBOURS_PER_FACT = 8;
/**
 * Least words (stemmed, stop words left out) a neighbour shares with the new fact's title and body: a subject
 * and a word about it ("home address", "Cobalt … data"), not one common word. Among those, the rarer the words
 * shared, the closer.
 */
export const NEIGHBOUR_MIN_SHARED_WORDS = 2;
/**
 * New facts one check call carries at most, and the estimated tokens of its prompt: a run's facts with a
 * neighbour go in as few calls as these allow, and more go in further calls. The answer lists only the facts
 * that replace something, so it stays short however many are asked about; the prompt is a list of one-line
 * facts, a small share of a model's context (a register read out plot by plot, 300 facts that all have a
 * neighbour, is about 28k tokens), and one call for the whole run can ride on the run's curation call.
 */
export const FACTS_PER_CHECK_CALL = 400;
export const CHECK_TOKENS_PER_CALL = 40_000;
/**
 * Words of more than this share of the texts (and more than {@link COMMON_FLOOR} of them) do not find a
 * neighbour on their own: "project", "user" would make every fact every other's neighbour and the search
 * quadratic. A neighbour still shares them; it is found by a rarer word or name it shares too.
 */
export const COMMON_SHARE = 0.02;
export const COMMON_FLOOR = 64;
