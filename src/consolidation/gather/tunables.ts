/**
 * The gather step's tunables, in one place: each says what it trades, and the file that reads it. The limits a
 * person sets (`limits.*`) are config; these are how gather sizes a run's reading and its calls from them.
 */
// A call's digest and a run's reading (`gather.ts`).
/**
 * Least share of `limits.digestTokensPerCall` a call's digest keeps, whatever its memory list may take: a
 * memory budget set too high cannot starve the digest. Higher leaves such a memory list less room; lower lets
 * it crowd out the transcript the call is for.
 */
export const MIN_DIGEST_SHARE = 0.25;
/**
 * Characters of transcript a run reads for each character of digest its calls can carry: a digest is a
 * fraction of what it reads (about half for plain dialogue, a tenth or less for agent transcripts with tool
 * output), so this is enough to fill the run's calls with either. More holds more of a big session in memory
 * for a run that cannot send it all; less leaves calls of a tool-heavy run part empty.
 */
export const READ_CHARS_PER_DIGEST_CHAR = 4;
/**
 * Share of `model.maxOutputTokens` a batch is planned to need at most: room for an estimate that runs low.
 * Higher makes fewer, larger batches and more answers cut at `max_tokens`; lower, more calls.
 */
export const OUTPUT_BUDGET_SHARE = 0.75;
