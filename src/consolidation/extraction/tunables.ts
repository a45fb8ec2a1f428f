/**
 * The extraction step's tunables, in one place: each says what it trades, and the file that reads it.
 * `TITLE_MAX_CHARS` and `DESCRIPTION_MAX_CHARS` (`extraction.ts`) are not tunables but the fact's format: the
 * prompt states the title's length, and a description is one line of a memory file's frontmatter.
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
/**
 * Share of `limits.maxFactsPerAnswer` the first batch's expected facts must pass for it to go alone as a probe
 * (`extract-state.ts`), before any answer has set the yield: lower probes more runs (the probe's wait before the
 * rest is sent); higher risks a first answer past the limit, thrown away.
 */
export const PROBE_FIRST_SHARE = 0.5;

// The memory list each call shows (`memory-list.ts`, `extraction-request.ts`, `extraction.ts`).
/**
 * Most active facts the selector considers (in ranking order), so a memory of 100,000 facts does not cost a
 * BM25 index of all of them on every run; what a call shows is chosen among these by relevance and recency.
 */
export const MEMORY_LIST_MAX_FACTS = 5_000;
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
/**
 * Longest hook shown per memory-list line, in characters: enough to tell two facts apart, little enough to stay
 * cheap.
 */
export const HOOK_MAX_CHARS = 60;
/**
 * Longest id and title shown per memory-list line, in characters: a guard on what a file written by hand holds
 * (dreamd's titles are 80 at most), so one odd entry cannot take a call's memory budget.
 */
export const LINE_ID_MAX_CHARS = 40;
export const LINE_TITLE_MAX_CHARS = 200;

// What the project's instruction files already state (`project-docs.ts`).
/** Largest project file read, in bytes: instruction files are a few KB; anything bigger is not one. */
export const MAX_DOC_BYTES = 64 * 1024;
/** Most characters of statements shown to the model per call (about 1,000 tokens, cached with the prefix). */
export const MAX_SHOWN_CHARS = 4_000;
/**
 * Shortest line of a project file kept as a statement, in characters: shorter ones (a label, a lone word) state
 * nothing a fact could repeat, and would take room in {@link MAX_SHOWN_CHARS}.
 */
export const MIN_STATEMENT_CHARS = 8;
/**
 * Share of a candidate's words (stems) one statement must hold for the candidate to be "already stated": 0.75
 * lets the model's rewording through ("Run make lint before committing" against "Always run `make lint`
 * before you commit") and keeps a fact that adds to the statement (a new reason, a new value).
 */
export const ALREADY_STATED_SHARE = 0.75;

// The update check (`update-check.ts`).
/** Neighbours shown beside one new fact, the closest first: those that share its words, then its names. */
export const NEIGHBOURS_PER_FACT = 8;
/**
 * Facts of one name that say the same of it (the job, the home), and facts whose titles start alike, looked at
 * for one new fact at most: the latest of them no later than it. An update replaces the value before it, and
 * {@link NEIGHBOURS_PER_FACT} are shown; looking at every one would make the check quadratic in a subject's
 * facts (a register of 10,000 facts, a thousand of each person, took 10 s for the look-up alone).
 */
export const ALIKE_SCANNED_PER_FACT = 64;
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
/**
 * Longest title, body and hook shown per fact of a check prompt, in characters (the prompt's size estimate
 * counts the same): enough to judge an update by, little enough that a long fact written by hand does not take
 * the call's {@link CHECK_TOKENS_PER_CALL}.
 */
export const CHECK_TITLE_MAX_CHARS = 120;
export const CHECK_BODY_MAX_CHARS = 400;
export const CHECK_HOOK_MAX_CHARS = 200;
