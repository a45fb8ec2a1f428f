import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ConsolidateOutcome } from '../../src/cli/consolidate-in-process.js';
import type { DiscoverOutput } from '../../src/cli/commands/discover.js';
import { claudeProjectName, discoveredSpaceId } from '../../src/discovery/index.js';
import { loadMemory, readLedger } from '../../src/space/index.js';
import { cliAt, useFakeAnthropic } from '../support/fixtures.js';
import { CODEX_FIXTURE, FIXTURE } from '../transcripts/helpers.js';
import {
  addWorktree,
  fingerprint,
  makeRepository,
  placeClaudeSession,
  placeCodexRollout,
  useMachine,
} from './agent-home.js';

/**
 * The scene, on the real fixtures of both formats: Claude Code worked in a repository and in its linked
 * worktree, Codex in a subfolder of that repository and in a second repository. With nothing in the config but
 * `discover`, dreamd finds two repositories and writes each one's memory where Claude Code reads it.
 */

const CHESS = 'rollout-2025-11-22T21-45-35-019aad50-a7e6-7422-b7a8-0b384290624f.jsonl';
const EXEC = 'rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl';

let shop: string;
let worktree: string;
let blog: string;

const FACTS = {
  main: {
    trigger: 'Write a shell script called hello.sh',
    type: 'project',
    title: 'Hello script',
    body: 'The shop repository has a hello.sh that prints Hello world.',
  },
  worktree: {
    trigger: 'run an agent that creates a color file inside docs',
    type: 'project',
    title: 'Colour files in docs',
    body: 'Agents write colour files inside docs/ of the shop repository.',
  },
  codexSub: {
    trigger: 'pieces have a cooldown before they are allowed to move',
    type: 'project',
    title: 'Cooldown chess',
    body: 'A chess variant where each piece has a cooldown before it may move.',
  },
  codexBlog: {
    trigger: 'what is 2+2? just give me the answer',
    type: 'feedback',
    title: 'Short answers',
    body: 'Give just the answer to a quick arithmetic question.',
  },
} as const;

const fake = useFakeAnthropic({ facts: Object.values(FACTS) });
const machine = useMachine('discover');

beforeEach(() => {
  shop = makeRepository(join(machine.root, 'code', 'shop'));
  worktree = addWorktree(shop, join(machine.root, 'code', 'shop-feature'), 'feature');
  mkdirSync(join(shop, 'server'));
  blog = makeRepository(join(machine.root, 'code', 'blog'));
  placeClaudeSession(machine.claudeHome, shop, FIXTURE.helloWorld);
  placeClaudeSession(machine.claudeHome, worktree, FIXTURE.summaryTask);
  placeCodexRollout(machine.codexHome, join(shop, 'server'), CODEX_FIXTURE.head, '2025/11/22', CHESS);
  placeCodexRollout(machine.codexHome, blog, CODEX_FIXTURE.twoPlusTwo, '2025/10/29', EXEC);
  mkdirSync(join(machine.root, 'work'));
  writeFileSync(
    join(machine.root, 'work', 'dreamd.config.json'),
    JSON.stringify({ discover: ['claude-code', 'codex'] }),
  );
});

const memoryOf = (repository: string): string =>
  join(machine.claudeHome, 'projects', claudeProjectName(repository), 'memory');

describe('discovery over a home of Claude Code and Codex', () => {
  it('finds two repositories, the worktree and the subfolder in the first, each with its sources and memory folder', async () => {
    const run = await cliAt(join(machine.root, 'work'), fake.url, ['discover', '--json'], machine.env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const output = run.data<DiscoverOutput>();
    expect(output.repositories.map((repository) => repository.root)).toEqual([blog, shop]);
    const [blogRow, shopRow] = output.repositories;
    expect(shopRow).toMatchObject({
      kind: 'repository',
      memory: memoryOf(shop),
      worktrees: [worktree],
      leftOut: null,
    });
    expect(shopRow?.sources.map((source) => [source.agent, source.folder, source.sessions])).toEqual([
      ['claude-code', join(machine.claudeHome, 'projects', claudeProjectName(shop)), 1],
      ['claude-code', join(machine.claudeHome, 'projects', claudeProjectName(worktree)), 1],
      ['codex', join(machine.codexHome, 'sessions'), 1],
    ]);
    expect(shopRow?.sources[2]?.workingDirectories).toEqual([join(shop, 'server')]);
    expect(blogRow).toMatchObject({ memory: memoryOf(blog), worktrees: [] });
    expect(blogRow?.sources.map((source) => [source.agent, source.sessions])).toEqual([['codex', 1]]);
    expect(output.skipped).toEqual([]);
  });

  it('prints each repository with its space, memory folder, sources and what was skipped, for a person', async () => {
    writeFileSync(join(machine.claudeHome, 'projects', 'notes.txt'), 'mine\n');
    const run = await cliAt(join(machine.root, 'work'), fake.url, ['discover'], machine.env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`${shop}\n  space ${discoveredSpaceId(shop)} → ${memoryOf(shop)}`);
    expect(run.stdout).toContain(`  worktree ${worktree}`);
    expect(run.stdout).toContain(`  codex: 1 session in ${join(machine.codexHome, 'sessions')}`);
    expect(run.stdout).toContain('skipped (1):');
    expect(run.stdout).toContain('notes.txt is not a project folder of Claude Code');
    const without = await cliAt(machine.root, fake.url, ['discover'], machine.env);
    expect(without.code).toBe(0);
    expect(without.stderr).toContain('no "discover" in the config');
  });

  it('consolidates each repository into the memory folder Claude Code reads, nothing crossing, no transcript byte changed', async () => {
    const transcriptsBefore = new Map([
      ...fingerprint(join(machine.claudeHome, 'projects'), new Set(['memory'])),
      ...fingerprint(machine.codexHome),
    ]);
    const run = await cliAt(
      join(machine.root, 'work'),
      fake.url,
      ['consolidate', '--force', '--json'],
      machine.env,
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const results = run.data<{ results: ConsolidateOutcome[] }>().results;
    expect(results.map((result) => result.ok && result.summary.status)).toEqual(['completed', 'completed']);

    const shopMemory = await loadMemory(memoryOf(shop));
    expect(shopMemory.facts.map((fact) => fact.title).sort()).toEqual([
      'Colour files in docs',
      'Cooldown chess',
      'Hello script',
    ]);
    const blogMemory = await loadMemory(memoryOf(blog));
    expect(blogMemory.facts.map((fact) => fact.title)).toEqual(['Short answers']);
    // Claude Code's layout: one file per fact and the index Claude Code loads.
    expect(existsSync(join(memoryOf(shop), 'MEMORY.md'))).toBe(true);
    expect(readdirSync(memoryOf(shop)).filter((name) => name.startsWith('project_'))).toHaveLength(3);
    // No memory folder for the worktree: Claude Code reads the main worktree's.
    expect(existsSync(memoryOf(worktree))).toBe(false);
    // One ledger for every agent's sessions of the repository.
    const ledger = await readLedger(memoryOf(shop));
    expect(Object.keys(ledger.sessions).sort()).toEqual(
      [
        '019aad50-a7e6-7422-b7a8-0b384290624f',
        '0790ea37-90df-4d30-8fdf-0bfe301b8f3e',
        'de3b8b19-5bc0-4a2a-934a-1b6806567e25',
      ].sort(),
    );

    const transcriptsAfter = new Map([
      ...fingerprint(join(machine.claudeHome, 'projects'), new Set(['memory'])),
      ...fingerprint(machine.codexHome),
    ]);
    expect(transcriptsAfter).toEqual(transcriptsBefore);

    // A second run finds nothing new in either repository.
    const requests = fake.server.requests.length;
    const again = await cliAt(
      join(machine.root, 'work'),
      fake.url,
      ['consolidate', '--force', '--json'],
      machine.env,
    );
    expect(again.code).toBe(0);
    expect(fake.server.requests.length).toBe(requests);
  });

  it('shows status, history and memory by repository path, a worktree or subfolder naming its repository', async () => {
    await cliAt(join(machine.root, 'work'), fake.url, ['consolidate', '--force', '--json'], machine.env);
    const shown = await cliAt(
      join(machine.root, 'work'),
      fake.url,
      ['memory', 'show', worktree, '--json'],
      machine.env,
    );
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('Cooldown chess');
    expect(shown.stdout).not.toContain('Short answers');
    const history = await cliAt(
      join(machine.root, 'work'),
      fake.url,
      ['history', join(blog), '--json'],
      machine.env,
    );
    expect(history.code).toBe(0);
    expect(history.data<{ space: string }[]>().map((row) => row.space)).toHaveLength(1);
    const status = await cliAt(
      join(machine.root, 'work'),
      fake.url,
      ['status', join(shop, 'server'), '--json'],
      machine.env,
    );
    expect(status.code).toBe(0);
    const [shopStatus] =
      status.data<{ repository: string; memoryDir: string; sources: { format: string }[] }[]>();
    expect(shopStatus).toMatchObject({ repository: shop, memoryDir: memoryOf(shop) });
    expect(shopStatus?.sources.map((source) => source.format)).toEqual([
      'claude-code',
      'claude-code',
      'codex',
    ]);
    const text = await cliAt(join(machine.root, 'work'), fake.url, ['status', shop], machine.env);
    expect(text.stdout).toContain(`(repository ${shop}) → ${memoryOf(shop)}`);
    expect(text.stdout).toContain(`  source     codex: ${join(machine.codexHome, 'sessions')}`);
    const unknown = await cliAt(
      join(machine.root, 'work'),
      fake.url,
      ['status', join(machine.root, 'code'), '--json'],
      machine.env,
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toContain('no space serves the repository');
  });
});
