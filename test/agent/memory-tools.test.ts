import { mkdir, mkdtemp, readFile, readdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryTools, MAX_NOTE_BYTES } from '../../src/agent/memory-tools.js';
import { parseMemoryPath, resolveMemoryPath } from '../../src/agent/memory-path.js';
import { PathEscapeError } from '../../src/errors.js';

let base: string;
let memoryDir: string;
let evilDir: string;

beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'dreamd-memory-tools-'));
  memoryDir = path.join(base, 'memory');
  evilDir = path.join(base, 'memory-evil');
  await mkdir(path.join(memoryDir, '.dreamd'), { recursive: true });
  await mkdir(evilDir, { recursive: true });
  await writeFile(path.join(evilDir, 'secret.md'), 'outside secret\n');
  await writeFile(path.join(memoryDir, '.dreamd', 'ledger.json'), '{"state":"private"}\n');
  await writeFile(path.join(memoryDir, 'MEMORY.md'), '- [Likes tea](user.md#tea) — prefers green tea\n');
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const validNote = {
  type: 'user',
  title: 'Food',
  description: 'no spicy food',
  content: 'The user does not eat spicy food.',
};

describe('path attacks on read_memory, write_memory and forget_memory', () => {
  const attacks: Array<[string, string]> = [
    ['parent traversal', '../memory-evil/secret.md'],
    ['traversal after a folder', 'notes/../../memory-evil/secret.md'],
    ['absolute path', '/etc/passwd'],
    ['absolute path to the sibling', `${'/'}tmp/memory-evil/secret.md`],
    ['URL-encoded dots', '%2e%2e/memory-evil/secret.md'],
    ['URL-encoded slash', '..%2fmemory-evil%2fsecret.md'],
    ['double-encoded traversal', '%252e%252e%252fmemory-evil%252fsecret.md'],
    ['backslash traversal', '..\\memory-evil\\secret.md'],
    ['NUL byte truncation', 'notes.md\u0000../../etc/passwd'],
    ['fullwidth dots and slash', '\uFF0E\uFF0E\uFF0Fmemory-evil\uFF0Fsecret.md'],
    ['one-dot leaders as dots', '\u2024\u2024/memory-evil/secret.md'],
    ['division slash lookalike', '..\u2215memory-evil\u2215secret.md'],
    ['zero-width space inside dots', '.\u200B./memory-evil/secret.md'],
    ['right-to-left override', 'notes/\u202Edm.terces'],
    ['dreamd state directory', '.dreamd/ledger.json'],
    ['dreamd state behind a folder', 'notes/../.dreamd/ledger.json'],
    ['hidden file', '.env'],
    ['Windows drive path', 'C:/Windows/win.ini'],
    ['home shortcut', '~/secret.md'],
    ['empty segment', 'notes//food.md'],
    ['trailing dot segment', 'notes./food.md'],
  ];

  for (const [name, attack] of attacks) {
    it(`refuses ${name}`, async () => {
      const tools = createMemoryTools({ memoryDir });
      await expect(tools.readMemory.handler({ path: attack })).rejects.toBeInstanceOf(PathEscapeError);
      await expect(tools.writeMemory.handler({ ...validNote, path: attack })).rejects.toBeInstanceOf(
        PathEscapeError,
      );
      await expect(tools.forgetMemory.handler({ path: attack })).rejects.toBeInstanceOf(PathEscapeError);
    });
  }

  it('refuses a symlink to a sibling directory that shares the prefix', async () => {
    await symlink(evilDir, path.join(memoryDir, 'linked'));
    const tools = createMemoryTools({ memoryDir });
    await expect(tools.readMemory.handler({ path: 'linked/secret.md' })).rejects.toBeInstanceOf(
      PathEscapeError,
    );
    await expect(tools.writeMemory.handler({ ...validNote, path: 'linked/new.md' })).rejects.toBeInstanceOf(
      PathEscapeError,
    );
    expect(await readdir(evilDir)).toEqual(['secret.md']);
  });

  it('refuses a symlinked file that points outside', async () => {
    await symlink(path.join(evilDir, 'secret.md'), path.join(memoryDir, 'innocent.md'));
    const tools = createMemoryTools({ memoryDir });
    await expect(tools.readMemory.handler({ path: 'innocent.md' })).rejects.toBeInstanceOf(PathEscapeError);
    await expect(tools.forgetMemory.handler({ path: 'innocent.md' })).rejects.toBeInstanceOf(PathEscapeError);
    expect(await readFile(path.join(evilDir, 'secret.md'), 'utf8')).toBe('outside secret\n');
  });

  it('refuses a not-yet-existing target under a symlinked parent that leads outside', async () => {
    await mkdir(path.join(memoryDir, 'notes'));
    await symlink(evilDir, path.join(memoryDir, 'notes', 'deep'));
    await expect(resolveMemoryPath(memoryDir, 'notes/deep/a/b/new.md')).rejects.toBeInstanceOf(
      PathEscapeError,
    );
  });

  it('refuses a dangling symlink as the target, which would write wherever it points', async () => {
    await symlink(path.join(evilDir, 'planted.md'), path.join(memoryDir, 'dangling.md'));
    const tools = createMemoryTools({ memoryDir });
    await expect(tools.writeMemory.handler({ ...validNote, path: 'dangling.md' })).rejects.toBeInstanceOf(
      PathEscapeError,
    );
    expect(await readdir(evilDir)).toEqual(['secret.md']);
  });

  it('refuses a symlink inside the directory that leads into .dreamd', async () => {
    await symlink(path.join(memoryDir, '.dreamd'), path.join(memoryDir, 'state'));
    const tools = createMemoryTools({ memoryDir });
    await expect(tools.readMemory.handler({ path: 'state/ledger.json' })).rejects.toBeInstanceOf(
      PathEscapeError,
    );
  });

  it('works when the memory directory itself is reached through a symlink', async () => {
    const alias = path.join(base, 'alias');
    await symlink(memoryDir, alias);
    const tools = createMemoryTools({ memoryDir: alias });
    await tools.writeMemory.handler({ ...validNote, path: 'notes/food.md' });
    expect(await readFile(path.join(memoryDir, 'notes', 'food.md'), 'utf8')).toContain('spicy');
  });

  it('names the refused path in the error', () => {
    expect(() => parseMemoryPath('../x.md')).toThrow(/"\.\.\/x\.md"/);
    try {
      parseMemoryPath('%2e%2e/x');
    } catch (error) {
      expect((error as PathEscapeError).requested).toBe('%2e%2e/x');
    }
  });

  it('accepts ordinary names, including accented letters', () => {
    expect(parseMemoryPath('notes/préférences alimentaires.md')).toEqual([
      'notes',
      'préférences alimentaires.md',
    ]);
  });
});

describe('memory tools', () => {
  it('write nothing while Claude Code holds .consolidate-lock, and write again once it is free', async () => {
    const tools = createMemoryTools({ memoryDir });
    const lockFile = path.join(memoryDir, '.consolidate-lock');
    // The test runner's parent: a live process that is not this one, holding the lock for five minutes.
    await writeFile(lockFile, String(process.ppid));
    const taken = new Date(Date.now() - 5 * 60_000);
    await utimes(lockFile, taken, taken);
    const index = await readFile(path.join(memoryDir, 'MEMORY.md'), 'utf8');
    await expect(tools.writeMemory.handler({ ...validNote, path: 'food.md' })).rejects.toThrow(
      new RegExp(
        `Claude Code is consolidating this memory folder right now \\(\\.consolidate-lock, pid ${process.ppid}`,
      ),
    );
    await expect(tools.forgetMemory.handler({ path: 'food.md' })).rejects.toThrow(/Claude Code/);
    expect(await readFile(path.join(memoryDir, 'MEMORY.md'), 'utf8')).toBe(index);
    expect(await readdir(memoryDir)).not.toContain('food.md');
    // Claude Code's run ends: it empties the body.
    await writeFile(lockFile, '');
    expect(await tools.writeMemory.handler({ ...validNote, path: 'food.md' })).toMatch(/Saved food\.md/);
  });

  it('writes a note with frontmatter and points the index at it, then reads it back', async () => {
    const tools = createMemoryTools({ memoryDir, now: () => new Date('2026-11-26T10:00:00Z') });
    const answer = await tools.writeMemory.handler({ ...validNote, path: 'notes/food.md' });
    expect(answer).toMatch(/Saved notes\/food\.md/);
    const note = await readFile(path.join(memoryDir, 'notes', 'food.md'), 'utf8');
    expect(note).toMatch(
      /^---\nname: Food\ndescription: no spicy food\ntype: user\nupdated: 2026-11-26\n---\n\nThe user does not eat spicy food\.\n$/,
    );
    const index = await tools.readMemory.handler({});
    expect(index).toBe(
      '- [Likes tea](user.md#tea) — prefers green tea\n- [Food](notes/food.md) — no spicy food\n',
    );
    expect(await tools.readMemory.handler({ path: 'notes/food.md' })).toBe(note);
  });

  it('replaces a note and its index line instead of adding a second one', async () => {
    const tools = createMemoryTools({ memoryDir });
    await tools.writeMemory.handler({ ...validNote, path: 'food.md' });
    const answer = await tools.writeMemory.handler({
      ...validNote,
      path: 'food.md',
      description: 'mild food only',
    });
    expect(answer).toMatch(/^Replaced/);
    const index = await readFile(path.join(memoryDir, 'MEMORY.md'), 'utf8');
    expect(index.split('\n').filter((line) => line.includes('(food.md)'))).toEqual([
      '- [Food](food.md) — mild food only',
    ]);
  });

  it('forgets a note and its index line, keeping the other lines', async () => {
    const tools = createMemoryTools({ memoryDir });
    await tools.writeMemory.handler({ ...validNote, path: 'food.md' });
    expect(await tools.forgetMemory.handler({ path: 'food.md' })).toMatch(/Forgot food\.md/);
    expect(await readFile(path.join(memoryDir, 'MEMORY.md'), 'utf8')).toBe(
      '- [Likes tea](user.md#tea) — prefers green tea\n',
    );
    expect(await tools.forgetMemory.handler({ path: 'food.md' })).toMatch(/nothing to forget/);
  });

  it('keeps both index lines when two notes are written at once', async () => {
    const tools = createMemoryTools({ memoryDir });
    await Promise.all([
      tools.writeMemory.handler({ ...validNote, path: 'a.md', title: 'A' }),
      tools.writeMemory.handler({ ...validNote, path: 'b.md', title: 'B' }),
    ]);
    const index = await readFile(path.join(memoryDir, 'MEMORY.md'), 'utf8');
    expect(index).toContain('](a.md)');
    expect(index).toContain('](b.md)');
  });

  it('refuses a note over 100 KB and leaves nothing behind', async () => {
    const tools = createMemoryTools({ memoryDir });
    const content = 'x'.repeat(MAX_NOTE_BYTES + 1);
    await expect(tools.writeMemory.handler({ ...validNote, path: 'big.md', content })).rejects.toThrow(
      /limit is 102400/,
    );
    expect((await readdir(memoryDir)).sort()).toEqual(['.dreamd', 'MEMORY.md']);
  });

  it('refuses to replace or delete the curated index and topic files', async () => {
    const tools = createMemoryTools({ memoryDir });
    await expect(tools.writeMemory.handler({ ...validNote, path: 'MEMORY.md' })).rejects.toThrow(
      /curated by dreamd/,
    );
    await expect(tools.writeMemory.handler({ ...validNote, path: 'user.md' })).rejects.toThrow(
      /curated by dreamd/,
    );
    await expect(tools.forgetMemory.handler({ path: 'feedback.md' })).rejects.toThrow(/curated by dreamd/);
    await expect(tools.writeMemory.handler({ ...validNote, path: 'notes.txt' })).rejects.toThrow(
      /end in \.md/,
    );
  });

  it('lists a folder without hidden entries and validates inputs with the schema', async () => {
    const tools = createMemoryTools({ memoryDir });
    expect(await tools.readMemory.handler({ path: '.' })).toBe('MEMORY.md');
    await expect(tools.writeMemory.handler({ path: 'a.md' })).rejects.toThrow(
      /Invalid input for write_memory/,
    );
  });

  it('describes what is worth saving and publishes JSON schemas', () => {
    const tools = createMemoryTools({ memoryDir });
    const write = tools.writeMemory.definition as {
      description: string;
      input_schema: Record<string, unknown>;
    };
    expect(write.description).toMatch(/feedback/);
    expect(write.description).toMatch(/Do not save secrets/);
    expect(write.input_schema).toMatchObject({
      type: 'object',
      required: ['path', 'type', 'title', 'description', 'content'],
    });
    expect(write.input_schema).not.toHaveProperty('$schema');
  });
});
