/**
 * Reading one file of a memory directory safely. A memory folder is shared with people and other tools, so
 * a file may be anything: a symlink out of the folder, tens of megabytes, CRLF line ends, a byte-order mark.
 * Each case is named with its path and what to do; what can be read safely is read, and a file dreamd could
 * not write back byte for byte in its own style is marked read-only (never rewritten).
 */
import { lstat, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { errorMessage } from '../errors.js';

/** Largest memory file dreamd rewrites: 4 MiB (a topic file this big is already far past any budget). */
export const MAX_WRITABLE_FILE_BYTES = 4 * 1024 * 1024;
/** Largest memory file dreamd reads at all: 32 MiB (parsing is linear; this bounds the memory a run takes). */
export const MAX_READ_FILE_BYTES = 32 * 1024 * 1024;

export type MemoryFileRead =
  /** No such file. */
  | { readonly kind: 'absent' }
  /** Not read: `reason` says why and what to do. */
  | { readonly kind: 'skipped'; readonly reason: string }
  /**
   * Read. `text` has a byte-order mark removed and CRLF kept; `raw` is the file as it is. `readOnly` lists
   * why dreamd must not rewrite it (empty: it may).
   */
  | {
      readonly kind: 'read';
      readonly text: string;
      readonly raw: string;
      readonly modified: string;
      readonly readOnly: readonly string[];
    };

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function isInside(directory: string, file: string): boolean {
  const relative = path.relative(directory, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

/** Read `relative` inside `memoryDir`. Never throws. */
export async function readMemoryFile(memoryDir: string, relative: string): Promise<MemoryFileRead> {
  const file = path.join(memoryDir, relative);
  try {
    const link = await lstat(file);
    const readOnly: string[] = [];
    if (link.isSymbolicLink()) {
      const [target, root] = await Promise.all([realpath(file).catch(() => undefined), realpath(memoryDir)]);
      if (target === undefined) {
        return {
          kind: 'skipped',
          reason: `${relative} is a symlink to a file that does not exist; dreamd neither reads nor replaces it. Remove the link or restore its target.`,
        };
      }
      if (!isInside(root, target)) {
        return {
          kind: 'skipped',
          reason: `${relative} is a symlink to ${target}, outside the memory folder; dreamd neither reads nor writes it. Replace the link with a copy of the file if it is memory.`,
        };
      }
      readOnly.push(
        `${relative} is a symlink; dreamd reads it but does not replace it with a file. Replace the link with the file itself to let dreamd write to it.`,
      );
    }
    const info = link.isSymbolicLink() ? await lstat(await realpath(file)) : link;
    if (!info.isFile())
      return { kind: 'skipped', reason: `${relative} is not a regular file; dreamd skips it.` };
    if (info.size > MAX_READ_FILE_BYTES) {
      return {
        kind: 'skipped',
        reason: `${relative} is ${megabytes(info.size)}, more than the ${megabytes(MAX_READ_FILE_BYTES)} dreamd reads; it is skipped and never rewritten. Split it into smaller files.`,
      };
    }
    if (info.size > MAX_WRITABLE_FILE_BYTES) {
      readOnly.push(
        `${relative} is ${megabytes(info.size)}; dreamd reads it but does not rewrite files over ${megabytes(MAX_WRITABLE_FILE_BYTES)}. Move old entries to another file.`,
      );
    }
    const raw = await readFile(file, 'utf8');
    let text = raw;
    if (text.startsWith('\uFEFF')) {
      text = text.slice(1);
      readOnly.push(
        `${relative} starts with a byte-order mark; dreamd reads it but does not rewrite it. Save it as UTF-8 without BOM.`,
      );
    }
    if (text.includes('\r\n')) {
      readOnly.push(
        `${relative} has CRLF line ends; dreamd reads it but does not rewrite it. Convert it to LF line ends.`,
      );
    }
    return { kind: 'read', text, raw, modified: info.mtime.toISOString().slice(0, 10), readOnly };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    return {
      kind: 'skipped',
      reason: `${relative} cannot be read (${errorMessage(error)}); it is not rewritten. Check its permissions.`,
    };
  }
}
