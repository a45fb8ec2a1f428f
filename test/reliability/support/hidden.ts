/**
 * Characters that hide text or reorder it on screen (bidi controls, zero-width characters, the byte-order mark,
 * Unicode tag characters): the ones dreamd keeps out of its own text and keeps in a person's
 * (`src/memory/visible-text.ts`). Shared by the reliability tests that strew them in sessions, answers and files.
 */
export const HIDDEN: readonly string[] = [
  '\u202A',
  '\u202B',
  '\u202C',
  '\u202D',
  '\u202E',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200B',
  '\u200C',
  '\u200D',
  '\u200E',
  '\u200F',
  '\u2060',
  '\u2061',
  '\u2064',
  '\uFEFF',
  '\u061C',
  '\u180E',
  '\u{E0041}',
  '\u{E007F}',
];
