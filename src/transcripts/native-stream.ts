import { describeJsonParseError } from '../util/json-parse-error.js';
import { JsonTextError, MAX_JSON_DEPTH } from './parse-json-text.js';
import {
  CARRIAGE_RETURN,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  LINE_FEED,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  SPACE,
  TAB,
} from './json-chars.js';

/**
 * A streaming reader of one native transcript document, for files too big to hold whole: text goes in
 * chunk by chunk, and each top-level member and each element of the `messages` array comes out parsed,
 * one at a time, so memory holds one message, not the file. Only the structure around the members and
 * the elements is scanned here; each member and element is checked and built by `JSON.parse` of its own
 * text, so what is valid JSON, and the values, are exactly those of a whole `JSON.parse`.
 *
 * Same verdicts as `parseJsonText` of the whole text: invalid JSON with its line and column (V8's own
 * message for an error inside a member or element), nesting deeper than `MAX_JSON_DEPTH` refused at the
 * bracket that passes it, and, as `JSON.parse` does, the last of repeated keys wins (`messagesStart` is
 * called again for a repeated `messages`). A document that is not an object is held and parsed whole: it
 * is refused as the wrong shape anyway. Pure: no IO.
 */

/** Where the parsed pieces go. */
export interface NativeStreamHandlers {
  /** A top-level member, parsed; not called for a `messages` array, whose elements come one by one. */
  member(key: string, value: unknown): void;
  /** A `messages` array begins (again, when the key repeats: the last one counts). */
  messagesStart(): void;
  /** The next element of the `messages` array, parsed. */
  message(value: unknown): void;
  /** The whole document, parsed, when it is not an object. */
  document(value: unknown): void;
}

/** What `end` found. */
export type NativeStreamEnd = 'complete' | 'empty';

const enum State {
  /** Before the document: whitespace, then `{` (or anything else: held whole). */
  BeforeDocument,
  /** After `{`: a key or `}`. */
  ObjectStart,
  /** After a `,` between members: a key. */
  KeyExpected,
  /** Inside a key's string. */
  Key,
  /** After a key: `:`. */
  Colon,
  /** After `:`: a value. */
  ValueStart,
  /** Inside a member's value. */
  Value,
  /** After `"messages": [` or a `,` in it: an element (or `]` right after the `[`). */
  ElementStart,
  /** Inside an element of `messages`. */
  Element,
  /** After a member: `,` or `}`. */
  AfterMember,
  /** After the closing `}`: whitespace only. */
  AfterDocument,
  /** The document is not an object: everything is held and parsed at the end. */
  Whole,
}

function isJsonWhitespace(code: number): boolean {
  return code === SPACE || code === LINE_FEED || code === CARRIAGE_RETURN || code === TAB;
}

/** The next `"` or `\` (the only characters that matter inside a JSON string). */
const STRING_STOP = /["\\]/g;

/** Nesting depth of a member's value (inside the document object) and of an element (inside the array too). */
const MEMBER_DEPTH = 1;
const ELEMENT_DEPTH = 2;

/** Streams one native document into `handlers`; `write` each decoded chunk, then `end`. Throws JsonTextError. */
export class NativeJsonStream {
  private state = State.BeforeDocument;
  /** Characters of the chunks before the current one. */
  private consumed = 0;
  /** 1-based line, and offset where it starts, of the scanning position (newlines inside strings are invalid). */
  private line = 1;
  private lineStart = 0;
  /** Inside a string of the piece being scanned, and whether its next character is escaped. */
  private inString = false;
  private escaped = false;
  /** Nesting inside the piece (member value or element) being scanned. */
  private depth = 0;
  /** The piece being held: its text so far, and where it started. */
  private pieces: string[] = [];
  private pieceOffset = 0;
  private pieceLine = 1;
  private pieceColumn = 1;
  private key = '';
  private keyIsMessages = false;

  constructor(
    private readonly handlers: NativeStreamHandlers,
    private readonly maxDepth: number = MAX_JSON_DEPTH,
  ) {}

  /** Feeds the next chunk of the decoded text. */
  write(chunk: string): void {
    let index = 0;
    const length = chunk.length;
    while (index < length) {
      if (this.inString) {
        index = this.skipString(chunk, index);
        continue;
      }
      const code = chunk.charCodeAt(index);
      if (code === LINE_FEED) {
        this.line += 1;
        this.lineStart = this.consumed + index + 1;
      }
      switch (this.state) {
        case State.Value:
        case State.Element:
        case State.Whole:
          index = this.scanPiece(chunk, index, code);
          continue;
        case State.Key:
          // A key is a string: scanned as one, closed by `closeKey` when the string ends.
          break;
        default:
          this.structural(chunk, index, code);
      }
      index += 1;
    }
    this.holdRest(chunk);
    this.consumed += length;
  }

  /** The text has ended: anything still open is an error. */
  end(): NativeStreamEnd {
    switch (this.state) {
      case State.BeforeDocument:
        return 'empty';
      case State.AfterDocument:
        return 'complete';
      case State.Whole: {
        const text = this.pieces.join('');
        this.pieces = [];
        if (text.trim().length === 0) return 'empty';
        this.handlers.document(this.parsePiece(text));
        return 'complete';
      }
      case State.Value:
      case State.Element: {
        // JSON.parse of the unfinished piece says what is missing (an unterminated string, a bracket…);
        // a whole piece lacks the separator after it.
        this.parsePiece(this.pieces.join(''));
        const after =
          this.state === State.Element ? "',' or ']' after array element" : "',' or '}' after property value";
        throw this.failure(`Expected ${after}`, this.consumed);
      }
      default:
        throw this.failure('Unexpected end of JSON input', undefined);
    }
  }

  /** One character outside any member value or element. */
  private structural(chunk: string, index: number, code: number): void {
    if (isJsonWhitespace(code)) return;
    const offset = this.consumed + index;
    switch (this.state) {
      case State.BeforeDocument:
        if (code === OPEN_BRACE) {
          this.state = State.ObjectStart;
          if (MEMBER_DEPTH > this.maxDepth) this.tooDeep(offset);
        } else {
          this.state = State.Whole;
          this.startPiece(chunk, index, 0);
          this.scanPiece(chunk, index, code);
        }
        return;
      case State.ObjectStart:
      case State.KeyExpected:
        if (code === QUOTE) {
          this.state = State.Key;
          this.startPiece(chunk, index, 0);
          this.inString = true;
          this.escaped = false;
          return;
        }
        if (code === CLOSE_BRACE && this.state === State.ObjectStart) {
          this.state = State.AfterDocument;
          return;
        }
        throw this.failure(
          this.state === State.ObjectStart
            ? "Expected property name or '}'"
            : 'Expected double-quoted property name',
          offset,
        );
      case State.Colon:
        if (code !== COLON) throw this.failure("Expected ':' after property name", offset);
        this.state = State.ValueStart;
        return;
      case State.ValueStart:
        if (this.keyIsMessages && code === OPEN_BRACKET) {
          if (ELEMENT_DEPTH > this.maxDepth) this.tooDeep(offset);
          this.handlers.messagesStart();
          this.state = State.ElementStart;
          this.afterComma = false;
          return;
        }
        this.state = State.Value;
        this.startPiece(chunk, index, 0);
        this.scanPiece(chunk, index, code);
        return;
      case State.ElementStart:
        if (code === CLOSE_BRACKET && !this.afterComma) {
          this.state = State.AfterMember;
          return;
        }
        if (code === COMMA || code === CLOSE_BRACKET) throw this.unexpected(chunk, index, offset);
        this.state = State.Element;
        this.afterComma = false;
        this.startPiece(chunk, index, 0);
        this.scanPiece(chunk, index, code);
        return;
      case State.AfterMember:
        if (code === COMMA) this.state = State.KeyExpected;
        else if (code === CLOSE_BRACE) this.state = State.AfterDocument;
        else throw this.failure("Expected ',' or '}' after property value", offset);
        return;
      case State.AfterDocument:
        throw this.failure('Unexpected non-whitespace character after JSON', offset);
      default:
        return;
    }
  }

  /** True between a `,` in `messages` and the next element (a `]` there is a trailing comma). */
  private afterComma = false;

  /**
   * One character inside a member value, an element or a whole document, at `index`; returns where to go
   * on. A `,` or closing bracket at depth 0 ends the piece (not in a whole document).
   */
  private scanPiece(chunk: string, index: number, code: number): number {
    if (code === QUOTE) {
      this.inString = true;
      this.escaped = false;
      return index + 1;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      this.depth += 1;
      const base =
        this.state === State.Element ? ELEMENT_DEPTH : this.state === State.Value ? MEMBER_DEPTH : 0;
      if (base + this.depth > this.maxDepth) this.tooDeep(this.consumed + index);
      return index + 1;
    }
    if (this.state !== State.Whole && this.depth === 0) {
      if (code === COMMA || code === CLOSE_BRACE || code === CLOSE_BRACKET) {
        this.finishPiece(chunk, index, code);
        return index + 1;
      }
    }
    if (code === CLOSE_BRACE || code === CLOSE_BRACKET) this.depth -= 1;
    return index + 1;
  }

  /** Inside a string from `index`: returns the index after its closing quote, or the chunk's end. */
  private skipString(chunk: string, index: number): number {
    let at = index;
    if (this.escaped) {
      this.escaped = false;
      at += 1;
    }
    while (at < chunk.length) {
      STRING_STOP.lastIndex = at;
      const stop = STRING_STOP.exec(chunk);
      if (stop === null) return chunk.length;
      if (stop[0] === '\\') {
        if (stop.index + 1 >= chunk.length) {
          this.escaped = true;
          return chunk.length;
        }
        at = stop.index + 2;
        continue;
      }
      this.inString = false;
      if (this.state === State.Key) this.closeKey(chunk, stop.index + 1);
      return stop.index + 1;
    }
    return at;
  }

  private startPiece(chunk: string, index: number, depth: number): void {
    this.pieces = [];
    this.pieceStartIndex = index;
    this.pieceOffset = this.consumed + index;
    this.pieceLine = this.line;
    this.pieceColumn = this.pieceOffset - this.lineStart + 1;
    this.depth = depth;
  }

  /** Index in the current chunk where the held piece starts (0 once it spans chunks). */
  private pieceStartIndex = 0;

  /** At a chunk's end, the part of the open piece in it is kept. */
  private holdRest(chunk: string): void {
    if (
      this.state === State.Value ||
      this.state === State.Element ||
      this.state === State.Whole ||
      this.state === State.Key
    ) {
      this.pieces.push(chunk.slice(this.pieceStartIndex));
    }
    this.pieceStartIndex = 0;
  }

  /** The piece's text up to (not including) `end` in the current chunk. */
  private takePiece(chunk: string, end: number): string {
    this.pieces.push(chunk.slice(this.pieceStartIndex, end));
    const text = this.pieces.length === 1 ? this.pieces[0]! : this.pieces.join('');
    this.pieces = [];
    return text;
  }

  private closeKey(chunk: string, end: number): void {
    const text = this.takePiece(chunk, end);
    this.key = this.parsePiece(text) as string;
    this.keyIsMessages = this.key === 'messages';
    this.state = State.Colon;
  }

  /** A member value or element ended at `index` with `code` (`,`, `}` or `]` at depth 0). */
  private finishPiece(chunk: string, index: number, code: number): void {
    const offset = this.consumed + index;
    const text = this.takePiece(chunk, index);
    if (text.trim().length === 0) throw this.unexpected(chunk, index, offset);
    const value = this.parsePiece(text);
    if (this.state === State.Value) {
      if (code === CLOSE_BRACKET) throw this.failure("Expected ',' or '}' after property value", offset);
      this.handlers.member(this.key, value);
      this.state = code === COMMA ? State.KeyExpected : State.AfterDocument;
      return;
    }
    if (code === CLOSE_BRACE) throw this.failure("Expected ',' or ']' after array element", offset);
    this.handlers.message(value);
    if (code === COMMA) {
      this.state = State.ElementStart;
      this.afterComma = true;
    } else {
      this.state = State.AfterMember;
    }
  }

  /** `JSON.parse` of the held piece; its errors placed in the whole text. */
  private parsePiece(text: string): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      const described = describeJsonParseError(error, text);
      const { detail } = described;
      // V8 names no position for some errors of a short text ("NaN" is not valid JSON): its start, then.
      const position = described.position ?? 0;
      let line = this.pieceLine;
      let column = this.pieceColumn;
      let newline = text.indexOf('\n');
      let lineStart = 0;
      while (newline !== -1 && newline < position) {
        line += 1;
        lineStart = newline + 1;
        newline = text.indexOf('\n', lineStart);
      }
      column = line === this.pieceLine ? column + position : position - lineStart + 1;
      throw new JsonTextError(detail, line, column);
    }
  }

  private unexpected(chunk: string, index: number, offset: number): JsonTextError {
    return this.failure(`Unexpected token '${chunk[index] ?? ''}'`, offset);
  }

  private tooDeep(offset: number): never {
    throw this.failure(`nested deeper than ${this.maxDepth} levels`, offset);
  }

  /** An error at `offset` of the whole text (on the current line), or without a place. */
  private failure(detail: string, offset: number | undefined): JsonTextError {
    if (offset === undefined) return new JsonTextError(detail, undefined, undefined);
    return new JsonTextError(detail, this.line, offset - this.lineStart + 1);
  }
}
