import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../support/fixtures.js';
import { mergeArrived } from '../../src/memory/arrived-bytes.js';
import { BLOCK_BEGIN, BLOCK_END } from '../../src/memory/index-block.js';
import { contentHash } from '../../src/memory/topic-entry.js';
import { parseDeferredFacts } from '../../src/space/deferred.js';
import { parseTopicFile, topicFacts } from '../../src/memory/topic-file.js';
import { commitMemoryChanges, recoverMemory } from '../../src/space/transaction.js';
import { readRun } from '../../src/space/run-history.js';
import { rollbackRun } from '../../src/space/rollback.js';
import { summary } from '../memory/helpers.js';

const folder = useTempDir('memory');

const FRONT = '---\nname: User\ndescription: Who the user is.\ntype: user\n---\n\n';
const ENTRY_A =
  '## Likes tea\n<a id="f-aaaaaaaaaa"></a>\n<!-- dreamd {"observed":"2026-11-20","updated":"2026-11-20","sources":["s-1"],"hash":"0000000000000000"} -->\nThe user likes tea.\n';
/** An entry as dreamd writes it (its hash matches, so it is not a hand edit). */
const ENTRY_B = `## Walks to work\n<a id="f-bbbbbbbbbb"></a>\n<!-- dreamd {"observed":"2026-11-21","updated":"2026-11-21","sources":["s-2"],"hash":"${contentHash('Walks to work', 'The user walks to work.\n')}"} -->\nThe user walks to work.\n`;
const READ = `${FRONT}${ENTRY_A}`;
const PLANNED = `${FRONT}${ENTRY_A}\n${ENTRY_B}`;
const index = (lines: string[], outside = '# Mine\n'): string =>
  `${outside}${BLOCK_BEGIN}\n${lines.map((line) => `${line}\n`).join('')}${BLOCK_END}\n`;

describe('merging bytes that arrived during the commit', () => {
  it("keeps a person's lines around dreamd's block of MEMORY.md and takes only the block from the run", () => {
    const read = index(['- old line']);
    const seen = `${read}my new line\n`;
    const planned = index(['- old line', '- new line']);
    expect(mergeArrived('MEMORY.md', read, seen, planned)).toBe(`${planned}my new line\n`);
  });

  it("adds a new hand-written entry of a topic file after the run's entries, where orient reads it as a person's fact", () => {
    const seen = `${READ}\n## Plays chess\nOn Sundays.\n`;
    const merged = mergeArrived('user.md', READ, seen, PLANNED);
    expect(merged).toBe(`${PLANNED}\n## Plays chess\nOn Sundays.\n`);
    const facts = topicFacts(parseTopicFile(merged!, 'user.md'));
    expect(facts.map((fact) => fact.title)).toEqual(['Likes tea', 'Walks to work', 'Plays chess']);
    expect(facts[2]?.editedByHand).toBe(true);
  });

  it('keeps lines appended to the last entry with that entry, wherever the run put it', () => {
    const seen = `${READ}Green tea, mostly.\n`;
    const merged = mergeArrived('user.md', READ, seen, PLANNED)!;
    expect(merged).toContain('The user likes tea.\nGreen tea, mostly.\n\n## Walks to work');
    expect(mergeArrived('user.md', READ, seen, merged)).toBe(merged);
  });

  it('takes an entry a person rewrote when the run left it as it read it, and refuses when both changed it', () => {
    const rewritten = ENTRY_A.replace('The user likes tea.', 'The user likes coffee now.');
    const seen = `${FRONT}${rewritten}`;
    expect(mergeArrived('user.md', READ, seen, PLANNED)).toBe(`${FRONT}${rewritten}\n${ENTRY_B}`);
    const runChanged = PLANNED.replace('The user likes tea.', 'The user likes tea with milk.');
    expect(mergeArrived('user.md', READ, seen, runChanged)).toBeUndefined();
  });
});

describe('the commit compares before and after each rename', () => {
  it("merges a person's line written after the plan was made, before the commit started", async () => {
    await writeFile(path.join(folder.path, 'user.md'), `${READ}- written during the run\n`);
    await commitMemoryChanges(folder.path, {
      runId: 'run-1',
      files: new Map([['user.md', PLANNED]]),
      basis: new Map([['user.md', READ]]),
      runRecord: { summary: summary('run-1') },
    });
    const text = await readFile(path.join(folder.path, 'user.md'), 'utf8');
    expect(text).toContain('- written during the run\n');
    expect(text).toContain('## Walks to work');
    const record = await readRun(folder.path, 'run-1');
    expect(record.files['user.md']?.afterHash).not.toBeNull();
  });

  it("merges an editor's rename-save that lands after the check, before the rename: the next attempt reads it", async () => {
    const before = index(['- [Likes tea](user.md#f-aaaaaaaaaa) — tea']);
    const file = path.join(folder.path, 'MEMORY.md');
    await writeFile(file, before);
    const planned = index([
      '- [Likes tea](user.md#f-aaaaaaaaaa) — tea',
      '- [Walks to work](user.md#f-bbbbbbbbbb) — walks',
    ]);
    const saves: string[] = [];
    await commitMemoryChanges(folder.path, {
      runId: 'run-1',
      files: new Map([['MEMORY.md', planned]]),
      basis: new Map([['MEMORY.md', before]]),
      runRecord: { summary: summary('run-1') },
      faultInjection: (step) => {
        if (step !== 'checked:MEMORY.md' || saves.length > 0) return;
        // An editor saves: the whole text to a new file, renamed over the old one.
        const line = '- saved by the editor between the check and the rename\n';
        saves.push(line);
        writeFileSync(`${file}.swp`, readFileSync(file, 'utf8') + line);
        renameSync(`${file}.swp`, file);
      },
    });
    expect(saves).toHaveLength(1);
    const text = await readFile(file, 'utf8');
    expect(text).toContain('- saved by the editor between the check and the rename\n');
    expect(text).toContain('Walks to work');
  });

  it("rolls back only the run's change: lines a person added while the run committed stay (a three-way merge)", async () => {
    const before = index(['- [Likes tea](user.md#f-aaaaaaaaaa) — tea']);
    await writeFile(path.join(folder.path, 'MEMORY.md'), before);
    await writeFile(path.join(folder.path, 'user.md'), READ);
    const planned = index([
      '- [Likes tea](user.md#f-aaaaaaaaaa) — tea',
      '- [Walks to work](user.md#f-bbbbbbbbbb) — walks',
    ]);
    // The person writes into both files while the run commits (after its plan read them).
    await writeFile(path.join(folder.path, 'MEMORY.md'), `${before}- my own line, added during the run\n`);
    await writeFile(path.join(folder.path, 'user.md'), `${READ}- written during the run\n`);
    const record = await commitMemoryChanges(folder.path, {
      runId: 'run-1',
      files: new Map([
        ['MEMORY.md', planned],
        ['user.md', PLANNED],
      ]),
      basis: new Map([
        ['MEMORY.md', before],
        ['user.md', READ],
      ]),
      runRecord: { summary: summary('run-1') },
    });
    expect(record.files['MEMORY.md']?.planned).toBe(planned);
    expect(record.files['user.md']?.planned).toBe(PLANNED);

    await rollbackRun(folder.path, 'run-1');
    const memory = await readFile(path.join(folder.path, 'MEMORY.md'), 'utf8');
    expect(memory).toBe(`${before}- my own line, added during the run\n`);
    const user = await readFile(path.join(folder.path, 'user.md'), 'utf8');
    expect(user).toContain('- written during the run\n');
    expect(user).not.toContain('Walks to work');
  });

  it("defers a file a person changed in a way that cannot be merged: their bytes stay, the run's facts wait in pending.json", async () => {
    const theirs = `${FRONT}${ENTRY_A.replace('The user likes tea.', 'The user likes coffee now.')}`;
    await writeFile(path.join(folder.path, 'user.md'), theirs);
    const runChanged = PLANNED.replace('The user likes tea.', 'The user likes tea with milk.');
    const record = await commitMemoryChanges(folder.path, {
      runId: 'run-1',
      files: new Map([['user.md', runChanged]]),
      basis: new Map([['user.md', READ]]),
      runRecord: { summary: summary('run-1') },
    });
    expect(await readFile(path.join(folder.path, 'user.md'), 'utf8')).toBe(theirs);
    const pending = parseDeferredFacts(
      await readFile(path.join(folder.path, '.dreamd', 'pending.json'), 'utf8'),
    );
    expect(pending.facts.map((fact) => fact.id)).toEqual(['f-bbbbbbbbbb']);
    expect(record.files['user.md']).toBeUndefined();
    expect(record.summary.problems.map((problem) => problem.reason).join('\n')).toMatch(
      /user\.md was changed in a way that cannot be merged/,
    );
  });

  it('recovery after a crash compares too: a line written after the crash is kept, never overwritten', async () => {
    await writeFile(path.join(folder.path, 'user.md'), READ);
    await writeFile(path.join(folder.path, 'MEMORY.md'), index(['- old']));
    await expect(
      commitMemoryChanges(folder.path, {
        runId: 'run-1',
        files: new Map([
          ['user.md', PLANNED],
          ['MEMORY.md', index(['- old', '- new'])],
        ]),
        runRecord: { summary: summary('run-1') },
        faultInjection: (step) => {
          if (step === 'apply:0') throw new Error('crash');
        },
      }),
    ).rejects.toThrow();
    await writeFile(path.join(folder.path, 'user.md'), `${READ}\n## After the crash\nA person's note.\n`);
    await writeFile(path.join(folder.path, 'MEMORY.md'), `${index(['- old'])}after the crash\n`);
    const report = await recoverMemory(folder.path);
    expect(report.finished).toEqual(['run-1']);
    const user = await readFile(path.join(folder.path, 'user.md'), 'utf8');
    expect(user).toContain("## After the crash\nA person's note.\n");
    expect(user).toContain('## Walks to work');
    expect(await readFile(path.join(folder.path, 'MEMORY.md'), 'utf8')).toBe(
      `${index(['- old', '- new'])}after the crash\n`,
    );
  });

  it("merges an editor's rename-save that landed before the check (a new file, not an append)", async () => {
    await writeFile(path.join(folder.path, 'MEMORY.md'), index(['- old']));
    await mkdir(path.join(folder.path, 'editor'));
    const saved = path.join(folder.path, 'editor', 'MEMORY.md.swp');
    await writeFile(saved, `# Rewritten by my editor\n${index(['- old'], '')}`);
    await rename(saved, path.join(folder.path, 'MEMORY.md'));
    await commitMemoryChanges(folder.path, {
      runId: 'run-1',
      files: new Map([['MEMORY.md', index(['- old', '- new'])]]),
      basis: new Map([['MEMORY.md', index(['- old'])]]),
      runRecord: { summary: summary('run-1') },
    });
    expect(await readFile(path.join(folder.path, 'MEMORY.md'), 'utf8')).toBe(
      `# Rewritten by my editor\n${index(['- old', '- new'], '')}`,
    );
  });
});
