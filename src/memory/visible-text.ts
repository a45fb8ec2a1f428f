/**
 * The one rule for bytes dreamd writes into a memory folder: no character that hides text or reorders it on
 * screen in the text dreamd writes itself. Bidi controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
 * U+061C), zero-width characters (U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E) and Unicode tag characters
 * (U+E0000–U+E007F) let a fact read one way to a person and another way to a model ("‮txt.exe"). In a fact
 * the zero-width joiner goes too: an emoji family becomes its members, a small price for a fact a person can
 * trust.
 *
 * A person's bytes are not dreamd's to clean. A Persian word's zero-width non-joiner, an emoji sequence, a
 * Hebrew right-to-left mark or a byte-order mark that a person wrote outside dreamd's block, in a hand-written
 * line of a topic file or in a fact file a person edited, pass through unchanged: a hidden character is kept
 * when the text around it (up to {@link CONTEXT_CHARS} characters each side, within its line) is text the file
 * already held, or text a rollback puts back. What dreamd adds (a fact from the model or an agent's note, a
 * line of its block) has none.
 *
 * Markdown and text lose them. JSON keeps them, escaped (`\u202e`): parsing gives back the same strings, so a
 * run record can still restore a file byte for byte, and yet no such character sits in the file.
 */

/** Every character dreamd never writes raw in its own text (see the module comment). */
export const INVISIBLE_CONTROLS =
  /[\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u{E0000}-\u{E007F}]/gu;

/** A run of one or more of {@link INVISIBLE_CONTROLS} in a row. */
const INVISIBLE_RUN = new RegExp(`${INVISIBLE_CONTROLS.source}+`, 'gu');
const BOM = '\uFEFF';
const HAS_INVISIBLE = new RegExp(INVISIBLE_CONTROLS.source, 'u');

/**
 * Characters of context each side of a hidden character that must match text the file held for it to be the
 * person's: long enough that the model cannot place a character in a fact by chance where a person has one.
 */
export const CONTEXT_CHARS = 16;

/** The text without any of {@link INVISIBLE_CONTROLS}. */
export function stripInvisibleControls(text: string): string {
  return text.replace(INVISIBLE_CONTROLS, '');
}

/**
 * The text without the hidden characters dreamd put there: each run of them is kept only when it sits, with
 * the text around it in its line, in one of `theirs` (the bytes the file held, or a rollback restores).
 */
export function stripOwnInvisibleControls(
  text: string,
  theirs: readonly (string | null | undefined)[],
): string {
  const known = theirs.filter(
    (other): other is string => typeof other === 'string' && HAS_INVISIBLE.test(other),
  );
  if (known.length === 0) return stripInvisibleControls(text);
  return text.replace(INVISIBLE_RUN, (run: string, offset: number) => {
    // A byte-order mark leads the file wherever the file's own content starts (dreamd's block may come first).
    if (offset === 0 && run === BOM && known.some((other) => other.startsWith(BOM))) return run;
    const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
    const newline = text.indexOf('\n', offset + run.length);
    const lineEnd = newline === -1 ? text.length : newline;
    const window = text.slice(
      Math.max(lineStart, offset - CONTEXT_CHARS),
      Math.min(lineEnd, offset + run.length + CONTEXT_CHARS),
    );
    return known.some((other) => other.includes(window)) ? run : '';
  });
}

/** JSON text with each of {@link INVISIBLE_CONTROLS} as a `\uXXXX` escape (they only occur inside strings). */
export function escapeInvisibleControls(json: string): string {
  // A tag character is two UTF-16 units; JSON escapes each unit (`\udb40\udc41`).
  return json.replace(INVISIBLE_CONTROLS, (char) =>
    Array.from(
      { length: char.length },
      (_, index) => `\\u${char.charCodeAt(index).toString(16).padStart(4, '0')}`,
    ).join(''),
  );
}

/**
 * A file's content as dreamd writes it: JSON escaped; every other file without the hidden characters dreamd
 * added, a person's kept (`theirs`: the bytes the file held, see {@link stripOwnInvisibleControls}); `null`
 * (a removal) kept.
 */
export function writableText(
  relativePath: string,
  content: string | null,
  theirs: readonly (string | null | undefined)[] = [],
): string | null {
  if (content === null) return null;
  return relativePath.endsWith('.json')
    ? escapeInvisibleControls(content)
    : stripOwnInvisibleControls(content, theirs);
}
