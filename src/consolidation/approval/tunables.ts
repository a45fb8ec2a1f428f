/**
 * Approval mode's tunable: what it trades, and the file that reads it. One constant, in a file of its own all
 * the same, so that each step's folder keeps its tunables in the same place. `rejected-match.ts`'s
 * `FINGERPRINT_HASH_CHARS` is not here: it is the format of the fingerprints the rejected list keeps on disk,
 * and a new length would match none of those already written.
 */
// The proposal a person reviews (`proposal.ts`).
/**
 * Longest quote kept per fact, in characters (the session line it rests on): longer shows the reviewer more
 * of the line; shorter keeps the proposal file and its screen small.
 */
export const QUOTE_CHARS = 280;
