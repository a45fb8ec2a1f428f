/**
 * The record of a rule taught again, as stored in a fact's metadata (`taught-again.ts` reads and counts it).
 * A file of its own so that `types.ts` (whose Fact carries it) and `taught-again.ts` (which reads Facts) do not
 * import each other.
 */
import { z } from 'zod';

/** Sessions a fact keeps the ids of: the latest ten, so a rule taught fifty times keeps a small file. */
export const MAX_TAUGHT_AGAIN_SESSIONS = 10;

export const TaughtAgain = z.object({
  /** Times a session after the fact was saved taught it again (≥ 1). */
  count: z.int().min(1),
  /** `YYYY-MM-DD` of the last time. */
  last: z.string(),
  /** The sessions that taught it again, oldest first, the latest {@link MAX_TAUGHT_AGAIN_SESSIONS}. */
  sessions: z.array(z.string()),
});
export type TaughtAgain = z.infer<typeof TaughtAgain>;

/** The metadata field as read: a malformed one is dropped, never fatal (the rest of the fact reads as before). */
export const TaughtAgainField = TaughtAgain.optional().catch(undefined);
