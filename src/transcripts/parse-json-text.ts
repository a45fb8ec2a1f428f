import { describeJsonParseError, lineAndColumn } from '../util/json-parse-error.js';
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, QUOTE } from './json-chars.js';
/**
 * `JSON.parse` with what a transcript reader needs on top: a nesting limit and an error that says where
 * (line and column) the text went wrong. Pure: text in, value or `JsonTextError` out.
 */

/**
 * Deepest nesting of arrays and objects accepted. V8's `JSON.stringify` overflows the stack a few
 * thousand levels deep, and every later stage (digest, recorder) stringifies tool inputs; real transcripts
 * nest fewer than 20 levels. 1,000 leaves a wide margin on both sides.
 */
export const MAX_JSON_DEPTH = 1000;

/** Why a JSON text was refused, with the 1-based line and column when known. */
export class JsonTextError extends Error {
  override readonly name = 'JsonTextError';
  constructor(
    readonly detail: string,
    readonly line: number | undefined,
    readonly column: number | undefined,
  ) {
    super(line === undefined ? detail : `line ${line} column ${column ?? 1}: ${detail}`);
  }
}

/**
 * Offset where the nesting first passes `limit`, or -1. Strings are skipped with `indexOf`, so the cost is
 * in the structural characters, which are few in transcripts (most bytes are message text).
 */
export function findExcessiveNesting(text: string, limit: number): number {
  let depth = 0;
  let index = 0;
  const length = text.length;
  while (index < length) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      let end = text.indexOf('"', index + 1);
      while (end !== -1) {
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes += 1;
        if (backslashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (end === -1) return -1; // unterminated string: JSON.parse reports it
      index = end + 1;
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth += 1;
      if (depth > limit) return index;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth -= 1;
    }
    index += 1;
  }
  return -1;
}

/** Parses JSON text, refusing nesting deeper than `maxDepth`. Throws `JsonTextError` with line and column. */
export function parseJsonText(text: string, maxDepth: number = MAX_JSON_DEPTH): unknown {
  const tooDeep = findExcessiveNesting(text, maxDepth);
  if (tooDeep !== -1) {
    const { line, column } = lineAndColumn(text, tooDeep);
    throw new JsonTextError(`nested deeper than ${maxDepth} levels`, line, column);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const { detail, position } = describeJsonParseError(error, text);
    if (position === undefined) throw new JsonTextError(detail, undefined, undefined);
    const { line, column } = lineAndColumn(text, position);
    throw new JsonTextError(detail, line, column);
  }
}

/** One line of a JSONL transcript: blank, an object, or a line to skip with the warning that says why. */
export type JsonLine =
  | { readonly kind: 'blank' }
  | { readonly kind: 'object'; readonly record: Record<string, unknown> }
  /** `invalid`: not JSON at all (the first such line is the file's headline problem); else JSON but no object. */
  | { readonly kind: 'skip'; readonly warning: string; readonly invalid: boolean };

/** Reads one line of a JSONL transcript (Claude Code's, Codex's): what the readers do with it is theirs. */
export function readJsonLine(text: string, lineNumber: number): JsonLine {
  if (text.trim().length === 0) return { kind: 'blank' };
  let value: unknown;
  try {
    value = parseJsonText(text);
  } catch (error) {
    const detail = error instanceof JsonTextError ? error.detail : String(error);
    return { kind: 'skip', warning: `line ${lineNumber}: invalid JSON (${detail}), skipped`, invalid: true };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { kind: 'skip', warning: `line ${lineNumber}: not a JSON object, skipped`, invalid: false };
  }
  return { kind: 'object', record: value as Record<string, unknown> };
}
