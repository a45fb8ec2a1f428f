import { claudeCodeLockHolder, describeHolder } from '../space/claude-code-hold.js';
import { INDEX_FILE } from '../memory/memory-index.js';
import { TOPIC_FILES } from '../memory/types.js';
import { ToolInputError } from './tool.js';

/**
 * The one set of rules every memory tool applies after the path check (`resolveMemoryPath`): the
 * `write_memory` / `forget_memory` tools and the adapter of Anthropic's `memory_20250818` tool alike.
 *
 * - Notes are Markdown: a path that is written, deleted or renamed ends in `.md` (so no folder is deleted or
 *   renamed whole, and no other kind of file is planted).
 * - The curated files (`MEMORY.md` and the four topic files) are dreamd's: no tool replaces, edits, deletes or
 *   renames them, nor renames a note over them. Curated facts are forgotten with `dreamd memory forget <id>`.
 * - One write carries at most `MAX_NOTE_BYTES`.
 * - Nothing is written while Claude Code consolidates the folder (`requireClaudeCodeLockFree`): every write
 *   rewrites `MEMORY.md`, which Claude Code's consolidation rewrites too.
 */

/** Largest note the agent may write, in bytes (100 KB, the cap of Anthropic's managed memory). */
export const MAX_NOTE_BYTES = 100 * 1024;

/** The index and the four topic files, relative to the memory directory. */
export const CURATED_FILES: ReadonlySet<string> = new Set<string>([
  INDEX_FILE,
  ...Object.values(TOPIC_FILES),
]);

export function isCurated(relative: string): boolean {
  return CURATED_FILES.has(relative);
}

/** Refuses a note path that is not Markdown or names a curated file. `requested` is shown as given. */
export function requireNotePath(relative: string, requested: string): void {
  if (!relative.endsWith('.md'))
    throw new ToolInputError(`Memory notes are Markdown: "${requested}" must end in .md.`);
  if (isCurated(relative)) {
    throw new ToolInputError(
      `"${relative}" is curated by dreamd (the index and the four topic files) and cannot be replaced, edited, ` +
        'renamed or deleted with this tool: write a note of your own, e.g. "notes/food.md". To forget a curated ' +
        'fact, ask the user to run `dreamd memory forget <id>`.',
    );
  }
}

/** Refuses a write of more than `MAX_NOTE_BYTES`. */
export function requireNoteSize(text: string): void {
  const size = Buffer.byteLength(text);
  if (size > MAX_NOTE_BYTES) {
    throw new ToolInputError(
      `The note is ${size} bytes; the limit is ${MAX_NOTE_BYTES} bytes per write. Keep memory short: split or summarise it.`,
    );
  }
}

/** What a tool is about to do, for `checkMemoryOperation`. Paths are relative and already checked. */
export type MemoryOperation =
  | { readonly kind: 'read'; readonly path: string }
  | { readonly kind: 'write'; readonly path: string; readonly text: string }
  | { readonly kind: 'delete'; readonly path: string }
  | { readonly kind: 'rename'; readonly from: string; readonly to: string };

/** Applies the rules above to one operation; throws ToolInputError with what to do instead. */
export function checkMemoryOperation(operation: MemoryOperation): void {
  switch (operation.kind) {
    case 'read':
      return;
    case 'write':
      requireNotePath(operation.path, operation.path);
      requireNoteSize(operation.text);
      return;
    case 'delete':
      requireNotePath(operation.path, operation.path);
      return;
    case 'rename':
      requireNotePath(operation.from, operation.from);
      requireNotePath(operation.to, operation.to);
      return;
  }
}

/**
 * Refuses a write while another live process holds Claude Code's `.consolidate-lock` in the folder (its
 * consolidation rewrites `MEMORY.md` and its memory files, as every write of these tools does). The tools only
 * check the lock, they do not take it: a write is one file and an index line, replaced atomically, and is not
 * a consolidation, so Claude Code's "last consolidation" mtime stays as it is.
 */
export async function requireClaudeCodeLockFree(memoryDir: string): Promise<void> {
  const holder = await claudeCodeLockHolder(memoryDir);
  if (holder === undefined || holder.pid === process.pid) return;
  throw new ToolInputError(
    `Claude Code is consolidating this memory folder right now (.consolidate-lock, ${describeHolder(holder)}); ` +
      'memory was not changed. Try again in a few minutes, or tell the user what you meant to save.',
  );
}
