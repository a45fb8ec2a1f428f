import { createHash } from 'node:crypto';

/** sha256 of a string, hex. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Text reduced to what carries meaning: Unicode NFKC, lowercase, every run of non-letters and non-digits
 * one space. "Doesn't eat spicy food." and "doesnt eat  spicy food" compare equal.
 */
export function normalizeText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/['’`]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Hash of the normalized text, 16 hex characters (64 bits). */
export function normalizedTextHash(text: string): string {
  return sha256(normalizeText(text)).slice(0, 16);
}
