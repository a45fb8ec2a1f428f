/**
 * Where a `JSON.parse` error happened and what it says, for every reader of JSON files (transcripts, the
 * config): V8 names an offset for most errors, and for an unexpected token quotes the text around it instead.
 * Pure: an error and its text in, a description out.
 */

/** 1-based line and column of a character offset. */
export function lineAndColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  let newline = text.indexOf('\n');
  while (newline !== -1 && newline < position) {
    line += 1;
    lineStart = newline + 1;
    newline = text.indexOf('\n', lineStart);
  }
  return { line, column: position - lineStart + 1 };
}

/** What a `JSON.parse(text)` error says, without V8's "in JSON at position N", and the offset it names. */
export function describeJsonParseError(
  error: unknown,
  text: string,
): { detail: string; position: number | undefined } {
  const message = error instanceof Error ? error.message : String(error);
  const detail = message.replace(/\s*in JSON at position \d+(?: \(line \d+ column \d+\))?/, '');
  return { detail, position: errorPosition(message, text) };
}

/** Characters of context V8 shows each side of an unexpected token (`..."ten chars X ten chars"...`). */
const V8_CONTEXT_CHARACTERS = 10;

/**
 * Offset of a `JSON.parse` error. V8 says "at position N" for most errors, but for an unexpected token
 * it quotes the text around it instead; the quote is found in the text to recover the offset.
 */
function errorPosition(message: string, text: string): number | undefined {
  const stated = /at position (\d+)/.exec(message);
  if (stated?.[1] !== undefined) return Number(stated[1]);
  const quoted = /^Unexpected token '([\s\S])', (\.\.\.)?"([\s\S]*?)"(?:\.\.\.)? is not valid JSON$/.exec(
    message,
  );
  if (quoted === null) return undefined;
  const [, token = '', hasLeadingContext, snippet = ''] = quoted;
  const start = text.indexOf(snippet);
  if (start === -1) return undefined;
  if (hasLeadingContext !== undefined) return start + V8_CONTEXT_CHARACTERS;
  const offset = snippet.indexOf(token);
  return offset === -1 ? undefined : start + offset;
}
