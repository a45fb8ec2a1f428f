import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ConsolidateOutcome } from '../../src/cli/consolidate-in-process.js';
import type { DiscoverOutput } from '../../src/cli/commands/discover.js';
import { claudeNativeProjectName, claudeProjectName } from '../../src/discovery/index.js';
import { loadMemory } from '../../src/space/index.js';
import { cliAt, useFakeAnthropic } from '../support/fixtures.js';
import { CODEX_FIXTURE, FIXTURE } from '../transcripts/helpers.js';
import {
  addWorktree,
  makeRepository,
  placeClaudeSession,
  placeClaudeSessionIn,
  placeCodexRollout,
  useMachine,
} from './agent-home.js';

/**
 * Discovery keeps repositories apart: each Claude Code folder and each transcript in it feeds the repository
 * it belongs to and no other. Every case is a home on disk, real transcripts, and the commands a person runs
 * (`dreamd discover`, `dreamd consolidate`); each fact is looked for in the memory folder Claude Code reads.
 */

const FACTS = {
  hello: {
    trigger: 'Write a shell script called hello.sh',
    type: 'project',
    title: 'Hello script',
    body: 'The repository has a hello.sh that prints Hello world.',
  },
  colour: {
    trigger: 'run an agent that creates a color file inside docs',
    type: 'project',
    title: 'Colour files in docs',
    body: 'Agents write colour files inside docs/.',
  },
  short: {
    trigger: 'what is 2+2? just give me the answer',
    type: 'feedback',
    title: 'Short answers',
    body: 'Give just the answer to a quick arithmetic question.',
  },
} as const;

const ROLLOUT = 'rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl';

const fake = useFakeAnthropic({ facts: Object.values(FACTS) });
const machine = useMachine('isolation');
let work: string;

beforeEach(() => {
  mkdirSync(join(machine.claudeHome, 'projects'), { recursive: true });
  mkdirSync(join(machine.codexHome, 'sessions'), { recursive: true });
  work = join(machine.root, 'work');
  mkdirSync(work);
  writeConfig({ discover: ['claude-code', 'codex'] });
});

function writeConfig(config: unknown): void {
  writeFileSync(join(work, 'dreamd.config.json'), JSON.stringify(config));
}

const projectFolder = (name: string): string => join(machine.claudeHome, 'projects', name);
const memoryOf = (repository: string): string => join(projectFolder(claudeProjectName(repository)), 'memory');

async function discover(): Promise<DiscoverOutput> {
  const run = await cliAt(work, fake.url, ['discover', '--json'], machine.env);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return run.data<DiscoverOutput>();
}

async function consolidate(): Promise<ConsolidateOutcome[]> {
  const run = await cliAt(work, fake.url, ['consolidate', '--force', '--json'], machine.env);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return run.data<{ results: ConsolidateOutcome[] }>().results;
}

async function titlesIn(memoryDir: string): Promise<string[]> {
  if (!existsSync(memoryDir)) return [];
  return (await loadMemory(memoryDir)).facts.map((fact) => fact.title).sort();
}

describe('two repositories whose long paths share their first 200 encoded characters', () => {
  // Past 200 characters Claude Code cuts the folder's name and adds a hash of the whole path.
  const longRepositories = () => {
    const stem = join(machine.root, 'code', 'x'.repeat(220));
    const alpha = makeRepository(`${stem}-alpha`);
    const beta = makeRepository(`${stem}-beta`);
    expect(claudeProjectName(alpha).slice(0, 200)).toBe(claudeProjectName(beta).slice(0, 200));
    return { alpha, beta };
  };

  it("keeps a fact said to Codex in one out of the other's Claude Code folder", async () => {
    const { alpha, beta } = longRepositories();
    placeClaudeSession(machine.claudeHome, alpha, FIXTURE.helloWorld);
    placeCodexRollout(machine.codexHome, beta, CODEX_FIXTURE.twoPlusTwo, '2025/10/29', ROLLOUT);

    const output = await discover();
    expect(output.repositories.map((row) => [row.root, row.memory])).toEqual([
      [alpha, memoryOf(alpha)],
      [beta, memoryOf(beta)],
    ]);
    await consolidate();
    expect(await titlesIn(memoryOf(alpha))).toEqual(['Hello script']);
    expect(await titlesIn(memoryOf(beta))).toEqual(['Short answers']);
  });

  it("takes the folder Claude Code's native build named, and refuses one that only shares the cut name", async () => {
    const { alpha, beta } = longRepositories();
    const native = projectFolder(claudeNativeProjectName(alpha));
    expect(native).not.toBe(projectFolder(claudeProjectName(alpha)));
    placeClaudeSessionIn(native, alpha, FIXTURE.helloWorld);
    // A folder with the right first 200 characters and a hash neither build gives beta.
    const forged = projectFolder(`${claudeProjectName(beta).slice(0, 200)}-zz9`);
    placeClaudeSessionIn(forged, beta, FIXTURE.summaryTask);
    placeCodexRollout(machine.codexHome, beta, CODEX_FIXTURE.twoPlusTwo, '2025/10/29', ROLLOUT);

    const output = await discover();
    expect(output.repositories.map((row) => [row.root, row.memory])).toEqual([
      [alpha, join(native, 'memory')],
      [beta, memoryOf(beta)],
    ]);
    expect(output.repositories[1]?.sources.map((source) => source.agent)).toEqual(['codex']);
    expect(output.skipped).toEqual([expect.objectContaining({ path: forged, reason: 'renamed-folder' })]);
    await consolidate();
    expect(await titlesIn(join(native, 'memory'))).toEqual(['Hello script']);
    expect(await titlesIn(memoryOf(beta))).toEqual(['Short answers']);
    expect(existsSync(join(forged, 'memory'))).toBe(false);
  });
});

describe('a Claude Code folder holding a transcript of another folder', () => {
  it("consolidates the folder's own sessions whatever sorts first, and skips a foreign one with a note", async () => {
    const shop = makeRepository(join(machine.root, 'code', 'shop'));
    const blog = makeRepository(join(machine.root, 'code', 'blog'));
    const folder = projectFolder(claudeProjectName(shop));
    placeClaudeSessionIn(folder, shop, FIXTURE.helloWorld, 'b-own');
    // Sorts before the folder's own session: a transcript that ran in blog.
    const foreign = placeClaudeSessionIn(folder, blog, FIXTURE.summaryTask, 'a-foreign');

    const output = await discover();
    expect(output.repositories.map((row) => row.root)).toEqual([shop]);
    expect(output.repositories[0]?.sources.map((source) => [source.folder, source.sessions])).toEqual([
      [folder, 1],
    ]);
    expect(output.skipped).toEqual([
      expect.objectContaining({
        path: foreign,
        reason: 'foreign-transcript',
        message: expect.stringContaining(`ran in ${blog}`),
      }),
    ]);
    await consolidate();
    expect(await titlesIn(memoryOf(shop))).toEqual(['Hello script']);
    expect(existsSync(memoryOf(blog))).toBe(false);
  });

  it('counts a session that ran in a subfolder of the same repository as its own', async () => {
    const shop = makeRepository(join(machine.root, 'code', 'shop'));
    mkdirSync(join(shop, 'server'));
    const folder = projectFolder(claudeProjectName(shop));
    placeClaudeSessionIn(folder, join(shop, 'server'), FIXTURE.summaryTask, 'a-server');
    placeClaudeSessionIn(folder, shop, FIXTURE.helloWorld, 'b-machine.root');

    const output = await discover();
    expect(output.skipped).toEqual([]);
    expect(
      output.repositories.map((row) => [row.root, row.sources.map((source) => source.sessions)]),
    ).toEqual([[shop, [2]]]);
    await consolidate();
    expect(await titlesIn(memoryOf(shop))).toEqual(['Colour files in docs', 'Hello script']);
  });
});

describe("a folder whose .git file points into another repository's git folder", () => {
  it("is its own repository unless git's back-link names it; a real worktree still joins its repository", async () => {
    const shop = makeRepository(join(machine.root, 'code', 'shop'));
    const feature = addWorktree(shop, join(machine.root, 'code', 'shop-feature'), 'feature');
    // Forged: a .git file pointing at the real worktree's git folder, which links back to shop-feature only.
    const forged = join(machine.root, 'code', 'forged');
    mkdirSync(forged);
    writeFileSync(join(forged, '.git'), `gitdir: ${join(shop, '.git', 'worktrees', 'shop-feature')}\n`);
    // Forged by hand: a git folder under shop's worktrees/ with no gitdir file at all.
    const ghost = join(machine.root, 'code', 'ghost');
    mkdirSync(ghost);
    mkdirSync(join(shop, '.git', 'worktrees', 'ghost'));
    writeFileSync(join(shop, '.git', 'worktrees', 'ghost', 'commondir'), '../..\n');
    writeFileSync(join(ghost, '.git'), `gitdir: ${join(shop, '.git', 'worktrees', 'ghost')}\n`);
    placeClaudeSession(machine.claudeHome, feature, FIXTURE.helloWorld);
    placeClaudeSession(machine.claudeHome, ghost, FIXTURE.summaryTask);
    placeCodexRollout(machine.codexHome, forged, CODEX_FIXTURE.twoPlusTwo, '2025/10/29', ROLLOUT);

    const output = await discover();
    expect(output.repositories.map((row) => [row.root, row.worktrees])).toEqual([
      [forged, []],
      [ghost, []],
      [shop, [feature]],
    ]);
    expect(output.notes).toEqual([
      expect.stringContaining(`${forged}/.git points into ${join(shop, '.git')}`),
      expect.stringContaining(`${ghost}/.git points into ${join(shop, '.git')}`),
    ]);
    await consolidate();
    expect(await titlesIn(memoryOf(shop))).toEqual(['Hello script']);
    expect(await titlesIn(memoryOf(forged))).toEqual(['Short answers']);
    expect(await titlesIn(memoryOf(ghost))).toEqual(['Colour files in docs']);
  });
});

describe('two repositories whose paths encode to one Claude Code folder', () => {
  const collidingRepositories = () => {
    const dashed = makeRepository(join(machine.root, 'code', 'a-b'));
    const underscored = makeRepository(join(machine.root, 'code', 'a_b'));
    const name = claudeProjectName(dashed);
    expect(claudeProjectName(underscored)).toBe(name);
    placeClaudeSession(machine.claudeHome, dashed, FIXTURE.helloWorld);
    placeClaudeSession(machine.claudeHome, underscored, FIXTURE.summaryTask);
    placeCodexRollout(machine.codexHome, underscored, CODEX_FIXTURE.twoPlusTwo, '2025/10/29', ROLLOUT);
    return { dashed, underscored, name, folder: projectFolder(name) };
  };

  it('names the collision and writes nothing into the folder until a person decides', async () => {
    const { dashed, underscored, name, folder } = collidingRepositories();

    const output = await discover();
    expect(output.collisions).toEqual([
      {
        folder,
        repositories: [dashed, underscored],
        owner: null,
        message: expect.stringContaining(`"owners": { "${name}": `),
      },
    ]);
    expect(output.repositories.map((row) => [row.root, row.space])).toEqual([
      [dashed, null],
      [underscored, null],
    ]);
    expect(output.repositories[0]?.leftOut).toContain(`shares ${folder} with ${underscored}`);
    const text = await cliAt(work, fake.url, ['discover'], machine.env);
    expect(text.stdout).toContain(
      `collision: ${folder} is the Claude Code folder of ${dashed} and ${underscored}`,
    );

    expect(await consolidate()).toEqual([]);
    expect(existsSync(join(folder, 'memory'))).toBe(false);
  });

  it('gives the folder to the repository `discover.owners` names, with only its own sessions', async () => {
    const { dashed, underscored, name, folder } = collidingRepositories();
    writeConfig({ discover: { agents: ['claude-code', 'codex'], owners: { [name]: underscored } } });

    const output = await discover();
    expect(output.collisions).toEqual([
      expect.objectContaining({ folder, repositories: [dashed, underscored], owner: underscored }),
    ]);
    expect(output.repositories.map((row) => [row.root, row.space !== null])).toEqual([
      [dashed, false],
      [underscored, true],
    ]);
    expect(output.repositories[0]?.leftOut).toContain(`belongs to ${underscored}`);

    const results = await consolidate();
    expect(results.map((result) => result.ok && result.summary.status)).toEqual(['completed']);
    expect(await titlesIn(join(folder, 'memory'))).toEqual(['Colour files in docs', 'Short answers']);
  });

  it('names an owner entry that matches none of the colliding repositories and still decides nothing', async () => {
    const { name, folder } = collidingRepositories();
    writeConfig({
      discover: { agents: ['claude-code', 'codex'], owners: { [name]: join(machine.root, 'code', 'a.b') } },
    });
    const output = await discover();
    expect(output.collisions).toEqual([expect.objectContaining({ folder, owner: null })]);
    expect(output.collisions[0]?.message).toContain(`names ${join(machine.root, 'code', 'a.b')}`);
    expect(await consolidate()).toEqual([]);
    expect(existsSync(join(folder, 'memory'))).toBe(false);
  });
});
