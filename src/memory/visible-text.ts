/**
 * The one rule for bytes dreamd writes into a memory folder: no character that hides text or reorders it on
 * screen. Bidi controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C), zero-width characters
 * (U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E) and Unicode tag characters (U+E0000–U+E007F) let a fact read
 * one way to a person and another way to a model ("‮txt.exe"). The zero-width joiner goes too: an emoji family
 * becomes its members, a small price for a file a person can trust.
 *
 * Markdown and text lose them. JSON keeps them, escaped (`\u202e`): parsing gives back the same strings, so a
 * run record can still restore a file byte for byte, and yet no such character sits in the file.
 */

/** Every character dreamd never writes raw (see the module comment). */
export const INVISIBLE_CONTROLS =
  /[\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u{E0000}-\u{E007F}]/gu;

/** The text without any of {@link INVISIBLE_CONTROLS}. */
export function stripInvisibleControls(text: string): string {
  return text.replace(INVISIBLE_CONTROLS, '');
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

/** A file's content as dreamd writes it: JSON escaped, every other file stripped; `null` (a removal) kept. */
export function writableText(relativePath: string, content: string | null): string | null {
  if (content === null) return null;
  return relativePath.endsWith('.json') ? escapeInvisibleControls(content) : stripInvisibleControls(content);
}
