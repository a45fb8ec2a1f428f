import { mkdir, readFile, readdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { createMemoryTools, MAX_NOTE_BYTES } from '../../src/agent/memory-tools.js';
import { parseMemoryPath, resolveMemoryPath } from '../../src/agent/memory-path.js';
import { PathEscapeError } from '../../src/errors.js';
import { splitIndexFile } from '../../src/memory/index.js';
import { acquireLock, loadMemory, rollbackRun } from '../../src/space/index.js';
import { expectHeldBackAsInstruction, INSTRUCTION_NOTE, useMemoryBesideEvil } from './helpers.js';

const folders = useMemoryBesideEvil('memory-tools');
let memoryDir: string;
let evilDir: string;

beforeEach(async () => {
  ({ memoryDir, evilDir } = folders);
  await writeFile(path.join(memoryDir, '.dreamd', 'ledger.json'), '{"state":"private"}\n');
  await writeFile(path.join(evilDir, 'secret.md'), 'outside secret\n');
  await writeFile(path.join(memoryDir, 'MEMORY.md'), '- [Likes tea](user.md#tea) — prefers green tea\n');
});

const validNote = {
  type: 'user',
  title: 'Food',
  body: 'The user does not eat spicy food.',
};

describe('path attacks on read_memory (the only memory tool that takes a path)', () => {
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
    });
  }

  it('refuses a symlink to a sibling directory that shares the prefix', async () => {
    await symlink(evilDir, path.join(memoryDir, 'linked'));
    const tools = createMemoryTools({ memoryDir });
    await expect(tools.readMemory.handler({ path: 'linked/secret.md' })).rejects.toBeInstanceOf(
      PathEscapeError,
    );
    await expect(resolveMemoryPath(memoryDir, 'linked/new.md')).rejects.toBeInstanceOf(PathEscapeError);
    expect(await readdir(evilDir)).toEqual(['secret.md']);
  });

  it('refuses a symlinked file that points outside', async () => {
    await symlink(path.join(evilDir, 'secret.md'), path.join(memoryDir, 'innocent.md'));
    const tools = createMemoryTools({ memoryDir });
    await expect(tools.readMemory.handler({ path: 'innocent.md' })).rejects.toBeInstanceOf(PathEscapeError);
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
    await expect(resolveMemoryPath(memoryDir, 'dangling.md')).rejects.toBeInstanceOf(PathEscapeError);
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
    const alias = path.join(folders.base, 'alias');
    await symlink(memoryDir, alias);
    const tools = createMemoryTools({ memoryDir: alias });
    await tools.writeMemory.handler(validNote);
    expect(await readFile(path.join(memoryDir, 'user.md'), 'utf8')).toContain('spicy');
    expect(await tools.readMemory.handler({ path: 'user.md' })).toContain('spicy');
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
    await expect(tools.writeMemory.handler(validNote)).rejects.toThrow(
      new RegExp(
        `Claude Code is consolidating this memory folder right now \\(\\.consolidate-lock, pid ${process.ppid}`,
      ),
    );
    await expect(tools.forgetMemory.handler({ id: 'f-aaaaaaaaaa' })).rejects.toThrow(/Claude Code/);
    expect(await readFile(path.join(memoryDir, 'MEMORY.md'), 'utf8')).toBe(index);
    expect(await readdir(memoryDir)).not.toContain('user.md');
    // Claude Code's run ends: it empties the body.
    await writeFile(lockFile, '');
    expect(await tools.writeMemory.handler(validNote)).toMatch(/^Saved f-[a-z2-7]{10} "Food" in user\.md/);
  });

  it("writes a fact into the topic file of its type, its line inside dreamd's block, the lines outside kept", async () => {
    const tools = createMemoryTools({ memoryDir, now: () => new Date('2026-11-26T10:00:00Z') });
    const answer = await tools.writeMemory.handler({
      type: 'feedback',
      title: 'Metric units',
      body: 'Use metric units in every answer.',
      why: 'The user lives in Lisbon.',
      howToApply: 'Convert miles and pounds.',
    });
    const id = /^Saved (f-[a-z2-7]{10})/.exec(answer)![1]!;
    const memory = await loadMemory(memoryDir);
    expect(memory.facts.find((fact) => fact.id === id)).toMatchObject({
      type: 'feedback',
      title: 'Metric units',
      body: 'Use metric units in every answer.',
      why: 'The user lives in Lisbon.',
      howToApply: 'Convert miles and pounds.',
      observed: '2026-11-26',
      status: 'active',
    });
    const feedback = await tools.readMemory.handler({ path: 'feedback.md' });
    expect(feedback).toContain(`<a id="${id}"></a>`);
    const index = await tools.readMemory.handler({});
    const { blockLines, before } = splitIndexFile(index);
    expect(blockLines.some((line) => line.includes(`](feedback.md#${id})`))).toBe(true);
    expect(before).toContain('- [Likes tea](user.md#tea) — prefers green tea');
    // One transaction of kind note, which rollback can undo.
    const runs = await readdir(path.join(memoryDir, '.dreamd', 'runs'));
    expect(runs).toEqual([expect.stringMatching(/note/)]);
  });

  it('is undone by a rollback of its run, like any transaction', async () => {
    await rm(path.join(memoryDir, '.dreamd', 'ledger.json'));
    const tools = createMemoryTools({ memoryDir });
    const index = await readFile(path.join(memoryDir, 'MEMORY.md'), 'utf8');
    await tools.writeMemory.handler(validNote);
    const [record] = await readdir(path.join(memoryDir, '.dreamd', 'runs'));
    await rollbackRun(memoryDir, record!.replace(/\.json$/, ''));
    expect(await readFile(path.join(memoryDir, 'MEMORY.md'), 'utf8')).toBe(index);
    expect((await loadMemory(memoryDir)).facts.filter((fact) => fact.owner !== 'other')).toEqual([]);
  });

  it('saves nothing twice and rewrites a fact by its id', async () => {
    const tools = createMemoryTools({ memoryDir });
    const first = await tools.writeMemory.handler(validNote);
    const id = /^Saved (f-[a-z2-7]{10})/.exec(first)![1]!;
    expect(await tools.writeMemory.handler({ ...validNote, body: 'the user does not eat spicy food' })).toBe(
      `Already in memory as ${id} "Food" (user.md): nothing saved twice.`,
    );
    expect(
      await tools.writeMemory.handler({ ...validNote, body: 'The user eats mild food only.', replaces: id }),
    ).toMatch(new RegExp(`^Rewrote ${id} "Food" in user\\.md`));
    const facts = (await loadMemory(memoryDir)).facts.filter((fact) => fact.type === 'user');
    expect(facts.map((fact) => [fact.id, fact.body])).toEqual([[id, 'The user eats mild food only.']]);
    await expect(tools.writeMemory.handler({ ...validNote, replaces: 'f-aaaaaaaaaa' })).rejects.toThrow(
      /No active fact f-aaaaaaaaaa/,
    );
  });

  it('forgets a fact by its id as memory forget does, and says when there is none', async () => {
    const tools = createMemoryTools({ memoryDir });
    const id = /^Saved (f-[a-z2-7]{10})/.exec(await tools.writeMemory.handler(validNote))![1]!;
    expect(await tools.forgetMemory.handler({ id })).toBe(
      `Forgot ${id} "Food" (user.md) and removed its index line.`,
    );
    expect(await readFile(path.join(memoryDir, 'MEMORY.md'), 'utf8')).not.toContain(id);
    expect((await loadMemory(memoryDir)).facts.some((fact) => fact.id === id)).toBe(false);
    expect(await readFile(path.join(memoryDir, '.dreamd', 'forgotten.json'), 'utf8')).toContain(id);
    await expect(tools.forgetMemory.handler({ id })).rejects.toThrow(/No fact/);
  });

  it('keeps both facts when two notes are written at once', async () => {
    const tools = createMemoryTools({ memoryDir, lockRetryMs: 5 });
    await Promise.all([
      tools.writeMemory.handler({ ...validNote, title: 'A', body: 'Fact A.' }),
      tools.writeMemory.handler({ ...validNote, title: 'B', body: 'Fact B.' }),
    ]);
    const titles = (await loadMemory(memoryDir)).facts.map((fact) => fact.title);
    expect(titles).toEqual(expect.arrayContaining(['A', 'B']));
  });

  it('holds back a note that reads as an instruction or carries a secret, in quarantine, not indexed', async () => {
    const tools = createMemoryTools({ memoryDir });
    const index = await readFile(path.join(memoryDir, 'MEMORY.md'), 'utf8');
    await expectHeldBackAsInstruction(tools.writeMemory);
    await expect(
      tools.writeMemory.handler({
        type: 'reference',
        title: 'Deploy key',
        body: 'The deploy key is ghp_abcdefghijklmnopqrstuvwxyz0123456789.',
      }),
    ).rejects.toThrow(/Not saved: the note contains a secret/);
    expect(await readFile(path.join(memoryDir, 'MEMORY.md'), 'utf8')).toBe(index);
    expect((await loadMemory(memoryDir)).facts.filter((fact) => fact.owner !== 'other')).toEqual([]);
    const quarantine = await readFile(path.join(memoryDir, '.dreamd', 'quarantine.md'), 'utf8');
    expect(quarantine).toContain(INSTRUCTION_NOTE.title);
    expect(quarantine).toContain('Deploy key');
    expect(quarantine).not.toContain('ghp_abcdefghijklmnopqrstuvwxyz0123456789');
  });

  it('waits for a run that holds the space lock, then refuses with who holds it, writing nothing', async () => {
    const lock = await acquireLock(memoryDir, { owner: 'worker 7', staleMs: 60_000 });
    try {
      const tools = createMemoryTools({ memoryDir, lockWaitMs: 60, lockRetryMs: 20 });
      await expect(tools.writeMemory.handler(validNote)).rejects.toThrow(
        /being written by someone else right now \(.*locked by worker 7.*memory was not changed/,
      );
    } finally {
      await lock.release();
    }
    expect(await readdir(memoryDir)).not.toContain('user.md');
  });

  it('refuses a note over 100 KB and leaves nothing behind', async () => {
    const tools = createMemoryTools({ memoryDir });
    const body = 'x'.repeat(MAX_NOTE_BYTES + 1);
    await expect(tools.writeMemory.handler({ ...validNote, body })).rejects.toThrow(/limit is 102400/);
    expect((await readdir(memoryDir)).sort()).toEqual(['.dreamd', 'MEMORY.md']);
  });

  it('never edits an old-style note file, and reads it as before', async () => {
    const old =
      '---\nname: Food\ndescription: no spicy food\ntype: user\n---\n\nThe user does not eat spicy food.\n';
    await writeFile(path.join(memoryDir, 'food.md'), old);
    const tools = createMemoryTools({ memoryDir });
    expect(await tools.readMemory.handler({ path: 'food.md' })).toBe(old);
    const foreign = (await loadMemory(memoryDir)).facts.find((fact) => fact.file === 'food.md')!;
    await expect(tools.forgetMemory.handler({ id: foreign.id })).rejects.toThrow(/dreamd did not write/);
    await tools.writeMemory.handler({ ...validNote, title: 'Tea', body: 'The user drinks green tea.' });
    expect(await readFile(path.join(memoryDir, 'food.md'), 'utf8')).toBe(old);
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
    expect(write.input_schema).toMatchObject({ type: 'object', required: ['type', 'title', 'body'] });
    expect(write.input_schema).not.toHaveProperty('$schema');
  });
});
