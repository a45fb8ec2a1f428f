import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { TranscriptFormat } from '../config/schema.js';
import { errorMessage } from '../errors.js';

/**
 * The folder an agent worked in, read from the head of its transcript without parsing the rest: Claude Code
 * puts `cwd` on its conversation lines (the first line may be a summary or a snapshot without one), Codex on
 * its first line, `session_meta`'s `payload.cwd`. Native transcripts name none.
 *
 * Read in chunks of `HEAD_CHUNK_BYTES` up to `HEAD_LIMIT_BYTES`: the working directory comes within the first
 * few lines, and a first line that carries a long pasted prompt can pass 100 KB, so 1 MiB leaves room for
 * that while never reading a whole 50 MB transcript to learn one path.
 */
export const HEAD_CHUNK_BYTES = 16 * 1024;
export const HEAD_LIMIT_BYTES = 1024 * 1024;

export type WorkingDirectory =
  | { readonly cwd: string }
  | {
      readonly cwd?: undefined;
      readonly reason: 'no-working-directory' | 'unreadable';
      readonly detail: string;
    };

/** The `cwd` one line names, for the format, or undefined. Lines that are not JSON objects are skipped. */
export function workingDirectoryOfLine(line: string, format: TranscriptFormat): string | undefined {
  if (!line.includes('"cwd"')) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof record !== 'object' || record === null) return undefined;
  const fields = record as Record<string, unknown>;
  let cwd: unknown;
  if (format === 'codex') {
    const payload = fields.payload;
    if (fields.type !== 'session_meta' || typeof payload !== 'object' || payload === null) return undefined;
    cwd = (payload as Record<string, unknown>).cwd;
  } else {
    cwd = fields.cwd;
  }
  // Only an absolute path names a folder; anything else is not the agent's working directory.
  return typeof cwd === 'string' && cwd.startsWith('/') && !cwd.includes('\0') ? cwd : undefined;
}

/**
 * Reads the head of one transcript for its working directory. Never throws. The reads are synchronous: a head
 * is one or two 16 KB reads of a file, some 20 µs each, where the thread pool's round trip costs several times
 * that; a caller going over thousands yields between them (discovery every 64).
 */
export function readWorkingDirectory(path: string, format: TranscriptFormat): Promise<WorkingDirectory> {
  return Promise.resolve(readWorkingDirectorySync(path, format));
}

/** One buffer for every head: the reads are synchronous, so no two use it at once. */
const HEAD_BUFFER = Buffer.allocUnsafe(HEAD_CHUNK_BYTES);

/** `readWorkingDirectory` without the promise. */
export function readWorkingDirectorySync(path: string, format: TranscriptFormat): WorkingDirectory {
  let handle: number;
  try {
    handle = openSync(path, 'r');
  } catch (error) {
    return { reason: 'unreadable', detail: `cannot be opened (${errorMessage(error)})` };
  }
  try {
    const buffer = HEAD_BUFFER;
    // A character split across two chunks is joined by the decoder, not read as two broken halves.
    const decoder = new StringDecoder('utf8');
    let pending = '';
    let offset = 0;
    while (offset < HEAD_LIMIT_BYTES) {
      const bytesRead = readSync(handle, buffer, 0, HEAD_CHUNK_BYTES, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
      pending += decoder.write(buffer.subarray(0, bytesRead));
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const cwd = workingDirectoryOfLine(line, format);
        if (cwd !== undefined) return { cwd };
      }
    }
    const last = workingDirectoryOfLine(pending, format);
    if (last !== undefined) return { cwd: last };
    const where =
      offset >= HEAD_LIMIT_BYTES ? `its first ${HEAD_LIMIT_BYTES / 1024 / 1024} MiB` : 'the transcript';
    const field = format === 'codex' ? 'a session_meta line with a cwd' : 'a line with a cwd';
    return { reason: 'no-working-directory', detail: `${where} holds no ${field}` };
  } catch (error) {
    return { reason: 'unreadable', detail: `cannot be read (${errorMessage(error)})` };
  } finally {
    closeSync(handle);
  }
}
