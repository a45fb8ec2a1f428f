/**
 * Batch mode's tunables, in one place: each says what it trades, and the file that reads it. The first wait
 * between two looks is config (`model.batchPollSeconds`).
 */
// Waiting for a message batch (`batch.ts`).
/**
 * The longest wait between two looks at a pending batch (the wait doubles from `model.batchPollSeconds` up to
 * it): longer makes fewer requests to the provider over a batch's hours; shorter collects an ended batch sooner.
 */
export const MAX_BATCH_POLL_MS = 15 * 60_000;
/**
 * How long past its `expiresAt` a batch still in progress is waited for before it is given up (canceled):
 * longer keeps answers a provider finishes late; shorter frees the batch's sessions for a run sooner.
 */
export const BATCH_EXPIRY_GRACE_MS = 60 * 60_000;
