/** Any character outside printable ASCII, tab and newlines (no `u` flag: a plain scan of code units). */
const NON_ASCII = /[^\t\n\r\x20-\x7e]/;

/**
 * Lower case, accents stripped, every run of non-letters/digits turned into one space, trimmed: the words of a
 * text as both the digest's filler test and consolidation's fact similarity compare them, so the two agree.
 * (`memory/hash.ts` has a stricter fold of its own, for fact hashes.)
 */
export function normalizeText(text: string): string {
  // Printable ASCII has no accents and no letters beyond a-z: the same result without the Unicode passes,
  // which cost three times as much (a reconcile normalises every fact of a space).
  if (!NON_ASCII.test(text))
    return text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, ' ')
      .trim();
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}
