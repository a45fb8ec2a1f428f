import { TranscriptErrorReason, type TranscriptError } from '../errors.js';
import { transcriptFailure } from './transcript-failure.js';

/**
 * File names that must not become session ids. A session id is named in the ledger, the digest the model
 * reads, run records, logs and `sessions list`; a file name with a newline would start a new line in each of
 * them (a forged log line, a forged digest line), and direction marks would make it read as another name. So
 * a file whose name holds such a character is refused (reason `unsafe-name`), never read under an escaped
 * id: an escaped id would differ from the name a person sees, and no agent writes such names.
 */

/**
 * Characters refused in a session file's name: C0 controls (newline, tab, escape…), DEL, C1 controls, the
 * Unicode line and paragraph separators, and the bidirectional embedding, override and isolate marks.
 */
function isUnsafeCodePoint(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/** True when `name` holds a character that must never reach an id or a log line (see above). */
export function hasUnsafeCharacter(name: string): boolean {
  for (let index = 0; index < name.length; index += 1) {
    if (isUnsafeCodePoint(name.charCodeAt(index))) return true;
  }
  return false;
}

/** `text` with each unsafe character written as a `\u` escape of four hex digits, so a message naming it stays one plain line. */
export function escapeUnsafe(text: string): string {
  let escaped = '';
  for (const character of text) {
    const code = character.charCodeAt(0);
    escaped += isUnsafeCodePoint(code) ? `\\u${code.toString(16).padStart(4, '0')}` : character;
  }
  return escaped;
}

/** The refusal of a session file whose name is unsafe; the path in the message is escaped. */
export function unsafeNameFailure(path: string): TranscriptError {
  return transcriptFailure(
    escapeUnsafe(path),
    TranscriptErrorReason.unsafeName,
    'the file name holds a control character, which would become part of the session id and of every line naming it',
  );
}
