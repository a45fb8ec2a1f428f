import { isUtf8 } from 'node:buffer';
import { constants as fsConstants, createReadStream, type Stats } from 'node:fs';
import { lstat, open, readlink, realpath, stat } from 'node:fs/promises';
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline, Transform, type TransformCallback } from 'node:stream';
import type { TranscriptFormat } from '../config/schema.js';
import { TranscriptError, TranscriptErrorReason, errorMessage } from '../errors.js';
import type { Session } from './types.js';
import { createClaudeCodeAccumulator } from './claude-code-lines.js';
import { parseNativeTranscript, parseNativeTranscriptStream } from './native-reader.js';
import { DEFAULT_PART_CAPS, type PartCaps } from './normalize-message.js';
import { transcriptFailure } from './transcript-failure.js';

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
}

/** The caps of `options`, each defaulted. */
export function partCapsOf(options: ReadCapsOptions): PartCaps {
  return {
    textChars: options.maxPartChars ?? DEFAULT_PART_CAPS.textChars,
    toolResultChars: options.maxToolResultChars ?? DEFAULT_PART_CAPS.toolResultChars,
    toolInputChars: options.maxToolInputChars ?? DEFAULT_PART_CAPS.toolInputChars,
  };
}

/**
 * Bytes above which a native transcript is parsed as a stream, one message at a time, rather than read and
 * parsed whole: 8 MiB. Below it, reading whole is faster and its memory (about four times the file) is small.
 */
export const STREAM_NATIVE_ABOVE_BYTES = 8 * 1024 * 1024;

/** Options of `readSession`. */
export interface ReadSessionOptions extends ReadCapsOptions {
  /** `native` (one JSON document) or `claude-code` (JSONL, read as a stream). */
  readonly format: TranscriptFormat;
  /** The space's sessions directory: the file must resolve (symlinks followed) to a file inside it. */
  readonly sessionsDir: string;
  /**
   * `realpath(sessionsDir)` when the caller has it already (one per scan rather than one per file: each
   * file system call costs a thread-pool round trip). Default: resolved here.
   */
  readonly realSessionsDir?: string | undefined;
  /** First message index to return; earlier messages are counted, not returned. Default 0. */
  readonly fromMessage?: number | undefined;
  /** Largest file read, in bytes (limits.maxSessionBytes). Checked with `stat` before any byte is read. */
  readonly maxBytes: number;
  /**
   * Native files larger than this many bytes are parsed as a stream (see `parseNativeTranscriptStream`);
   * default `STREAM_NATIVE_ABOVE_BYTES` (8 MiB). Both ways give the same Session and the same errors.
   */
  readonly streamNativeAboveBytes?: number | undefined;
}

/** A session together with the size and mtime of the file it was read from (for the ledger). */
export interface ReadSessionResult {
  readonly session: Session;
  /** Bytes of the file when it was read. */
  readonly size: number;
  /** Modification time of the file when it was read, in ms since the epoch. */
  readonly mtimeMs: number;
}

/** Bytes read at a time from a JSONL transcript: big enough for few syscalls, small enough for flat memory. */
const STREAM_CHUNK_BYTES = 64 * 1024;

/** True when `path` is strictly inside `directory` (both absolute and normalized). */
export function isInsideDirectory(directory: string, path: string): boolean {
  const relation = relative(directory, path);
  return relation !== '' && relation !== '..' && !relation.startsWith(`..${sep}`) && !isAbsolute(relation);
}

/** Resolves the file's real path and refuses anything that leads outside the real sessions directory. */
async function resolveInside(
  path: string,
  sessionsDir: string,
  knownRealDirectory?: string,
): Promise<string> {
  if (!isInsideDirectory(sessionsDir, path)) {
    throw transcriptFailure(
      path,
      TranscriptErrorReason.outsideDirectory,
      `the path leads outside the sessions directory ${sessionsDir}`,
    );
  }
  let realDirectory: string;
  try {
    realDirectory = knownRealDirectory ?? (await realpath(sessionsDir));
  } catch (error) {
    throw transcriptFailure(
      path,
      TranscriptErrorReason.unreadable,
      `the sessions directory cannot be read (${errorMessage(error)})`,
      error,
    );
  }
  let realFile: string;
  try {
    realFile = await realpath(path);
  } catch (error) {
    const danglingTarget = await symlinkTarget(path);
    if (
      danglingTarget !== undefined &&
      !isInsideDirectory(realDirectory, danglingTarget) &&
      !isInsideDirectory(sessionsDir, danglingTarget)
    ) {
      throw transcriptFailure(
        path,
        TranscriptErrorReason.outsideDirectory,
        `it is a symbolic link to ${danglingTarget}, outside the sessions directory`,
        error,
      );
    }
    throw transcriptFailure(
      path,
      TranscriptErrorReason.unreadable,
      `the file cannot be opened (${errorMessage(error)})`,
      error,
    );
  }
  if (!isInsideDirectory(realDirectory, realFile)) {
    throw transcriptFailure(
      path,
      TranscriptErrorReason.outsideDirectory,
      `it resolves to ${realFile}, outside the sessions directory ${realDirectory}`,
    );
  }
  return realFile;
}

/** Where a symbolic link points (resolved against its directory), or undefined when `path` is not a link. */
async function symlinkTarget(path: string): Promise<string | undefined> {
  try {
    const link = await lstat(path);
    if (!link.isSymbolicLink()) return undefined;
    return resolve(dirname(path), await readlink(path));
  } catch {
    return undefined;
  }
}

async function statOrFail(
  path: string,
  shownPath: string,
  reason: TranscriptErrorReason,
  what: string,
): Promise<Stats> {
  try {
    return await stat(path);
  } catch (error) {
    throw transcriptFailure(shownPath, reason, `${what} (${errorMessage(error)})`, error);
  }
}

/**
 * Flags of the whole-file read: read only, never through a symbolic link (the file was checked to be a
 * regular file inside the directory; a link put in its place since is refused, not followed), and never
 * waiting on a FIFO put in its place. Plain `r` where the platform has no such flags.
 */
const READ_FLAGS =
  fsConstants.O_NOFOLLOW !== undefined && fsConstants.O_NONBLOCK !== undefined
    ? fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK
    : 'r';

/**
 * Reads exactly `size` bytes; a file that turns out shorter or longer has changed since it was stat'ed.
 * Each read asks for one byte more than expected: a read of a regular file comes back short only at its
 * end, so a first read of exactly `size` bytes proves the end without a second read (one syscall, not two).
 * The handle is closed while `afterRead` runs (the re-stat), so the close costs no extra wait.
 */
async function readExactly<T>(
  realFile: string,
  size: number,
  shownPath: string,
  afterRead: () => Promise<T>,
): Promise<{ buffer: Buffer | undefined; failure: unknown; after: T }> {
  const handle = await open(realFile, READ_FLAGS);
  let closing: Promise<void> | undefined;
  try {
    let buffer: Buffer | undefined;
    let failure: unknown;
    try {
      const whole = Buffer.allocUnsafe(size + 1);
      let filled = 0;
      // Stops at the end (a read of 0), at `size` (the read came back one byte short: the end), or past it.
      while (filled < size) {
        const { bytesRead } = await handle.read(whole, filled, size + 1 - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      if (filled !== size) {
        throw transcriptFailure(
          shownPath,
          TranscriptErrorReason.changedWhileRead,
          `the file changed size while it was read (${size} bytes before)`,
        );
      }
      buffer = whole.subarray(0, size);
    } catch (error) {
      failure = error;
    }
    closing = handle.close();
    const [after] = await Promise.all([afterRead(), closing]);
    return { buffer, failure, after };
  } finally {
    if (closing === undefined) await handle.close();
  }
}

const BOM_0 = 0xef;
const BOM_1 = 0xbb;
const BOM_2 = 0xbf;

/**
 * The text of a whole file: refuses NUL bytes and invalid UTF-8 (no U+FFFD in place of a bad sequence), and
 * drops a leading byte order mark, as `TextDecoder('utf-8', { fatal: true })` does.
 */
function decodeUtf8(buffer: Buffer, shownPath: string): string {
  const nul = buffer.indexOf(0);
  if (nul !== -1) {
    throw transcriptFailure(
      shownPath,
      TranscriptErrorReason.binary,
      `NUL byte at offset ${nul}: a binary file, not a transcript`,
    );
  }
  if (!isUtf8(buffer)) {
    throw transcriptFailure(shownPath, TranscriptErrorReason.invalidUtf8, 'the file is not valid UTF-8');
  }
  const start =
    buffer.length >= 3 && buffer[0] === BOM_0 && buffer[1] === BOM_1 && buffer[2] === BOM_2 ? 3 : 0;
  return buffer.toString('utf8', start);
}

/** A transform that refuses NUL bytes and invalid UTF-8, and passes text on (object mode, for readline). */
function createUtf8Check(shownPath: string): Transform {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let offset = 0;
  return new Transform({
    readableObjectMode: true,
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      const nul = chunk.indexOf(0);
      if (nul !== -1) {
        callback(
          transcriptFailure(
            shownPath,
            TranscriptErrorReason.binary,
            `NUL byte at offset ${offset + nul}: a binary file, not a transcript`,
          ),
        );
        return;
      }
      offset += chunk.length;
      try {
        callback(null, decoder.decode(chunk, { stream: true }));
      } catch (error) {
        callback(
          transcriptFailure(
            shownPath,
            TranscriptErrorReason.invalidUtf8,
            `the file is not valid UTF-8 (before byte ${offset})`,
            error,
          ),
        );
      }
    },
    flush(callback: TransformCallback) {
      try {
        const rest = decoder.decode();
        callback(null, rest.length > 0 ? rest : undefined);
      } catch (error) {
        callback(
          transcriptFailure(
            shownPath,
            TranscriptErrorReason.invalidUtf8,
            'the file ends inside a UTF-8 sequence',
            error,
          ),
        );
      }
    },
  });
}

/** Streams a JSONL transcript line by line into the Claude Code accumulator; never holds the whole file. */
async function readClaudeCode(
  realFile: string,
  shownPath: string,
  size: number,
  fromMessage: number,
  mtime: Date,
  caps: PartCaps,
): Promise<Session> {
  const accumulator = createClaudeCodeAccumulator({
    file: shownPath,
    stem: basename(shownPath, extname(shownPath)),
    fromMessage,
    caps,
  });
  const source = createReadStream(realFile, { start: 0, end: size - 1, highWaterMark: STREAM_CHUNK_BYTES });
  const check = createUtf8Check(shownPath);
  const lines = createInterface({ input: check, crlfDelay: Infinity });
  let lineNumber = 0;
  await new Promise<void>((resolvePromise, reject) => {
    lines.on('line', (line: string) => {
      lineNumber += 1;
      accumulator.addLine(line, lineNumber);
    });
    lines.on('close', () => resolvePromise());
    lines.on('error', reject);
    pipeline(source, check, (error) => {
      if (error) {
        lines.close();
        reject(
          error instanceof TranscriptError
            ? error
            : transcriptFailure(
                shownPath,
                TranscriptErrorReason.unreadable,
                `reading failed (${errorMessage(error)})`,
                error,
              ),
        );
      }
    });
  });
  return accumulator.finish(mtime);
}

/**
 * Streams a native transcript through the UTF-8 check into the streaming parser: memory holds one chunk,
 * one message and the Session, never the file. Opened with `fs/promises` `open`, as `readExactly` is.
 */
async function readNativeStreamed(
  realFile: string,
  shownPath: string,
  size: number,
  fromMessage: number,
  mtime: Date,
  caps: PartCaps,
): Promise<Session> {
  const handle = await open(realFile, 'r');
  try {
    const source = handle.createReadStream({
      start: 0,
      end: size - 1,
      highWaterMark: STREAM_CHUNK_BYTES,
      autoClose: false,
    });
    const check = createUtf8Check(shownPath);
    let sourceFailure: Error | undefined;
    pipeline(source, check, (error) => {
      if (error) sourceFailure = error;
    });
    const chunks = (async function* textChunks(): AsyncGenerator<string> {
      for await (const chunk of check) yield chunk as string;
      if (sourceFailure !== undefined) throw sourceFailure;
    })();
    try {
      return await parseNativeTranscriptStream(chunks, {
        file: shownPath,
        stem: basename(shownPath, extname(shownPath)),
        fromMessage,
        mtime,
        caps,
      });
    } catch (error) {
      if (error instanceof TranscriptError) throw error;
      throw transcriptFailure(
        shownPath,
        TranscriptErrorReason.unreadable,
        `reading failed (${errorMessage(error)})`,
        error,
      );
    } finally {
      source.destroy();
      check.destroy();
    }
  } finally {
    await handle.close();
  }
}

/**
 * Reads one transcript as a Session and says how big the file was. Every failure is a TranscriptError
 * naming the file, the reason and the fix: outside-directory (a name or symlink leading out of the sessions
 * directory), unreadable, empty, too-big (checked before reading), binary, invalid-utf8, invalid-json,
 * wrong-shape, changed-while-read (size or mtime differ after reading).
 */
export async function readSessionFile(file: string, options: ReadSessionOptions): Promise<ReadSessionResult> {
  const sessionsDir = resolve(options.sessionsDir);
  const path = resolve(sessionsDir, file);
  const fromMessage = options.fromMessage ?? 0;
  const caps = partCapsOf(options);
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
  const statAfter = (): Promise<Stats | undefined> => stat(realFile).catch(() => undefined);
  // A file rewritten under us can look broken in any way; "changed" is the true reason then, so the
  // after-stat is compared before a parse failure is reported.
  let session: Session | undefined;
  let failure: unknown;
  let after: Stats | undefined;
  if (
    options.format === 'native' &&
    before.size <= (options.streamNativeAboveBytes ?? STREAM_NATIVE_ABOVE_BYTES)
  ) {
    // The re-stat runs while the handle closes: `after` is taken once every byte was read.
    let read: Awaited<ReturnType<typeof readExactly<Stats | undefined>>> | undefined;
    try {
      read = await readExactly(realFile, before.size, path, statAfter);
    } catch (error) {
      failure = error;
    }
    if (read !== undefined) {
      ({ failure, after } = read);
      if (read.buffer !== undefined) {
        try {
          session = parseNativeTranscript(decodeUtf8(read.buffer, path), {
            file: path,
            stem: basename(path, extname(path)),
            fromMessage,
            mtime: before.mtime,
            caps,
          });
        } catch (error) {
          failure = error;
        }
      }
    } else {
      after = await statAfter();
    }
  } else {
    try {
      session =
        options.format === 'native'
          ? await readNativeStreamed(realFile, path, before.size, fromMessage, before.mtime, caps)
          : await readClaudeCode(realFile, path, before.size, fromMessage, before.mtime, caps);
    } catch (error) {
      failure = error;
    }
    after = await statAfter();
  }
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
}

/**
 * The common case in one `lstat`: a regular file (not a link) directly inside the sessions directory is
 * `<real sessions directory>/<name>`, so it needs no `realpath` of its own. Undefined for anything else (a
 * link, a subdirectory, a missing file, a directory that cannot be resolved): the caller then resolves the
 * path in full, which also words the error.
 */
async function locateDirectFile(
  path: string,
  sessionsDir: string,
  knownRealDirectory: string | undefined,
): Promise<{ realFile: string; before: Stats } | undefined> {
  if (dirname(path) !== sessionsDir || !isInsideDirectory(sessionsDir, path)) return undefined;
  try {
    const realFile = join(knownRealDirectory ?? (await realpath(sessionsDir)), basename(path));
    const before = await lstat(realFile);
    return before.isFile() ? { realFile, before } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads one transcript (`file` absolute, or relative to `sessionsDir`) into the normalized Session: the
 * messages with index >= `fromMessage`, and `messageCount` of the whole file. Throws TranscriptError.
 */
export async function readSession(file: string, options: ReadSessionOptions): Promise<Session> {
  return (await readSessionFile(file, options)).session;
}
