/**
 * Team memory through the repository, with real git: one bare repository, two clones, two dreamd spaces with
 * their own sessions, each writing dreamd's block of its clone's `AGENTS.md`. The teammates consolidate,
 * commit, push and pull as a team does, with dreamd's merge driver set up by `dreamd team setup`; the
 * consolidations are the real runs against the fake model server (the scripted extractor answers).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { acceptProposal } from '../../src/consolidation/approval/proposal.js';
import { readPageSpaces, renderPage } from '../../src/daemon/page.js';
import { createConsolidator } from '../../src/consolidation/run.js';
import { BLOCK_BEGIN, BLOCK_END, splitIndexFile } from '../../src/memory/index-block.js';
import { mergeAgentsFile } from '../../src/memory/agents-merge.js';
import { createModel } from '../../src/model/index.js';
import { loadMemory } from '../../src/space/index.js';
import { type ScriptedFact } from '../../harness/scripted-extractor.js';
import { modelEnv, useFakeAnthropic } from '../support/fixtures.js';
import { FORCED_RUN } from '../support/space.js';
import { runCliCaptured } from '../support/cli.js';

const FACTS: readonly ScriptedFact[] = [
  {
    trigger: 'only from the release branch',
    type: 'feedback',
    title: 'Deploy from the release branch',
    body: 'Deploy only from the release branch.',
  },
  { trigger: 'my name is ana', type: 'user', title: 'Ana', body: 'The user is Ana, a backend engineer.' },
  {
    trigger: 'run the linter',
    type: 'project',
    title: 'Lint before pushing',
    body: 'Run the linter before every push.',
  },
  { trigger: 'staging box', type: 'project', title: 'Staging host', body: 'The staging box is stg-7.' },
  { trigger: 'my name is bo', type: 'user', title: 'Bo', body: 'The user is Bo, who likes dark mode.' },
  {
    trigger: 'make migrate',
    type: 'project',
    title: 'Migrations through make',
    body: 'Database migrations run through make migrate.',
  },
  {
    trigger: 'deploy from main',
    type: 'feedback',
    title: 'Deploy from main',
    body: 'Deploy from the main branch; the release branch is gone.',
    replacesTitle: 'Deploy from the release branch',
  },
];

const fake = useFakeAnthropic({ facts: FACTS });
const root = mkdtempSync(join(tmpdir(), 'dreamd-team-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Teammate',
  GIT_AUTHOR_EMAIL: 'teammate@example.test',
  GIT_COMMITTER_NAME: 'Teammate',
  GIT_COMMITTER_EMAIL: 'teammate@example.test',
  GIT_CONFIG_NOSYSTEM: '1',
  HOME: root,
};

function git(cwd: string, ...args: string[]): string {
  const result = spawnSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`git ${args.join(' ')} in ${cwd}: ${result.stdout}${result.stderr}`);
  return result.stdout;
}

interface Teammate {
  readonly repo: string;
  readonly memoryDir: string;
  readonly agentsMd: string;
  session(id: string, said: string): void;
  consolidate(): Promise<void>;
  agents(): string;
}

let clock = Date.parse('2026-11-10T10:00:00Z');
let lastStatus = '';

function teammate(
  name: string,
  settings: Record<string, unknown> = {},
): Teammate & { readonly config: Config } {
  const home = join(root, name);
  const repo = join(home, 'repo');
  git(root, 'clone', '-q', join(root, 'origin.git'), repo);
  const sessions = join(home, 'sessions');
  const memoryDir = join(home, 'memory');
  mkdirSync(sessions, { recursive: true });
  const agentsMd = join(repo, 'AGENTS.md');
  const configPath = join(home, 'dreamd.config.json');
  writeFileSync(
    configPath,
    JSON.stringify({ spaces: [{ id: name, sessions, memory: memoryDir, agentsMd, ...settings }] }),
  );
  const config = loadConfig({
    path: configPath,
    env: modelEnv(fake.url),
    cwd: home,
  });
  return {
    config,
    repo,
    memoryDir,
    agentsMd,
    session(id, said) {
      clock += 86_400_000;
      const started = new Date(clock).toISOString();
      writeFileSync(
        join(sessions, `${id}.json`),
        JSON.stringify({
          id,
          startedAt: started,
          endedAt: new Date(clock + 600_000).toISOString(),
          messages: [{ role: 'user', ts: started, content: said }],
        }),
      );
    },
    async consolidate() {
      const now = new Date(clock + 86_400_000);
      const run = await createConsolidator({
        config,
        model: createModel(config.model),
        now: () => now,
      })(config.spaces[0]!, FORCED_RUN);
      expect(run.status, run.reason).not.toBe('failed');
      lastStatus = run.status;
    },
    agents: () => readFileSync(agentsMd, 'utf8'),
  };
}

/** The bold titles of the block's lines. */
function titles(text: string): string[] {
  return splitIndexFile(text, { legacy: false })
    .blockLines.map((line) => /^- \*\*(.+?)\*\*/u.exec(line)?.[1])
    .filter((title): title is string => title !== undefined)
    .sort();
}

describe('team memory through git', () => {
  it("merges two teammates' blocks fact by fact, keeps every project rule, shares no user fact, and the newer wins on both sides", async () => {
    git(root, 'init', '-q', '--bare', '-b', 'main', 'origin.git');
    const seed = join(root, 'seed');
    git(root, 'clone', '-q', join(root, 'origin.git'), seed);
    writeFileSync(join(seed, 'AGENTS.md'), '# Agents\n\nRun `make check` before you push.\n');
    git(seed, 'add', '.');
    git(seed, 'commit', '-q', '-m', 'AGENTS.md');
    git(seed, 'push', '-q', 'origin', 'HEAD:main');

    // One teammate sets the driver up and commits .gitattributes; the other pulls it and sets up their clone.
    const a = teammate('ana');
    const b = teammate('bo');
    const setup = async (clone: Teammate) => {
      const run = await runCliCaptured(['team', 'setup'], { cwd: clone.repo, env: { HOME: root } });
      expect(run.code, run.stderr).toBe(0);
    };
    await setup(a);
    expect(readFileSync(join(a.repo, '.gitattributes'), 'utf8')).toBe('AGENTS.md merge=dreamd\n');
    git(a.repo, 'add', '.gitattributes');
    git(a.repo, 'commit', '-q', '-m', 'merge AGENTS.md with dreamd');
    git(a.repo, 'push', '-q');
    git(b.repo, 'pull', '-q', '--no-rebase');
    await setup(b);
    expect(readFileSync(join(b.repo, '.gitattributes'), 'utf8')).toBe('AGENTS.md merge=dreamd\n');
    expect(git(b.repo, 'config', 'merge.dreamd.driver')).toMatch(/team merge %O %A %B %P/u);
    expect(git(b.repo, 'check-attr', 'merge', 'AGENTS.md')).toBe('AGENTS.md: merge: dreamd\n');

    // A consolidates, commits, pushes.
    a.session('a1', 'My name is Ana. We deploy only from the release branch.');
    await a.consolidate();
    expect(titles(a.agents())).toEqual(['Deploy from the release branch']);
    git(a.repo, 'commit', '-q', '-am', 'ana: memory');
    git(a.repo, 'push', '-q');

    // B pulls, consolidates its own sessions: A's rule stays, as a fact of the repository.
    git(b.repo, 'pull', '-q', '--no-rebase');
    b.session('b1', 'My name is Bo. Please run the linter before pushing.');
    await b.consolidate();
    expect(titles(b.agents())).toEqual(['Deploy from the release branch', 'Lint before pushing']);
    const teamFacts = (await loadMemory(b.memoryDir, { agentsMd: b.agentsMd })).facts.filter(
      (fact) => fact.file === 'AGENTS.md',
    );
    expect(teamFacts.map((fact) => fact.title)).toEqual(['Deploy from the release branch']);
    git(b.repo, 'commit', '-q', '-am', 'bo: memory');
    git(b.repo, 'push', '-q');

    // Meanwhile A consolidated a second session and committed; then A pulls: two diverged blocks.
    a.session('a2', 'Database migrations go through make migrate.');
    await a.consolidate();
    git(a.repo, 'commit', '-q', '-am', 'ana: more memory');
    git(a.repo, 'pull', '-q', '--no-rebase', '--no-edit');
    const merged = a.agents();
    expect(merged).not.toMatch(/^(?:<{7}|={7}|>{7})/mu);
    expect(titles(merged)).toEqual([
      'Deploy from the release branch',
      'Lint before pushing',
      'Migrations through make',
    ]);
    expect(merged).not.toMatch(/Ana|Bo,|dark mode/u);
    expect(merged.startsWith('# Agents\n\nRun `make check` before you push.\n')).toBe(true);
    git(a.repo, 'push', '-q');
    git(b.repo, 'pull', '-q', '--no-rebase');
    expect(b.agents()).toBe(merged);

    // A later session of B updates A's rule: only the newer stays, after the next runs and merges, both sides.
    b.session('b2', 'From now on we deploy from main, the release branch is gone.');
    await b.consolidate();
    expect(titles(b.agents())).toEqual([
      'Deploy from main',
      'Lint before pushing',
      'Migrations through make',
    ]);
    git(b.repo, 'commit', '-q', '-am', 'bo: the deploy rule changed');
    git(b.repo, 'push', '-q');
    git(a.repo, 'pull', '-q', '--no-rebase');
    await a.consolidate();
    expect(titles(a.agents())).toEqual([
      'Deploy from main',
      'Lint before pushing',
      'Migrations through make',
    ]);
    expect(a.agents()).toBe(b.agents());
    // A's own old rule is superseded in A's memory too, with B's newer fact: archived, not lost.
    const aMemory = await loadMemory(a.memoryDir, { agentsMd: a.agentsMd });
    expect(aMemory.archived.map((entry) => entry.fact.title)).toContain('Deploy from the release branch');
    expect(aMemory.facts.filter((fact) => fact.status === 'active').map((fact) => fact.title)).not.toContain(
      'Deploy from the release branch',
    );
  });
});

describe('approval for the team file alone', () => {
  it("lets a run that changes only personal memory write, and holds one that changes AGENTS.md for a decision, labelled as the team's", async () => {
    if (!existsSync(join(root, 'origin.git'))) git(root, 'init', '-q', '--bare', '-b', 'main', 'origin.git');
    const c = teammate('cy', { approve: 'shared' });
    const before = existsSync(c.agentsMd) ? c.agents() : null;
    c.session('c1', 'My name is Ana, by the way.');
    await c.consolidate();
    expect(lastStatus).toBe('completed');
    expect((await loadMemory(c.memoryDir)).facts.map((fact) => fact.title)).toEqual(['Ana']);
    expect(existsSync(c.agentsMd) ? c.agents() : null).toBe(before);

    c.session('c2', 'Our staging box is stg-7.');
    await c.consolidate();
    expect(lastStatus).toBe('proposed');
    expect(existsSync(c.agentsMd) ? c.agents() : null).toBe(before);
    const [page] = await readPageSpaces(c.config.spaces);
    expect(page?.approve).toBe('shared');
    const html = renderPage(page === undefined ? [] : [page], 'nonce');
    expect(html).toContain("goes to the team's AGENTS.md");
    expect(html).toContain("the team's file: committed in the repository");
    const runId = page?.proposals[0]?.runId ?? '';
    await acceptProposal(c.config.spaces[0]!, runId, { config: c.config });
    expect(titles(c.agents())).toContain('Staging host');
  });
});

describe('moving a fact between personal and shared', () => {
  it('team share puts a personal fact in the block at the next run, team personal takes a shared one out', async () => {
    if (!existsSync(join(root, 'origin.git'))) git(root, 'init', '-q', '--bare', '-b', 'main', 'origin.git');
    const d = teammate('dee');
    d.session('d1', 'My name is Ana. Our staging box is stg-7.');
    await d.consolidate();
    const facts = (await loadMemory(d.memoryDir)).facts;
    const ana = facts.find((fact) => fact.title === 'Ana')!;
    const staging = facts.find((fact) => fact.title === 'Staging host')!;
    expect(titles(d.agents())).toContain('Staging host');
    expect(titles(d.agents())).not.toContain('Ana');
    const configFile = join(root, 'dee', 'dreamd.config.json');
    for (const [verb, id] of [
      ['share', ana.id],
      ['personal', staging.id],
    ] as const) {
      const run = await runCliCaptured(['--config', configFile, '--json', 'team', verb, id, 'dee'], {
        cwd: d.repo,
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.data()).toMatchObject({ space: 'dee', id, shared: verb === 'share' });
    }
    const unknown = await runCliCaptured(['--config', configFile, 'team', 'share', 'f-nosuchfact', 'dee'], {
      cwd: d.repo,
    });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /no fact f-nosuchfact in space dee; dreamd memory show dee lists the ids/u,
    );
    await d.consolidate();
    expect(titles(d.agents())).toContain('Ana');
    expect(titles(d.agents())).not.toContain('Staging host');
  });
});

describe('the merge driver', () => {
  /** An AGENTS.md whose dreamd block holds `rules` under its heading and the section "The project". */
  const project = (...rules: string[]) =>
    [
      '# Agents',
      BLOCK_BEGIN,
      '## Memory (kept by dreamd from past sessions)',
      '',
      '### The project',
      ...rules,
      `${BLOCK_END}\n`,
    ].join('\n');
  const rule = (id: string, date: string, words: string, replaces = '') =>
    `- **${words}**: ${words}. <!-- dreamd ${id} ${date}${replaces === '' ? '' : ` replaces ${replaces}`} -->`;
  const noText = (ours: string, base: string, theirs: string) => ({
    text: ours === base ? theirs : ours,
    conflicts: ours !== base && theirs !== base && ours !== theirs,
  });

  it('gives the same bytes whichever side merges, keeps the newer version of one fact, and drops what a kept fact replaced', () => {
    const base = project(rule('f-aaaa', '2026-11-01', 'Old'));
    const ours = project(rule('f-aaaa', '2026-11-03', 'Old, reworded'), rule('f-bbbb', '2026-11-02', 'Ours'));
    const theirs = project(
      rule('f-aaaa', '2026-11-02', 'Old, other words'),
      rule('f-cccc', '2026-11-02', 'Theirs'),
      rule('f-dddd', '2026-11-04', 'Replaces ours', 'f-bbbb'),
    );
    const one = mergeAgentsFile(base, ours, theirs, noText);
    const other = mergeAgentsFile(base, theirs, ours, noText);
    expect(one).toEqual(other);
    expect(one.conflicts).toBe(false);
    expect(one.text).toContain('Old, reworded');
    expect(one.text).not.toContain('Old, other words');
    expect(one.text).toContain('Theirs');
    expect(one.text).not.toContain('**Ours**');
    expect(one.text).toContain('Replaces ours');
  });

  it('drops a fact one side removed as it was, and keeps one the other side changed', () => {
    const base = project(rule('f-aaaa', '2026-11-01', 'Kept'), rule('f-bbbb', '2026-11-01', 'Gone'));
    const ours = project(rule('f-aaaa', '2026-11-01', 'Kept'));
    const theirs = base;
    expect(mergeAgentsFile(base, ours, theirs, noText).text).not.toContain('Gone');
    const changed = project(
      rule('f-aaaa', '2026-11-01', 'Kept'),
      rule('f-bbbb', '2026-11-05', 'Gone, changed'),
    );
    expect(mergeAgentsFile(base, ours, changed, noText).text).toContain('Gone, changed');
  });
});
