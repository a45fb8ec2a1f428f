import { readFile } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { INDEX_FILE } from '../memory/memory-index.js';
import { resolveMemoryPath } from './memory-path.js';
import { formatIndexLine } from './memory-tools.js';

/**
 * Keeps `MEMORY.md` pointing at the notes Anthropic's memory tool writes, so the next session's prompt (and
 * consolidation, which keeps lines it did not write) sees them as it sees `write_memory`'s notes: one line
 * per note, `- [Title](path) — hook`. Lines are only added for a note that has none, and removed when the
 * note is deleted or renamed; other lines are never touched. Updates of one directory run one at a time.
 */

const queues = new Map<string, Promise<unknown>>();

function linksTo(line: string, relative: string): boolean {
  return line.includes(`](${relative})`) || line.includes(`](${relative}#`);
}

/** Title and hook of a note: its first heading (else the file name) and its first other line. */
export function describeNote(relative: string, text: string): { title: string; description: string } {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const heading = lines.find((line) => /^#{1,6}\s/.test(line));
  const title = heading?.replace(/^#{1,6}\s+/, '') ?? path.basename(relative, '.md');
  const hook =
    lines.find((line) => line !== heading && !/^#{1,6}\s/.test(line)) ?? 'note saved with the memory tool';
  return { title, description: hook };
}

export interface NoteIndexChange {
  /** Notes that must have a line (added when missing), with their current text. */
  readonly present?: ReadonlyArray<{ readonly relative: string; readonly text: string }>;
  /** Notes whose lines are removed. */
  readonly gone?: readonly string[];
}

/** Applies one change to `MEMORY.md` atomically (temporary file renamed into place). */
export function syncNoteIndex(memoryDir: string, change: NoteIndexChange): Promise<void> {
  const root = path.resolve(memoryDir);
  const next = (queues.get(root) ?? Promise.resolve()).then(async () => {
    const index = await resolveMemoryPath(root, INDEX_FILE);
    const before = await readFile(index.absolute, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    let lines = before === '' ? [] : before.replace(/\n$/, '').split('\n');
    for (const relative of change.gone ?? []) lines = lines.filter((line) => !linksTo(line, relative));
    for (const note of change.present ?? []) {
      if (lines.some((line) => linksTo(line, note.relative))) continue;
      const { title, description } = describeNote(note.relative, note.text);
      lines.push(formatIndexLine(title, note.relative, description));
    }
    const after = lines.length === 0 ? '' : `${lines.join('\n')}\n`;
    if (after !== before) await writeFileAtomic(index.absolute, after);
  });
  queues.set(
    root,
    next.catch(() => undefined),
  );
  return next;
}
