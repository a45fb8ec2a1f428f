import { open } from 'node:fs/promises';
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

/** Reads the head of one transcript for its working directory. Never throws. */
export async function readWorkingDirectory(
  path: string,
  format: TranscriptFormat,
): Promise<WorkingDirectory> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    return { reason: 'unreadable', detail: `cannot be opened (${errorMessage(error)})` };
  }
  try {
    const buffer = Buffer.alloc(HEAD_CHUNK_BYTES);
    // A character split across two chunks is joined by the decoder, not read as two broken halves.
    const decoder = new StringDecoder('utf8');
    let pending = '';
    let offset = 0;
    while (offset < HEAD_LIMIT_BYTES) {
      const { bytesRead } = await handle.read(buffer, 0, HEAD_CHUNK_BYTES, offset);
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
    await handle.close();
  }
}
