/**
 * The results dreamd's own memory tools returned in this process (`read_memory`, `recall`, Anthropic's memory
 * tool's `view`): memory read back, not text read from outside. The note screen knows them by what they are,
 * never by a tool's name: an application's own tool called `recall` or `memory` returns text from anywhere,
 * and is screened as any tool's result.
 *
 * Kept by hash, the newest {@link MAX_OWN_RESULTS}. A session resumed in another process reads its memory
 * results as text read: a rule saved from them waits for the user, which errs on the safe side.
 */
import { createHash } from 'node:crypto';

/** Results remembered; the oldest are forgotten first. */
export const MAX_OWN_RESULTS = 4096;

const own = new Set<string>();

function keyOf(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

/** Remembers a result one of dreamd's memory tools returns, and returns it. */
export function ownResult(text: string): string {
  const key = keyOf(text);
  own.delete(key);
  own.add(key);
  if (own.size > MAX_OWN_RESULTS) {
    const oldest = own.values().next();
    if (oldest.done !== true) own.delete(oldest.value);
  }
  return text;
}

/** Whether this text is a result one of dreamd's memory tools returned in this process. */
export function isOwnResult(text: string): boolean {
  return own.has(keyOf(text));
}
