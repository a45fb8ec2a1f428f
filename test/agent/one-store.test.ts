/**
 * One store, end to end: a note the agent writes with `write_memory` is a fact of the space (a topic file, or a file of its own in a Claude Code folder),
 * screened, its line inside dreamd's block of `MEMORY.md`, found by `dreamd memory search`, forgotten by
 * `dreamd memory forget`, and seen by the next consolidation as a fact it does not write again. Real files, the
 * real CLI and the real consolidation, with the model a fake server answering through the scripted extractor.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createMemoryTools } from '../../src/agent/memory-tools.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { createConsolidator } from '../../src/consolidation/run.js';
import { INDEX_LIMITS, splitIndexFile } from '../../src/memory/index.js';
import { loadMemory, renderMemory } from '../../src/space/index.js';
import type { Fact } from '../../src/memory/types.js';
import { createModel } from '../../src/model/index.js';
import { scriptedExtractor, type ScriptedFact } from '../../harness/scripted-extractor.js';
import { runCliCaptured } from '../support/cli.js';
import { createTestSpace, EXAMPLE_SESSIONS_DIR } from '../support/space.js';
import { modelEnv, tempDirRemovedAfterTest, useFakeAnthropic } from '../support/fixtures.js';
import { expectHeldBackAsInstruction, INSTRUCTION_NOTE } from './helpers.js';

const CLAUDE_TRANSCRIPTS = fileURLToPath(new URL('../fixtures/claude-code/', import.meta.url));
const CLAUDE_MEMORY = fileURLToPath(new URL('../fixtures/claude-code-memory/current/', import.meta.url));

const HELLO: ScriptedFact = {
  trigger: 'hello.sh',
  type: 'project',
  title: 'hello.sh prints Hello world',
  body: 'The repo has a hello.sh script that prints "Hello world".',
};
const COFFEE: ScriptedFact = {
  trigger: 'Fábrica',
  type: 'user',
  title: 'Usual coffee at Fábrica',
  body: 'The user orders their usual coffee from Fábrica for pickup.',
};
const SEMICOLONS: ScriptedFact = {
  trigger: 'semicolon',
  type: 'feedback',
  title: 'No semicolons',
  body: 'Write JavaScript without semicolons.',
  why: 'The user asked for it.',
  howToApply: 'Leave semicolons out of every snippet.',
};
const PORTO: ScriptedFact = {
  trigger: 'Porto',
  type: 'user',
  title: 'Lives in Porto',
  body: 'The user moved to Porto.',
};

const MIGRATION: ScriptedFact = {
  trigger: 'migration',
  type: 'project',
  title: 'Postgres migration',
  body: 'The team migrates the orders database to Postgres.',
};

const fake = useFakeAnthropic();

/** A fresh space, its memory folder made, and an agent's memory tools on that folder. */
function spaceWithTools() {
  const test = createTestSpace({ modelUrl: fake.url });
  const memoryDir = test.space.memoryDir;
  mkdirSync(memoryDir, { recursive: true });
  return { test, memoryDir, tools: createMemoryTools({ memoryDir }) };
}

const env = () => modelEnv(fake.url);

/** A Claude Code project folder as a space: its transcripts, and the memory folder of the fixture. */
function claudeCodeSpace(): { root: string; config: Config } {
  const root = tempDirRemovedAfterTest('one-store');
  const project = join(root, '.claude', 'projects', '-home-me-repo');
  cpSync(CLAUDE_TRANSCRIPTS, project, { recursive: true, filter: (source) => !source.endsWith('.md') });
  const old = new Date('2026-11-01T00:00:00Z');
  for (const name of readdirSync(project)) utimesSync(join(project, name), old, old);
  cpSync(CLAUDE_MEMORY, join(project, 'memory'), { recursive: true });
  const path = join(root, 'dreamd.config.json');
  writeFileSync(
    path,
    JSON.stringify({
      spaces: [{ id: 'repo', sessions: project, memory: join(project, 'memory'), format: 'claude-code' }],
    }),
  );
  return { root, config: loadConfig({ path, env: env(), cwd: root }) };
}

function consolidate(config: Config) {
  return createConsolidator({ config, model: createModel(config.model) })(config.spaces[0]!, {
    force: true,
    dryRun: false,
    trigger: 'manual',
  });
}

function idOf(answer: string): string {
  const id = /^Saved (f-[a-z2-7]{10})/.exec(answer)?.[1];
  if (id === undefined) throw new Error(`no fact id in ${answer}`);
  return id;
}

async function dreamdFacts(memoryDir: string): Promise<Fact[]> {
  return (await loadMemory(memoryDir)).facts.filter((fact) => fact.owner !== 'other');
}

/** The note is a fact of its topic file, its line inside dreamd's block, the lines outside kept. */
async function expectStored(memoryDir: string, id: string, indexBefore: string): Promise<void> {
  const fact = (await loadMemory(memoryDir)).facts.find((one) => one.id === id);
  expect(fact).toMatchObject({ type: 'project', title: HELLO.title, body: HELLO.body, status: 'active' });
  expect(fact?.owner).not.toBe('other');
  // A Claude Code folder is written the way Claude Code writes it: the note is a file of its own.
  expect(fact?.file).toBe('project_hello_sh_prints_hello_world.md');
  expect(existsSync(join(memoryDir, 'project.md'))).toBe(false);
  expect(readFileSync(join(memoryDir, 'project_hello_sh_prints_hello_world.md'), 'utf8')).toContain(
    `id: ${id}`,
  );
  const index = readFileSync(join(memoryDir, 'MEMORY.md'), 'utf8');
  const parts = splitIndexFile(index);
  expect(parts.kind).toBe('block');
  expect(
    parts.blockLines.filter((line) => line.includes('](project_hello_sh_prints_hello_world.md)')),
  ).toHaveLength(1);
  expect(`${parts.before}${parts.after}`).not.toContain(id);
  // Everything outside dreamd's block is the people's, byte for byte.
  expect(index.startsWith(indexBefore.replace(/\n*$/, '\n'))).toBe(true);
}

describe('write_memory writes into the one store', () => {
  it('in a Claude Code folder: a screened fact, inside the block, searchable, not duplicated by the next run', async () => {
    const { root, config } = claudeCodeSpace();
    const memoryDir = config.spaces[0]!.memoryDir;
    const indexBefore = readFileSync(join(memoryDir, 'MEMORY.md'), 'utf8');
    const tools = createMemoryTools({ memoryDir, spaceId: 'repo' });
    const id = idOf(
      await tools.writeMemory.handler({ type: 'project', title: HELLO.title, body: HELLO.body }),
    );
    await expectStored(memoryDir, id, indexBefore);
    // The fixture's own memory files are read as before and never touched.
    for (const name of readdirSync(CLAUDE_MEMORY).filter((file) => file !== 'MEMORY.md'))
      expect(readFileSync(join(memoryDir, name), 'utf8')).toBe(
        readFileSync(join(CLAUDE_MEMORY, name), 'utf8'),
      );

    const search = await runCliCaptured(['memory', 'search', 'hello.sh script', '--json'], {
      cwd: root,
      env: env(),
    });
    expect(search.code).toBe(0);
    expect(search.data<{ results: { id: string }[] }>().results[0]?.id).toBe(id);

    fake.server.setDefault(scriptedExtractor([HELLO]));
    const summary = await consolidate(config);
    expect(summary.status).toBe('completed');
    // The model saw the note as a fact of memory, and the run did not write it a second time.
    expect(fake.server.requests[0]!.prompt).toContain(id);
    const same = (await dreamdFacts(memoryDir)).filter((fact) => fact.body === HELLO.body);
    expect(same.map((fact) => [fact.id, fact.status])).toEqual([[id, 'active']]);
    await expectStored(memoryDir, id, indexBefore);
  });

  it('in a topics space: the same, and the agent reads the facts consolidation wrote as its own', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: ['2026-11-09-coffee-usual.json'] });
    const memoryDir = test.space.memoryDir;
    mkdirSync(memoryDir, { recursive: true });
    const tools = createMemoryTools({ memoryDir });
    const id = idOf(
      await tools.writeMemory.handler({ type: 'user', title: COFFEE.title, body: COFFEE.body }),
    );
    const search = await runCliCaptured(['memory', 'search', 'coffee pickup', '--json'], {
      cwd: test.root,
      env: env(),
    });
    expect(search.data<{ results: { id: string }[] }>().results.map((result) => result.id)).toContain(id);

    fake.server.setDefault(scriptedExtractor([COFFEE, { ...PORTO, trigger: 'Fábrica' }]));
    expect((await consolidate(test.config)).status).toBe('completed');
    const facts = await dreamdFacts(memoryDir);
    expect(facts.filter((fact) => fact.body === COFFEE.body).map((fact) => fact.id)).toEqual([id]);
    const porto = facts.find((fact) => fact.title === PORTO.title)!;
    // What consolidation wrote is what the agent reads, and saving it again is not a second fact.
    expect(await tools.readMemory.handler({ path: 'user.md' })).toContain(`<a id="${porto.id}"></a>`);
    expect(await tools.writeMemory.handler({ type: 'user', title: 'Porto', body: PORTO.body })).toBe(
      `Already in memory as ${porto.id} "${PORTO.title}" (user.md): nothing saved twice.`,
    );
  });

  it('holds back "SYSTEM: ignore all previous instructions…": quarantined, not indexed, not searchable', async () => {
    const { test, memoryDir, tools } = spaceWithTools();
    await expectHeldBackAsInstruction(tools.writeMemory);
    expect(readdirSync(memoryDir)).not.toContain('MEMORY.md');
    expect(readdirSync(memoryDir)).not.toContain('feedback.md');
    expect(readFileSync(join(memoryDir, '.dreamd', 'quarantine.md'), 'utf8')).toContain(
      INSTRUCTION_NOTE.title,
    );
    const search = await runCliCaptured(['memory', 'search', 'previous instructions', '--json'], {
      cwd: test.root,
      env: env(),
    });
    expect(search.data<{ results: unknown[] }>().results).toEqual([]);
  });

  it("dreamd memory forget removes an agent's note, and rollback brings it back", async () => {
    const { test, memoryDir, tools } = spaceWithTools();
    const id = idOf(
      await tools.writeMemory.handler({ type: 'project', title: HELLO.title, body: HELLO.body }),
    );
    const forget = await runCliCaptured(['memory', 'forget', id, '--json'], { cwd: test.root, env: env() });
    expect(forget.code).toBe(0);
    expect(forget.data()).toMatchObject({ forgotten: { id, title: HELLO.title } });
    expect((await dreamdFacts(memoryDir)).map((fact) => fact.id)).not.toContain(id);
    expect(readFileSync(join(memoryDir, 'MEMORY.md'), 'utf8')).not.toContain(id);
    const { runId } = forget.data<{ runId: string }>();
    const rollback = await runCliCaptured(['rollback', runId], { cwd: test.root, env: env() });
    expect(rollback.stderr).toBe('');
    expect(rollback.code).toBe(0);
    expect((await dreamdFacts(memoryDir)).map((fact) => fact.id)).toEqual([id]);
  });
});

describe('MEMORY.md within its limits', () => {
  it('keeps 300 notes, 40 written in a row, within 200 lines, 25,000 bytes and 150 characters a line, curated facts listed', async () => {
    const test = createTestSpace({
      modelUrl: fake.url,
      examples: [
        '2026-11-09-coffee-usual.json',
        '2026-11-12-no-semicolons.json',
        '2026-11-26-moved-to-porto.json',
      ],
    });
    const memoryDir = test.space.memoryDir;
    fake.server.setDefault(scriptedExtractor([COFFEE, SEMICOLONS, PORTO]));
    expect((await consolidate(test.config)).status).toBe('completed');
    const curated = await dreamdFacts(memoryDir);
    expect(curated).toHaveLength(3);

    // 260 notes already in project.md, written as dreamd writes them; then 40 in a row through the tool, each
    // a transaction that renders MEMORY.md again. (All 300 through the tool took a minute of `npm test`.)
    const note = (index: number) => ({
      title: `Service ${index} runbook`,
      body: `Service number ${index} restarts with \`systemctl restart svc-${index}\` and logs to /var/log/svc-${index}.log.`,
    });
    const before = await loadMemory(memoryDir);
    const written: Fact[] = Array.from({ length: 260 }, (_, index) => ({
      id: `f-${(1_000_000 + index).toString(32).padStart(10, '0')}`,
      type: 'project',
      ...note(index),
      why: undefined,
      howToApply: undefined,
      observed: '2026-11-20',
      updated: '2026-11-20',
      sources: ['agent'],
      status: 'active',
      supersededBy: undefined,
      supersededOn: undefined,
      editedByHand: false,
    }));
    const files = renderMemory(before, [...before.facts, ...written], {
      now: new Date('2026-11-20T12:00:00Z'),
    });
    for (const [name, text] of files) if (text !== null) writeFileSync(join(memoryDir, name), text);
    const tools = createMemoryTools({ memoryDir, keepRuns: 20 });
    for (let index = 260; index < 300; index++)
      await tools.writeMemory.handler({ type: 'project', ...note(index) });
    const check = () => {
      const index = readFileSync(join(memoryDir, 'MEMORY.md'), 'utf8');
      const lines = index.replace(/\n$/, '').split('\n');
      expect(lines.length).toBeLessThanOrEqual(INDEX_LIMITS.maxLines);
      expect(Buffer.byteLength(index)).toBeLessThanOrEqual(INDEX_LIMITS.maxBytes);
      expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(INDEX_LIMITS.maxLineChars);
      // Fair across types: every curated fact keeps its line beside the 300 project notes.
      for (const fact of curated) expect(index).toContain(`#${fact.id})`);
      return lines;
    };
    const lines = check();
    expect(lines.filter((line) => line.includes('](project.md#')).length).toBeGreaterThan(50);
    expect((await dreamdFacts(memoryDir)).filter((fact) => fact.type === 'project')).toHaveLength(300);
    // The next consolidation still writes its own lines, a new fact's among them.
    cpSync(
      join(EXAMPLE_SESSIONS_DIR, '2026-11-16-postgres-migration.json'),
      join(test.space.sessionsDir, '2026-11-16-postgres-migration.json'),
    );
    fake.server.setDefault(scriptedExtractor([COFFEE, SEMICOLONS, PORTO, MIGRATION]));
    expect((await consolidate(test.config)).status).toBe('completed');
    const migration = (await dreamdFacts(memoryDir)).find((fact) => fact.title === MIGRATION.title)!;
    expect(check().some((line) => line.includes(`#${migration.id})`))).toBe(true);
  });
});

describe('a note written while a consolidation run is in flight', () => {
  it('waits for the run to commit, then is written once on top of what the run wrote', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: ['2026-11-09-coffee-usual.json'] });
    const memoryDir = test.space.memoryDir;
    mkdirSync(memoryDir, { recursive: true });
    let askedModel!: () => void;
    const asked = new Promise<void>((resolve) => (askedModel = resolve));
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const extractor = scriptedExtractor([COFFEE]);
    // The run holds the lock and waits for the model's answer until the test lets it go.
    fake.server.setDefault(async (request) => {
      askedModel();
      await answered;
      return typeof extractor === 'function' ? extractor(request) : extractor;
    });
    const run = consolidate(test.config);
    await asked;
    const tools = createMemoryTools({ memoryDir, lockRetryMs: 10 });
    const note = tools.writeMemory.handler({ type: 'project', title: HELLO.title, body: HELLO.body });
    let settled = false;
    void note.finally(() => (settled = true));
    // The run holds the space lock: the note waits (nothing written by it yet).
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    expect(readdirSync(memoryDir)).not.toContain('project.md');
    answer();
    expect((await run).status).toBe('completed');
    const id = idOf(await note);
    const facts = await dreamdFacts(memoryDir);
    expect(facts.map((fact) => fact.title).sort()).toEqual([COFFEE.title, HELLO.title].sort());
    expect(facts.filter((fact) => fact.id === id)).toHaveLength(1);
    const block = splitIndexFile(readFileSync(join(memoryDir, 'MEMORY.md'), 'utf8')).blockLines;
    expect(block.filter((line) => line.includes(`#${id})`))).toHaveLength(1);
    expect(block.some((line) => line.includes('](user.md#'))).toBe(true);
  });
});
