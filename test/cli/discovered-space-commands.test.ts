import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ConsolidateOutcome } from '../../src/cli/consolidate-in-process.js';
import { claudeProjectName, discoveredSpaceId } from '../../src/discovery/index.js';
import type { Fact } from '../../src/memory/types.js';
import { cliAt, useFakeAnthropic, useTempDir } from '../support/fixtures.js';
import type { CliRun } from '../support/cli.js';
import { CODEX_FIXTURE, FIXTURE } from '../transcripts/helpers.js';
import { makeRepository, placeClaudeSession, placeCodexRollout } from '../discovery/agent-home.js';

/**
 * Every command that takes a space, on a space discovery made: by its id (the line `consolidate` prints to undo
 * a run), and by `.` in a subfolder of its repository, with the config in the home folder above (found upward).
 * A machine in a temp folder: a home with `dreamd.config.json` (`discover` only), Claude Code's and Codex's
 * homes, and two git repositories the agents worked in.
 */

const EXEC = 'rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl';

const fake = useFakeAnthropic({
  facts: [
    {
      trigger: 'Write a shell script called hello.sh',
      type: 'project',
      title: 'Hello script',
      body: 'The shop repository has a hello.sh that prints Hello world.',
    },
    {
      trigger: 'what is 2+2? just give me the answer',
      type: 'feedback',
      title: 'Short answers',
      body: 'Give just the answer to a quick arithmetic question.',
    },
  ],
});

const temp = useTempDir('every-command');
let home: string;
let shop: string;
let inShop: string;
let shopId: string;
let blogId: string;
let env: Record<string, string>;

beforeEach(() => {
  home = realpathSync(temp.path);
  const claudeHome = join(home, '.claude');
  const codexHome = join(home, '.codex');
  shop = makeRepository(join(home, 'code', 'shop'));
  inShop = join(shop, 'server', 'api');
  mkdirSync(inShop, { recursive: true });
  const blog = makeRepository(join(home, 'code', 'blog'));
  placeClaudeSession(claudeHome, shop, FIXTURE.helloWorld);
  placeCodexRollout(codexHome, blog, CODEX_FIXTURE.twoPlusTwo, '2025/10/29', EXEC);
  writeFileSync(join(home, 'dreamd.config.json'), JSON.stringify({ discover: ['claude-code', 'codex'] }));
  env = { CLAUDE_CONFIG_DIR: claudeHome, CODEX_HOME: codexHome, HOME: home };
  shopId = discoveredSpaceId(shop);
  blogId = discoveredSpaceId(blog);
});

/** The CLI with `--json`, run in `cwd`. */
function dreamd(cwd: string, ...argv: string[]): Promise<CliRun> {
  return cliAt(cwd, fake.url, [...argv, '--json'], env);
}

/** Consolidates the shop repository (by default by its id, from the home); its run's id. */
async function consolidateShop(cwd = home, name = shopId): Promise<string> {
  const run = await dreamd(cwd, 'consolidate', name, '--force', '--in-process');
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const [outcome] = run.data<{ results: ConsolidateOutcome[] }>().results;
  if (outcome === undefined || !outcome.ok) throw new Error(`the run failed: ${run.stdout}`);
  expect(outcome.spaceId).toBe(shopId);
  return outcome.summary.runId;
}

function expectOk(run: CliRun): void {
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
}

describe('every command on a discovered space', () => {
  it('consolidate and status take the repository you are in, the config found in the home above', async () => {
    const runId = await consolidateShop(inShop, '.');
    const status = await dreamd(inShop, 'status', '.');
    expectOk(status);
    expect(status.data<{ space: string; repository: string }[]>()).toMatchObject([
      { space: shopId, repository: shop },
    ]);
    const byId = await dreamd(home, 'status', '--space', shopId);
    expect(byId.data<{ space: string }[]>().map((row) => row.space)).toEqual([shopId]);
    const history = await dreamd(inShop, 'history', '.');
    expect(history.data<{ runId: string }[]>().map((row) => row.runId)).toEqual([runId]);
  });

  it('rolls back a run of a discovered space with the undo line consolidate prints, or from the repository', async () => {
    const text = await cliAt(home, fake.url, ['consolidate', shopId, '--force', '--in-process'], env);
    const undo = /undo +dreamd (rollback \S+ --space \S+)/.exec(text.stdout)?.[1];
    expect(undo).toBeDefined();
    const rollback = await dreamd(home, ...undo!.split(' '));
    expectOk(rollback);
    expect(rollback.data()).toMatchObject({ space: shopId });
    const again = await consolidateShop();
    const fromRepository = await dreamd(inShop, 'rollback', again, '.');
    expectOk(fromRepository);
    expect(fromRepository.data()).toMatchObject({ space: shopId, rolledBack: again });
  });

  it('shows, searches and forgets in the memory of a discovered space, by id or by `.`', async () => {
    await consolidateShop();
    const shown = await dreamd(inShop, 'memory', 'show', '.');
    expectOk(shown);
    const facts = shown.data<{ space: string; facts: Fact[] }>();
    expect(facts.space).toBe(shopId);
    expect(facts.facts.map((fact) => fact.title)).toEqual(['Hello script']);
    for (const [cwd, space] of [
      [inShop, '.'],
      [home, shopId],
    ] as const) {
      const search = await dreamd(cwd, 'memory', 'search', 'hello', space);
      expectOk(search);
      // The fact first; the session's own words (fused recall's passages) after it.
      const found = search.data<{ space: string; results: { kind: string; title: string }[] }>();
      expect(found.space).toBe(shopId);
      expect(found.results[0]).toMatchObject({ kind: 'fact', title: 'Hello script' });
      expect(found.results.slice(1).every((result) => result.kind === 'passage')).toBe(true);
    }
    const forget = await dreamd(home, 'memory', 'forget', facts.facts[0]!.id, '--space', shopId);
    expectOk(forget);
    expect(forget.data()).toMatchObject({ space: shopId, forgotten: { title: 'Hello script' } });
    const after = await dreamd(inShop, 'memory', 'show', '.');
    expect(after.data<{ facts: Fact[] }>().facts).toEqual([]);
  });

  it('shows one run of a discovered space, found in every space or named by `.`', async () => {
    const runId = await consolidateShop();
    for (const [cwd, argv] of [
      [home, ['history', 'show', runId]],
      [home, ['history', 'show', runId, '--space', shopId]],
      [inShop, ['history', 'show', runId, '.']],
    ] as const) {
      const shown = await dreamd(cwd, ...argv);
      expectOk(shown);
      expect(shown.data()).toMatchObject({ space: shopId, runId });
    }
  });

  it('lists the sessions of a discovered space by `.` and by id', async () => {
    for (const [cwd, space] of [
      [inShop, '.'],
      [home, blogId],
    ] as const) {
      const list = await dreamd(cwd, 'sessions', 'list', space);
      expectOk(list);
      const rows = list.data<{ space: string }[]>();
      expect(rows.length).toBe(1);
      expect(rows[0]!.space).toBe(space === '.' ? shopId : blogId);
    }
  });

  it('looks for proposals, and the one to accept or reject, in a discovered space', async () => {
    await consolidateShop();
    const proposals = await dreamd(inShop, 'proposals', '.');
    expectOk(proposals);
    expect(proposals.data()).toEqual({ proposals: [], problems: [] });
    const listed = await dreamd(home, 'proposals', '--space', shopId);
    expectOk(listed);
    for (const verb of ['accept', 'reject']) {
      for (const [cwd, space] of [
        [inShop, '.'],
        [home, shopId],
      ] as const) {
        const decided = await dreamd(cwd, verb, '20260101-000000-abcdef', space);
        // The space is found: what is missing is the proposal in it (exit 1), not the space (exit 2).
        expect({ verb, code: decided.code }).toEqual({ verb, code: 1 });
        expect(decided.json<{ error: { name: string; message: string } }>().error).toMatchObject({
          name: 'ProposalNotFoundError',
          message: expect.stringContaining(`space ${shopId}: no proposal`),
        });
      }
    }
  });

  it('cancels no batch of a discovered space, naming it', async () => {
    const cancel = await dreamd(inShop, 'batch', 'cancel', '.');
    expectOk(cancel);
    expect(cancel.data()).toEqual({ canceled: [{ space: shopId, batchId: null }] });
  });

  it('chats with the memory of a discovered space, named by `.` or by id', async () => {
    await consolidateShop();
    for (const [cwd, space] of [
      [inShop, '.'],
      [home, shopId],
    ] as const) {
      fake.server.enqueue({ text: 'There is a hello.sh.' });
      const chat = await cliAt(cwd, fake.url, ['chat', 'What scripts are there?', space, '--json'], env);
      expect({ code: chat.code, stderr: chat.stderr }).toEqual({ code: 0, stderr: '' });
      expect(chat.json()).toMatchObject({ ok: true, space: shopId, text: 'There is a hello.sh.' });
      expect(fake.server.requests.at(-1)!.system).toContain('Hello script');
    }
  });
});

describe('naming a space by a path', () => {
  it('names the repository of `.`, of a subfolder and of its root alike', async () => {
    for (const [cwd, name] of [
      [shop, '.'],
      [inShop, '.'],
      [inShop, '..'],
      [home, shop],
      [home, 'code/shop/server'],
    ] as const) {
      const shown = await dreamd(cwd, 'memory', 'show', name);
      expect({ cwd, name, code: shown.code, stderr: shown.stderr }).toEqual({
        cwd,
        name,
        code: 0,
        stderr: '',
      });
      expect(shown.data()).toMatchObject({ space: shopId });
    }
  });

  it('reads a dreamd.config.yaml in the home above the repository', async () => {
    rmSync(join(home, 'dreamd.config.json'));
    writeFileSync(join(home, 'dreamd.config.yaml'), 'discover:\n  - claude-code\n  - codex\n');
    const shown = await dreamd(inShop, 'memory', 'show', '.');
    expectOk(shown);
    expect(shown.data()).toMatchObject({ space: shopId });
  });

  it('takes a configured space over the discovered one for the same repository', async () => {
    const memory = join(home, '.claude', 'projects', claudeProjectName(shop), 'memory');
    mkdirSync(join(home, 'shop-sessions'));
    writeFileSync(
      join(home, 'dreamd.config.json'),
      JSON.stringify({
        discover: ['claude-code', 'codex'],
        spaces: [{ id: 'my-shop', sessions: 'shop-sessions', memory, layout: 'claude-code' }],
      }),
    );
    const shown = await dreamd(inShop, 'memory', 'show', '.');
    expectOk(shown);
    expect(shown.data()).toMatchObject({ space: 'my-shop', memoryDir: memory });
  });

  it('names what it tried, every configured and discovered space, and the fix, when nothing matches', async () => {
    const unknown = await dreamd(home, 'memory', 'show', 'nope');
    expect(unknown.code).toBe(2);
    const message = unknown.json<{ error: { message: string } }>().error.message;
    expect(message).toContain('no space "nope"; configured spaces: none; discovered spaces: ');
    expect(message).toContain(shopId);
    expect(message).toContain(blogId);
    expect(message).toContain('name a space by its id, or by a folder of its repository');
    const elsewhere = makeRepository(join(home, 'code', 'untouched'));
    const path = await dreamd(join(elsewhere), 'rollback', '20260101-000000-abcdef', '.');
    expect(path.code).toBe(2);
    expect(path.json<{ error: { message: string } }>().error.message).toMatch(
      new RegExp(
        `^no space serves the repository ${elsewhere}: no agent session ran in it .*discovered spaces: .*${shopId}`,
      ),
    );
  });
});
