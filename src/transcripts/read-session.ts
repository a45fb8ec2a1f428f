import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, extname, resolve } from 'node:path';
import type { TranscriptFormat } from '../config/schema.js';
import { TranscriptErrorReason } from '../errors.js';
import type { Session } from './types.js';
import { DEFAULT_PART_CAPS, type PartCaps } from './normalize-message.js';
import { hasUnsafeCharacter, unsafeNameFailure } from './session-name.js';
import { locateDirectFile, resolveInside, statOrFail } from './session-path.js';
import { transcriptFailure } from './transcript-failure.js';
import { readerFor } from './transcript-readers.js';

export { isInsideDirectory } from './session-path.js';

/**
 * Reading one transcript file: where it may be (session-path.ts), how its bytes become text
 * (transcript-bytes.ts), which reader parses it (transcript-readers.ts, one per format), and here the order of
 * the checks and the verdict: a file that changed while it was read is reported as changed, whatever else.
 */

/**
 * Read-time caps: how much of each message part a reader keeps, in characters (UTF-16 code units). Each is
 * applied as a message is normalized, so a transcript's memory is what the digest can show, not the file's
 * size. The defaults are above every window the digest reads (see `PartCaps`); `Infinity` keeps parts whole.
 */
export interface ReadCapsOptions {
  /**
   * Characters kept of one text or thinking part, as its first 4/5 and last 1/5 with a marker of the
   * characters left out between them. Default 32,000 (the digest keeps 16,000 of a user text, cut the same way).
   */
  readonly maxPartChars?: number | undefined;
  /**
   * Characters kept of one tool result, from its head, with a marker of the rest. Default 2,000 (the digest
   * looks at max(512, 3 × `limits.toolResultChars`) characters: 600 by default).
   */
  readonly maxToolResultChars?: number | undefined;
  /** Characters kept of each string field of a tool call's input, from its head. Default 2,000. */
  readonly maxToolInputChars?: number | undefined;
  /**
   * Content blocks kept of one message; the rest are dropped with a warning before they are validated, so
   * memory follows bytes, not shape. Default 1,000 (see `PartCaps.blocksPerMessage`).
   */
  readonly maxBlocksPerMessage?: number | undefined;
}

/** The caps of `options`, each defaulted. */
export function partCapsOf(options: ReadCapsOptions): PartCaps {
  return {
    textChars: options.maxPartChars ?? DEFAULT_PART_CAPS.textChars,
    toolResultChars: options.maxToolResultChars ?? DEFAULT_PART_CAPS.toolResultChars,
    toolInputChars: options.maxToolInputChars ?? DEFAULT_PART_CAPS.toolInputChars,
    blocksPerMessage: options.maxBlocksPerMessage ?? DEFAULT_PART_CAPS.blocksPerMessage,
  };
}

/**
 * Bytes above which a native transcript is parsed as a stream, one message at a time, rather than read and
 * parsed whole: 8 MiB. Below it, reading whole is faster and its memory (about four times the file) is small.
 */
export const STREAM_NATIVE_ABOVE_BYTES = 8 * 1024 * 1024;

/** Where a transcript is and which files may be read: what fetching its bytes needs (`fetchSessionFile`). */
export interface FetchSessionOptions {
  /** `native` (one JSON document) or `claude-code` (JSONL, read as a stream). */
  readonly format: TranscriptFormat;
  /** The space's sessions directory: the file must resolve (symlinks followed) to a file inside it. */
  readonly sessionsDir: string;
  /**
   * `realpath(sessionsDir)` when the caller has it already (one per scan rather than one per file: each
   * file system call costs a thread-pool round trip). Default: resolved here.
   */
  readonly realSessionsDir?: string | undefined;
  /** Largest file read, in bytes (limits.maxSessionBytes). Checked with `stat` before any byte is read. */
  readonly maxBytes: number;
  /**
   * Native files larger than this many bytes are parsed as a stream (see `parseNativeTranscriptStream`);
   * default `STREAM_NATIVE_ABOVE_BYTES` (8 MiB). Both ways give the same Session and the same errors.
   */
  readonly streamNativeAboveBytes?: number | undefined;
}

/** What a read keeps of a transcript's messages: given when its fetched bytes are parsed. */
export interface ParseSessionOptions extends ReadCapsOptions {
  /** First message index to return; earlier messages are counted, not returned. Default 0. */
  readonly fromMessage?: number | undefined;
  /**
   * Characters of messages returned, from `fromMessage` on, before later ones are only counted: the session's
   * `keptUntil` says where the next read starts. At least one message is returned. Default: every message.
   */
  readonly keepChars?: number | undefined;
}

/** Options of `readSession`. */
export interface ReadSessionOptions extends FetchSessionOptions, ParseSessionOptions {}

/** A session together with the size and mtime of the file it was read from (for the ledger). */
export interface ReadSessionResult {
  readonly session: Session;
  /** Bytes of the file when it was read. */
  readonly size: number;
  /** Modification time of the file when it was read, in ms since the epoch. */
  readonly mtimeMs: number;
}

/** A transcript whose read has begun (`fetchSessionFile`): the parse, which gives the session or throws. */
export type FetchedSession = (options: ParseSessionOptions) => Promise<ReadSessionResult>;

/**
 * Reads one transcript as a Session and says how big the file was. Every failure is a TranscriptError
 * naming the file, the reason and the fix: outside-directory (a name or symlink leading out of the sessions
 * directory), unreadable, empty, too-big (checked before reading), binary, invalid-utf8, invalid-json,
 * wrong-shape, changed-while-read (size or mtime differ after reading), unsafe-name (a control character in
 * the file name, which would become the session id: see session-name.ts).
 */
export async function readSessionFile(file: string, options: ReadSessionOptions): Promise<ReadSessionResult> {
  return (await fetchSessionFile(file, options))(options);
}

/**
 * The first half of `readSessionFile`: the file located, checked, and (a native file read whole) its bytes
 * read and re-stat'ed, so a caller can fetch the next files while it parses this one. Throws what
 * `readSessionFile` throws before any byte is read; the returned parse throws the rest.
 */
export async function fetchSessionFile(file: string, options: FetchSessionOptions): Promise<FetchedSession> {
  const reader = readerFor(options.format);
  const sessionsDir = resolve(options.sessionsDir);
  const path = resolve(sessionsDir, file);
  if (hasUnsafeCharacter(basename(path))) throw unsafeNameFailure(path);
  const located = await locateDirectFile(path, sessionsDir, options.realSessionsDir);
  let realFile: string;
  let before: Stats;
  if (located !== undefined) {
    ({ realFile, before } = located);
  } else {
    realFile = await resolveInside(path, sessionsDir, options.realSessionsDir);
    before = await statOrFail(realFile, path, TranscriptErrorReason.unreadable, 'the file cannot be read');
  }
  if (!before.isFile()) {
    throw transcriptFailure(path, TranscriptErrorReason.unreadable, 'not a regular file');
  }
  if (before.size === 0)
    throw transcriptFailure(path, TranscriptErrorReason.empty, 'the file is empty (0 bytes)');
  if (before.size > options.maxBytes) {
    throw transcriptFailure(
      path,
      TranscriptErrorReason.tooBig,
      `${before.size} bytes is over the limit of ${options.maxBytes} bytes`,
    );
  }
  const fetched = await reader.fetch({
    realFile,
    path,
    stem: basename(path, extname(path)),
    size: before.size,
    mtime: before.mtime,
    sessionsDir,
    realSessionsDir: options.realSessionsDir,
    maxBytes: options.maxBytes,
    streamNativeAboveBytes: options.streamNativeAboveBytes ?? STREAM_NATIVE_ABOVE_BYTES,
    statAfter: () => stat(realFile).catch(() => undefined),
  });
  return async (parse) => {
    // A file rewritten under us can look broken in any way; "changed" is the true reason then, so the
    // after-stat is compared before a parse failure is reported.
    const { session, failure, after } = await fetched({
      fromMessage: parse.fromMessage ?? 0,
      keepChars: parse.keepChars,
      caps: partCapsOf(parse),
    });
    if (
      after === undefined ||
      after.size !== before.size ||
      after.mtimeMs !== before.mtimeMs ||
      after.ino !== before.ino
    ) {
      const what =
        after === undefined ? 'the file disappeared while it was read' : 'the file changed while it was read';
      throw transcriptFailure(path, TranscriptErrorReason.changedWhileRead, what, failure);
    }
    if (session === undefined) throw failure;
    return { session, size: before.size, mtimeMs: before.mtimeMs };
  };
}

/**
 * Reads one transcript (`file` absolute, or relative to `sessionsDir`) into the normalized Session: the
 * messages with index >= `fromMessage`, and `messageCount` of the whole file. Throws TranscriptError.
 */
export async function readSession(file: string, options: ReadSessionOptions): Promise<Session> {
  return (await readSessionFile(file, options)).session;
}
