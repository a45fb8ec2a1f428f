/**
 * What `status` and `doctor` say about a memory folder: the problems `loadMemory` found, each with its path
 * and fix, and whether any of them keeps facts from their file (a file dreamd cannot write, facts waiting in
 * the pending file, an unreadable `MEMORY.md`).
 */
import { loadMemory, type MemoryProblem } from './memory-dir.js';

export interface MemoryHealth {
  /** False when facts wait for a file a person must fix. */
  readonly ok: boolean;
  readonly problems: readonly MemoryProblem[];
}

export async function memoryHealth(memoryDir: string): Promise<MemoryHealth> {
  const loaded = await loadMemory(memoryDir);
  return {
    ok: loaded.broken.length === 0 && loaded.pendingIds.size === 0 && loaded.indexWritable,
    problems: loaded.problems,
  };
}
