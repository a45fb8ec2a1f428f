import { symlink, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDir, createTempDir } from '../support/fixtures.js';
import { parseMemoryFile } from '../../src/memory/claude-code-file.js';
import { NotDreamdsFactError, forgetFact } from '../../src/space/forget.js';
import { loadMemory, renderMemory } from '../../src/space/memory-dir.js';
import { filesUnderReview, renderReview } from '../../src/space/review.js';
import { fact, removeDir } from './helpers.js';
import { snapshotDirectory } from '../support/space.js';

const context = { relative: 'feedback_testing.md', modified: '2026-11-30', owner: 'other' as const };

/** Parses `text` as the file `relative` of the memory folder, one dreamd did not write. */
function parse(text: string, relative = context.relative) {
  return parseMemoryFile(text, { ...context, relative });
}

/** The fact of `text` (the file `relative`), which must parse without a warning. */
function parseCleanly(text: string, relative = context.relative) {
  const { fact: read, warnings } = parse(text, relative);
  expect(warnings).toEqual([]);
  return read;
}

describe('memory files dreamd did not write', () => {
  it('reads the recent Claude Code frontmatter (metadata type and modified) and the rule / Why / How body', () => {
    const text =
      '---\nname: Testing\ndescription: Run e2e first\nmetadata:\n  type: feedback\n  modified: 2026-10-02\n---\n\nRun e2e first.\n\n**Why:** it caught a bug.\n**How to apply:** before merging.\n';
    expect(parseCleanly(text)).toMatchObject({
      type: 'feedback',
      title: 'Testing',
      body: 'Run e2e first.',
      why: 'it caught a bug.',
      howToApply: 'before merging.',
      updated: '2026-10-02',
      owner: 'other',
      file: 'feedback_testing.md',
      description: 'Run e2e first',
    });
  });

  it('reads the older top-level type, no frontmatter at all, and [[links]]', () => {
    expect(
      parse('---\nname: Role\ndescription: x\ntype: user\n---\nData scientist.\n', 'role.md').fact.type,
    ).toBe('user');
    const plain = parse(
      '# Debugging\nSee [[feedback_testing|the testing rule]] and [[api]].\n',
      'reference_debugging.md',
    ).fact;
    expect(plain).toMatchObject({ type: 'reference', title: 'Debugging' });
    expect(plain.body).toContain('See the testing rule and api.');
  });

  it('reads frontmatter that is not YAML line by line, and says how to fix what is not even key: value', () => {
    expect(parseCleanly('---\nname: [unclosed\ntype: user\n---\nBody text.\n')).toMatchObject({
      title: '[unclosed',
      type: 'user',
      body: 'Body text.',
    });
    const { fact: read, warnings } = parse('---\nname: [unclosed\nnot a field\n---\nBody text.\n');
    expect(read.body).toBe('Body text.');
    expect(warnings.join('\n')).toMatch(
      /feedback_testing\.md: frontmatter could not be read as YAML.*Fix the lines/,
    );
  });

  it('keeps a value whole where YAML would cut it at an unquoted colon or a #', () => {
    const text =
      '---\nname: Flags: the rollout\ndescription: ships behind a flag # see PR #456\ntype: user\n---\nFlags go live on Mondays.\n';
    expect(parseCleanly(text, 'flags.md')).toMatchObject({
      type: 'user',
      title: 'Flags: the rollout',
      description: 'ships behind a flag # see PR #456',
      body: 'Flags go live on Mondays.',
    });
    const strict = parseCleanly(
      '---\nname: Deploys\ndescription: fixed in PR #456\ntype: project\n---\nBody.\n',
      'deploys.md',
    );
    expect(strict.description).toBe('fixed in PR #456');
  });

  const folder = useTempDir('memory');

  it('loads them as facts of owner other, reports duplicate names and links out of the folder, and never writes them', async () => {
    await writeFile(
      path.join(folder.path, 'a.md'),
      '---\nname: Same\ndescription: one\ntype: user\n---\nOne.\n',
    );
    await mkdir(path.join(folder.path, 'notes'));
    await writeFile(
      path.join(folder.path, 'notes', 'b.md'),
      '---\nname: Same\ndescription: two\ntype: user\n---\nTwo.\n',
    );
    const outside = (await createTempDir('memory')).path;
    try {
      await writeFile(path.join(outside, 'secret.md'), 'other space');
      await symlink(path.join(outside, 'secret.md'), path.join(folder.path, 'linked.md'));
      const loaded = await loadMemory(folder.path);
      expect(loaded.facts.map((item) => item.file).sort()).toEqual(['a.md', 'notes/b.md']);
      const reasons = loaded.problems.map((problem) => problem.reason).join('\n');
      expect(reasons).toContain('a.md and notes/b.md have the same frontmatter name "Same"');
      expect(reasons).toContain('outside the memory folder');
      const before = snapshotDirectory(folder.path);
      const files = renderMemory(loaded, [...loaded.facts, fact({ id: 'f-newfact001', title: 'New' })], {
        now: new Date('2026-12-01'),
      });
      expect([...files.keys()].sort()).toEqual(['MEMORY.md', 'user.md']);
      expect(files.get('MEMORY.md')).toContain('](notes/b.md)');
      expect(before.get('a.md')).toBeDefined();
      const id = loaded.facts.find((item) => item.file === 'a.md')?.id ?? '';
      await expect(forgetFact(folder.path, id)).rejects.toBeInstanceOf(NotDreamdsFactError);
    } finally {
      await removeDir(outside);
    }
  });

  it('lists a contradicted file for review once and leaves it out of the index until the entry is deleted', async () => {
    const old = fact({
      id: 'f-oldfile001',
      title: 'Role',
      body: 'Data scientist.',
      owner: 'other',
      file: 'role.md',
    });
    const newer = fact({
      id: 'f-newerfact1',
      title: 'Platform engineer',
      body: 'Moved to platform.',
      sources: ['s-9'],
    });
    const text = renderReview(null, [{ file: 'role.md', fact: old, newer }]);
    expect(text).toContain('## role.md');
    expect(text).toContain('sessions s-9');
    expect(renderReview(text, [{ file: 'role.md', fact: old, newer }])).toBe(text);
    expect([...filesUnderReview(text)]).toEqual(['role.md']);
    await writeFile(
      path.join(folder.path, 'role.md'),
      '---\nname: Role\ndescription: ds\ntype: user\n---\nData scientist.\n',
    );
    await mkdir(path.join(folder.path, '.dreamd'));
    await writeFile(path.join(folder.path, '.dreamd', 'review.md'), text ?? '');
    const loaded = await loadMemory(folder.path);
    expect(renderMemory(loaded, loaded.facts).get('MEMORY.md') ?? '').not.toContain('role.md');
    await writeFile(path.join(folder.path, '.dreamd', 'review.md'), '# For review\n');
    const cleared = await loadMemory(folder.path);
    expect(renderMemory(cleared, cleared.facts).get('MEMORY.md')).toContain('](role.md)');
  });
});
