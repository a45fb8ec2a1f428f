import { describe, expect, it } from 'vitest';
import { useTempDir } from '../support/fixtures.js';
import { loadMemory, planMemoryFiles, renderMemory } from '../../src/space/memory-dir.js';
import { DEFERRED_FACTS_FILE } from '../../src/space/paths.js';
import { MAX_WRITABLE_FILE_BYTES } from '../../src/memory/read-memory-file.js';
import { TOPIC_FILES } from '../../src/memory/types.js';
import { applyFiles, fact } from '../memory/helpers.js';

/** A topic file never grows past the size dreamd writes: its new facts wait in pending.json instead. */

const folder = useTempDir('memory');

const now = new Date('2026-12-01');
const BODY = 'A long but ordinary fact about the user, written out in full. '.repeat(60); // ~3.8 KB

describe('topic file size', () => {
  it('keeps user.md under the writable limit and holds the new facts that would pass it in pending', async () => {
    // About 3.9 MB of user facts: under the limit, near it.
    const existing = Array.from({ length: 1_000 }, (_, index) =>
      fact({ id: `f-u${String(index).padStart(9, '0')}`, body: `${BODY} (${index})` }),
    );
    await applyFiles(folder.path, renderMemory(await loadMemory(folder.path), existing, { now }));
    const loaded = await loadMemory(folder.path);
    expect(loaded.facts).toHaveLength(1_000);

    const added = Array.from({ length: 100 }, (_, index) =>
      fact({ id: `f-n${String(index).padStart(9, '0')}`, body: `${BODY} [new ${index}]` }),
    );
    const feedback = fact({ id: 'f-feedback01', body: 'Prefers short answers.' }, 'feedback');
    const plan = planMemoryFiles(loaded, [...loaded.facts, ...added, feedback], { now });

    expect(plan.files.has(TOPIC_FILES.user)).toBe(false);
    expect(plan.files.get(TOPIC_FILES.feedback)).toContain('Prefers short answers.');
    expect(plan.pending.map((pending) => pending.id).sort()).toEqual(added.map((item) => item.id).sort());
    expect(plan.files.get(DEFERRED_FACTS_FILE)).toContain('[new 99]');
    expect(plan.problems.map((problem) => problem.reason).join('\n')).toMatch(
      /user\.md would pass 4 MB, the most dreamd writes; .* new facts wait in \.dreamd\/pending\.json/,
    );
    for (const [file, text] of plan.files) {
      if (text !== null) expect(Buffer.byteLength(text), file).toBeLessThanOrEqual(MAX_WRITABLE_FILE_BYTES);
    }
  });
});
