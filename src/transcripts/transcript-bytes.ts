import { isUtf8 } from 'node:buffer';
import {
  close,
  closeSync,
  constants as fsConstants,
  createReadStream,
  open,
  openSync,
  read,
  readSync,
  statSync,
  type Stats,
} from 'node:fs';
import { promisify } from 'node:util';
import { createInterface } from 'node:readline';
import { pipeline, Transform, type TransformCallback } from 'node:stream';
import { TranscriptError, TranscriptErrorReason, errorMessage } from '../errors.js';
import { transcriptFailure } from './transcript-failure.js';

/**
 * A transcript's bytes as text: read whole (exactly the size that was stat'ed) or streamed, and in both cases
 * refused when it holds a NUL byte (a binary file) or is not valid UTF-8, never decoded with U+FFFD.
 */

/** Bytes read at a time from a streamed transcript: big enough for few syscalls, small enough for flat memory. */
export const STREAM_CHUNK_BYTES = 64 * 1024;

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
 * The callback forms of open, read and close, promised: a `FileHandle` of `fs/promises` costs the event loop
 * about a fifth more per file (its object, its close tracking), and a run reads every transcript this way.
 */
const openFile = promisify(open);
const readInto = promisify(read);
const closeFile = promisify(close);

/** One read of `exactReads`: into `buffer` from `offset`, `length` bytes at the same file position. */
interface ExactRead {
  readonly buffer: Buffer;
  readonly offset: number;
  readonly length: number;
}

/**
 * The reads of exactly `size` bytes, for a caller to make synchronously or not: each is yielded and sent
 * back the bytes it read. Each asks for one byte more than expected: a read of a regular file comes back
 * short only at its end, so a first read of exactly `size` bytes proves the end without a second read (one
 * syscall, not two). Stops at the end (a read of 0), at `size`, or past it; a file that turned out shorter or
 * longer has changed since it was stat'ed (thrown).
 */
function* exactReads(size: number, shownPath: string): Generator<ExactRead, Buffer, number> {
  const buffer = Buffer.allocUnsafe(size + 1);
  let filled = 0;
  while (filled < size) {
    const bytesRead = yield { buffer, offset: filled, length: size + 1 - filled };
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
  return buffer.subarray(0, size);
}

/**
 * Reads exactly `size` bytes (`exactReads`) through the thread pool. The file is closed while `afterRead`
 * runs (the re-stat), so the close costs no extra wait.
 */
export async function readExactly<T>(
  realFile: string,
  size: number,
  shownPath: string,
  afterRead: () => Promise<T>,
): Promise<{ buffer: Buffer | undefined; failure: unknown; after: T }> {
  const fd = await openFile(realFile, READ_FLAGS);
  let closing: Promise<void> | undefined;
  try {
    let buffer: Buffer | undefined;
    let failure: unknown;
    try {
      const reads = exactReads(size, shownPath);
      let step = reads.next();
      while (step.done !== true) {
        const { buffer: into, offset, length } = step.value;
        step = reads.next((await readInto(fd, into, offset, length, offset)).bytesRead);
      }
      buffer = step.value;
    } catch (error) {
      failure = error;
    }
    closing = closeFile(fd);
    const [after] = await Promise.all([afterRead(), closing]);
    return { buffer, failure, after };
  } finally {
    if (closing === undefined) await closeFile(fd);
  }
}

/**
 * Files up to this many bytes are read with synchronous calls (`readExactlySync`): open, read, close and the
 * re-stat of a file in the page cache take microseconds each, and the promised forms spend several times that
 * on each round trip through libuv's thread pool (on the 2-core benchmark machine, a third of reading and
 * digesting 200 small transcripts went to those round trips). 1 MiB holds every typed session; bigger files,
 * whose reads take long enough to matter to the event loop, go through the thread pool. The scan stats files
 * synchronously for the same reason, and `readSettledSessions` yields to the event loop between files.
 */
export const SYNC_READ_MAX_BYTES = 1024 * 1024;

/** `statSync`, or undefined when the file cannot be stat'ed (gone). */
function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * `readExactly` with synchronous calls, for a file of at most `SYNC_READ_MAX_BYTES`: the same flags, the
 * same reads (`exactReads`), and the re-stat (`after`) of `realFile` once it is closed. Throws what opening
 * the file throws.
 */
export function readExactlySync(
  realFile: string,
  size: number,
  shownPath: string,
): { buffer: Buffer | undefined; failure: unknown; after: Stats | undefined } {
  const fd = openSync(realFile, READ_FLAGS);
  let buffer: Buffer | undefined;
  let failure: unknown;
  try {
    const reads = exactReads(size, shownPath);
    let step = reads.next();
    while (step.done !== true) {
      const { buffer: into, offset, length } = step.value;
      step = reads.next(readSync(fd, into, offset, length, offset));
    }
    buffer = step.value;
  } catch (error) {
    failure = error;
  } finally {
    closeSync(fd);
  }
  return { buffer, failure, after: statOrUndefined(realFile) };
}

const BOM_0 = 0xef;
const BOM_1 = 0xbb;
const BOM_2 = 0xbf;

/**
 * The text of a whole file: refuses NUL bytes and invalid UTF-8 (no U+FFFD in place of a bad sequence), and
 * drops a leading byte order mark, as `TextDecoder('utf-8', { fatal: true })` does.
 */
export function decodeUtf8(buffer: Buffer, shownPath: string): string {
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
export function createUtf8Check(shownPath: string): Transform {
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

/**
 * Streams the first `size` bytes of a text file through the UTF-8 check, one line at a time (without its
 * newline; `lineNumber` 1-based); never holds the whole file. Rejects with a TranscriptError naming `shownPath`.
 */
export async function streamLines(
  realFile: string,
  shownPath: string,
  size: number,
  onLine: (line: string, lineNumber: number) => void,
): Promise<void> {
  const source = createReadStream(realFile, { start: 0, end: size - 1, highWaterMark: STREAM_CHUNK_BYTES });
  const check = createUtf8Check(shownPath);
  const lines = createInterface({ input: check, crlfDelay: Infinity });
  let lineNumber = 0;
  await new Promise<void>((resolvePromise, reject) => {
    lines.on('line', (line: string) => {
      lineNumber += 1;
      onLine(line, lineNumber);
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
}
