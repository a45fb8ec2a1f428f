import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createNoteStore } from '../../src/agent/note-store.js';

// Shared by the MCP server and Claude Code plugin tests.

/**
 * Saves the feedback rule "No semicolons" in `memoryDir` and marks it taught again three times after it was
 * saved (s1, s2, s3, the last on 2026-11-20), as consolidation records it in the entry's metadata.
 */
export async function saveRuleTaughtAgain(memoryDir: string): Promise<void> {
  await createNoteStore({ memoryDir }).save({
    type: 'feedback',
    title: 'No semicolons',
    body: 'Do not use semicolons in TypeScript code.',
  });
  const file = join(memoryDir, 'feedback.md');
  writeFileSync(
    file,
    readFileSync(file, 'utf8').replace(
      '"sources":[]',
      '"sources":[],"taughtAgain":{"count":3,"last":"2026-11-20","sessions":["s1","s2","s3"]}',
    ),
  );
}
