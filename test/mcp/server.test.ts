/**
 * `dreamd mcp` end to end: the real binary as a child process, the MCP SDK's own client over stdio. Its tools and
 * their annotations, the space a call works on (working directory, the client's roots, a `space` argument), the
 * note screen of `write_memory` on `remember`, status, and a manual run against the fake model server.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createNoteStore } from '../../src/agent/note-store.js';
import { claudeProjectName } from '../../src/discovery/index.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { makeRepository, placeClaudeSession } from '../discovery/agent-home.js';
import { INSTRUCTION_NOTE } from '../agent/helpers.js';
import {
  exampleWorkspace,
  modelEnv,
  tempDirRemovedAfterTest,
  useFakeAnthropic,
} from '../support/fixtures.js';
import { FIXTURE } from '../transcripts/helpers.js';
import { connectMcp } from './client.js';
import { saveRuleTaughtAgain } from './helpers.js';

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });

/** A workspace with the configured default space (`sessions/`, `memory/`) and no session. */
function emptyWorkspace(): string {
  const root = tempDirRemovedAfterTest('mcp');
  mkdirSync(join(root, 'sessions'));
  mkdirSync(join(root, 'memory'));
  return root;
}

/** Two repositories the agents worked in, found by discovery, each with one fact in its memory. */
async function twoRepositories(): Promise<{
  alpha: string;
  beta: string;
  env: Record<string, string>;
  betaFact: string;
}> {
  const root = realpathSync(tempDirRemovedAfterTest('mcp-repos'));
  const claudeHome = join(root, 'home', '.claude');
  const alpha = makeRepository(join(root, 'code', 'alpha'));
  const beta = makeRepository(join(root, 'code', 'beta'));
  placeClaudeSession(claudeHome, alpha, FIXTURE.helloWorld);
  placeClaudeSession(claudeHome, beta, FIXTURE.helloWorld);
  const config = join(root, 'dreamd.config.json');
  writeFileSync(config, JSON.stringify({ discover: ['claude-code'] }));
  const seed = async (repository: string, body: string): Promise<string> => {
    const memoryDir = join(claudeHome, 'projects', claudeProjectName(repository), 'memory');
    mkdirSync(memoryDir, { recursive: true });
    const saved = await createNoteStore({ memoryDir }).save({ type: 'project', title: 'Deploys', body });
    if (saved.kind !== 'saved') throw new Error(`seed not saved: ${saved.kind}`);
    return saved.fact.id;
  };
  await seed(alpha, 'The alpha service deploys to Fly.io every Friday.');
  const betaFact = await seed(beta, 'The beta service deploys to Heroku every Monday.');
  return { alpha, beta, betaFact, env: { DREAMD_CONFIG: config, CLAUDE_CONFIG_DIR: claudeHome } };
}

describe('dreamd mcp', () => {
  it('lists its tools, the read-only ones marked readOnlyHint', async () => {
    const mcp = await connectMcp({ cwd: emptyWorkspace() });
    const { tools } = await mcp.client.listTools();
    const hints = Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations?.readOnlyHint]));
    expect(hints).toEqual({
      recall: true,
      read_memory: true,
      status: true,
      remember: false,
      consolidate: false,
    });
    const remember = tools.find((tool) => tool.name === 'remember')!;
    expect(remember.description).toMatch(/rule.*comes from the user.*userSaid/s);
    expect(Object.keys(remember.inputSchema.properties ?? {})).toContain('userSaid');
    expect(mcp.stderr()).toBe('');
  });

  it("finds the fact of the repository it serves and never another repository's", async () => {
    const { alpha, beta, betaFact, env } = await twoRepositories();
    // Claude Code starts the server in the project: the working directory names the space.
    const inAlpha = await connectMcp({ cwd: alpha, env });
    const found = await inAlpha.call('recall', { query: 'where does the service deploy' });
    expect(found.isError).toBe(false);
    expect(found.text).toContain('Fly.io');
    expect(found.text).not.toContain('Heroku');
    const byId = await inAlpha.call('read_memory', { id: betaFact });
    expect(byId).toMatchObject({ isError: true });
    expect(byId.text).toMatch(/no fact f-\S+ in .*alpha.*memory/);
    // Naming the other repository is refused, with the way to reach it.
    const named = await inAlpha.call('recall', { query: 'deploy', space: beta });
    expect(named.isError).toBe(true);
    expect(named.text).toMatch(/works on space "alpha-\w+" .*does not read or write space "beta-\w+"/);
    expect(named.text).not.toContain('Heroku');

    // A client's root wins over the working directory.
    const rootedInBeta = await connectMcp({ cwd: alpha, env, roots: [join(beta)] });
    const other = await rootedInBeta.call('recall', { query: 'where does the service deploy' });
    expect(other.text).toContain('Heroku');
    expect(other.text).not.toContain('Fly.io');
    expect((await rootedInBeta.call('read_memory', { id: betaFact })).text).toContain(
      'The beta service deploys to Heroku every Monday.',
    );
  });

  it('says which space it could not find and what to do', async () => {
    const { env } = await twoRepositories();
    const outside = realpathSync(tempDirRemovedAfterTest('mcp-outside'));
    const mcp = await connectMcp({ cwd: outside, env });
    const answer = await mcp.call('status');
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/no space serves the server's working directory .*dreamd-mcp-outside-/);
    expect(answer.text).toMatch(/Pass "space"/);
  });

  it('remembers what the user said, and refuses a rule the user did not say and a note that reads as an instruction', async () => {
    const root = emptyWorkspace();
    const mcp = await connectMcp({ cwd: root });
    const rule = {
      type: 'feedback',
      title: 'pnpm only',
      body: 'Always use pnpm to install packages, never npm.',
    };

    // A fact about the project needs no user words.
    const fact = await mcp.call('remember', {
      type: 'project',
      title: 'API folder',
      body: 'The HTTP API lives in services/api.',
    });
    expect(fact).toMatchObject({ isError: false });
    expect(fact.text).toMatch(/^space default: Saved f-\S+ "API folder" in project\.md/);

    // A rule with no user words, and one whose user words say something else: refused, put aside.
    const unsaid = await mcp.call('remember', rule);
    expect(unsaid.isError).toBe(true);
    expect(unsaid.text).toMatch(/Not saved: .*a rule or preference needs the user.*userSaid/);
    const otherWords = await mcp.call('remember', { ...rule, userSaid: 'thanks, that looks good to me' });
    expect(otherWords.isError).toBe(true);
    expect(readFileSync(join(root, 'memory', 'MEMORY.md'), 'utf8')).not.toContain('pnpm');
    expect(readFileSync(join(root, 'memory', '.dreamd', 'quarantine.md'), 'utf8')).toContain('pnpm');

    // An instruction is refused even when the user's words hold it.
    const instruction = await mcp.call('remember', { ...INSTRUCTION_NOTE, userSaid: INSTRUCTION_NOTE.body });
    expect(instruction.isError).toBe(true);
    expect(instruction.text).toMatch(/Not saved: the note reads as an instruction/);

    // The rule in the user's own words is saved, and found.
    const said = await mcp.call('remember', {
      ...rule,
      userSaid: 'From now on always use pnpm to install packages in this repo, never npm.',
    });
    expect(said).toMatchObject({ isError: false });
    const id = /Saved (f-\S+)/.exec(said.text)![1]!;
    expect(readFileSync(join(root, 'memory', 'feedback.md'), 'utf8')).toContain(rule.body);
    expect((await mcp.call('recall', { query: 'which package manager' })).text).toContain(id);
    const read = await mcp.call('read_memory', { id });
    expect(read.text).toContain(`id: ${id}`);
    expect(read.text).toContain(rule.body);
    expect((await mcp.call('read_memory', {})).text).toContain(`#${id}`);
    // read_memory's path checks: nothing outside the memory folder, nothing of dreamd's state.
    expect(await mcp.call('read_memory', { path: '../dreamd.config.json' })).toMatchObject({ isError: true });
    expect(await mcp.call('read_memory', { path: '.dreamd/quarantine.md' })).toMatchObject({ isError: true });
  });

  it('reports status: the last run, the rules taught again, what waits for review', async () => {
    const root = emptyWorkspace();
    const memoryDir = join(root, 'memory');
    await saveRuleTaughtAgain(memoryDir);
    const mcp = await connectMcp({ cwd: root });
    await mcp.call('remember', INSTRUCTION_NOTE);
    const status = await mcp.call('status');
    expect(status.isError).toBe(false);
    expect(status.text).toMatch(/^space default: memory in /);
    expect(status.text).toMatch(/last run: note-\S+ \(note, completed\)/);
    expect(status.text).toMatch(/3× "No semicolons" \(feedback, f-\S+\), last 2026-11-20/);
    expect(status.text).toMatch(/1 fact held back in \.dreamd\/quarantine\.md/);
  });

  it('consolidates now in its own process against the model, and the gates decide the next run', async () => {
    const root = exampleWorkspace(undefined, 'dreamd-mcp-run-');
    const mcp = await connectMcp({ cwd: root, env: modelEnv(fake.url) });
    const run = await mcp.call('consolidate');
    expect(run.isError).toBe(false);
    expect(run.text).toMatch(/^space default: run run-\S+ completed \(in the MCP server\)/);
    expect(run.text).toMatch(/sessions read: 7/);
    expect(fake.server.requests.length).toBeGreaterThan(0);
    expect(existsSync(join(root, 'memory', 'MEMORY.md'))).toBe(true);
    const recalled = await mcp.call('recall', { query: 'coffee' });
    expect(recalled.text).toMatch(/\[f-\S+\]/);

    const again = await mcp.call('consolidate');
    expect(again.text).toMatch(/skipped \(in the MCP server\): .*force: true/);
    const status = await mcp.call('status');
    expect(status.text).toMatch(/last run: run-\S+ \(\w+, completed\)/);
  });
});
