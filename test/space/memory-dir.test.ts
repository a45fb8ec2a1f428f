import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../support/fixtures.js';
import { loadMemory, renderMemory } from '../../src/space/memory-dir.js';
import { createEmptyTopic, renderTopicFile } from '../../src/memory/topic-file.js';
import { INDEX_FILE } from '../../src/memory/memory-index.js';
import { REALISTIC_USER_MD, applyFiles, fact } from '../memory/helpers.js';

const folder = useTempDir('memory');

async function writeDreamdMemory(): Promise<void> {
  const now = new Date('2026-12-01');
  const facts = [
    fact({ id: 'f-aaaaaaaaaa', title: 'Vegetarian', body: 'Eats no meat.' }),
    fact(
      {
        id: 'f-bbbbbbbbbb',
        title: 'Answer briefly',
        body: 'Short answers.',
        why: 'Said so.',
        howToApply: 'Two lines.',
      },
      'feedback',
    ),
    fact({ id: 'f-cccccccccc', title: 'Uses Fastify', body: 'HTTP server is Fastify.' }, 'project'),
  ];
  const loaded = await loadMemory(folder.path);
  const files = renderMemory(loaded, facts, { now });
  await applyFiles(folder.path, files);
}

describe('memory directory', () => {
  it('loads a missing directory as empty memory', async () => {
    const loaded = await loadMemory(path.join(folder.path, 'nope'));
    expect(loaded.facts).toEqual([]);
    expect(loaded.indexText).toBeNull();
    expect(renderMemory(loaded, [])).toEqual(new Map());
  });

  it('round-trips a realistic directory without changing a byte', async () => {
    await writeDreamdMemory();
    // A person adds notes and a hand-written entry; dreamd adopts the entry once.
    const userFile = path.join(folder.path, 'user.md');
    await writeFile(userFile, `${await readFile(userFile, 'utf8')}\n## Has a cat\nCalled Miso.\n`);
    await writeFile(
      path.join(folder.path, INDEX_FILE),
      `${await readFile(path.join(folder.path, INDEX_FILE), 'utf8')}- [Testing](feedback_testing.md) — notes\n`,
    );
    const first = await loadMemory(folder.path);
    await applyFiles(folder.path, renderMemory(first, first.facts, { now: new Date('2026-12-01') }));
    const loaded = await loadMemory(folder.path);
    expect(loaded.problems).toEqual([]);
    expect(renderMemory(loaded, loaded.facts, { now: new Date('2026-12-01') })).toEqual(new Map());
    const text = await readFile(userFile, 'utf8');
    expect(text).toContain('## Has a cat\n<a id="f-');
    expect(text).toContain('Called Miso.\n');
    expect(await readFile(path.join(folder.path, INDEX_FILE), 'utf8')).toContain(
      '- [Testing](feedback_testing.md) — notes',
    );
  });

  it('keeps a hand edit when new facts are written', async () => {
    await writeDreamdMemory();
    const userFile = path.join(folder.path, 'user.md');
    await writeFile(
      userFile,
      (await readFile(userFile, 'utf8')).replace('Eats no meat.', 'Eats no meat, but fish is fine.'),
    );
    const loaded = await loadMemory(folder.path);
    const vegetarian = loaded.facts.find((f) => f.id === 'f-aaaaaaaaaa');
    expect(vegetarian?.editedByHand).toBe(true);
    const next = [
      ...loaded.facts.filter((f) => f.id !== 'f-aaaaaaaaaa'),
      { ...vegetarian!, body: 'Eats no meat at all.', sources: ['s-1', 's-9'] },
      fact({ id: 'f-dddddddddd', title: 'Likes trains', body: 'Travels by train.' }),
    ];
    const files = renderMemory(loaded, next, { now: new Date('2026-12-01') });
    const user = files.get('user.md') ?? '';
    expect(user).toContain('Eats no meat, but fish is fine.');
    expect(user).not.toContain('at all');
    expect(user).toContain('## Likes trains');
    expect(files.get(INDEX_FILE)).toContain('— Eats no meat, but fish is fine.');
  });

  it('keeps facts left out of nextFacts unless they are removed explicitly', async () => {
    await writeDreamdMemory();
    const loaded = await loadMemory(folder.path);
    expect(renderMemory(loaded, [], { now: new Date('2026-12-01') })).toEqual(new Map());
    const files = renderMemory(loaded, [], { now: new Date('2026-12-01'), remove: ['f-cccccccccc'] });
    expect(files.get('project.md')).not.toContain('Fastify');
    expect(files.get(INDEX_FILE)).not.toContain('f-cccccccccc');
  });

  it('reports a topic file with broken frontmatter and never rewrites it', async () => {
    await writeDreamdMemory();
    const broken = REALISTIC_USER_MD.replace('type: user', 'type: [user');
    await writeFile(path.join(folder.path, 'user.md'), broken);
    const loaded = await loadMemory(folder.path);
    expect(loaded.broken).toEqual(['user']);
    expect(loaded.problems).toEqual([
      { file: 'user.md', reason: expect.stringMatching(/^user\.md: frontmatter is not valid YAML.*Fix/) },
    ]);
    const files = renderMemory(loaded, [...loaded.facts, fact({ id: 'f-eeeeeeeeee', title: 'New' })], {
      now: new Date('2026-12-01'),
    });
    expect(files.has('user.md')).toBe(false);
    // The index keeps the lines that point into the broken file.
    expect(files.get(INDEX_FILE) ?? (await readFile(path.join(folder.path, INDEX_FILE), 'utf8'))).toContain(
      'user.md#f-aaaaaaaaaa',
    );
    expect(await readFile(path.join(folder.path, 'user.md'), 'utf8')).toBe(broken);
  });

  it('creates topic files with valid frontmatter', async () => {
    await mkdir(folder.path, { recursive: true });
    const text = renderTopicFile(createEmptyTopic('user'), [fact({ id: 'f-aaaaaaaaaa' })]);
    expect(text.startsWith('---\nname: User\ndescription: Who the user is')).toBe(true);
  });
});

describe('the claude-code layout', () => {
  it('names a new fact file apart from every name in the folder, whatever its case', async () => {
    await writeFile(path.join(folder.path, 'Project_deploys.md'), 'Deploys: ask Rui first.\n');
    const loaded = await loadMemory(folder.path, { layout: 'claude-code' });
    const files = renderMemory(loaded, [fact({ id: 'f-deploys001', title: 'Deploys' }, 'project')], {
      now: new Date('2026-12-01'),
    });
    expect([...files.keys()].sort()).toEqual(['MEMORY.md', 'project_deploys_depl.md']);
    expect(files.get('MEMORY.md')).toContain('- [Deploys](project_deploys_depl.md)');
  });
});
