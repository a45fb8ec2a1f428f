import { copyFileSync, cpSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { afterEach, beforeEach } from 'vitest';
import { join } from 'node:path';
import { CurationConfig } from '../../src/config/schema.js';
import { createConsolidator } from '../../src/consolidation/run.js';
import { createModel } from '../../src/model/index.js';
import type { FakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { EXAMPLE_FACTS, scriptedExtractor, type ScriptedFact } from '../../harness/scripted-extractor.js';
import {
  createTestSpace,
  EXAMPLE_SESSIONS_DIR,
  fastConsolidator,
  type TestSpace,
  FORCED_RUN,
  RUN_NOW,
  claudeCodeProject,
} from '../support/space.js';
import type { Config, Space } from '../../src/config/schema.js';
import { loadConfig } from '../../src/config/load.js';
import { CLAUDE_CODE_FIXTURES } from '../transcripts/helpers.js';
import { loadMemory } from '../../src/space/index.js';
import type { Fact } from '../../src/memory/types.js';
import { modelEnv, tempDirRemovedAfterTest } from '../support/fixtures.js';

/** The example sessions of sessions/, oldest first: a test that wants the first three takes `.slice(0, 3)`. */
export const EXAMPLE_SESSION_FILES: readonly string[] = [
  '2026-11-02-lisbon-delivery.json',
  '2026-11-05-dinner-friday.json',
  '2026-11-09-coffee-usual.json',
  '2026-11-12-no-semicolons.json',
  '2026-11-16-postgres-migration.json',
  '2026-11-19-grafana-dashboard.json',
  '2026-11-26-moved-to-porto.json',
];

/** 300 project facts: a memory list long enough (over 4,096 tokens) for the model to cache it. */
export const FILLER_FACTS = Array.from({ length: 300 }, (_, index) => ({
  type: 'project',
  title: `Service ${index} owns queue ${index}`,
  body: `Service ${index} runs the nightly job of queue ${index} and alerts team ${index % 7}.`,
  why: null,
  howToApply: null,
  observed: '2026-11-02',
  sources: [],
  replaces: [],
  confidence: null,
}));

/**
 * A space whose memory already holds a long list: `server` answers with the example facts, its first answer
 * adding {@link FILLER_FACTS}, and one FORCED_RUN run of the Lisbon example has kept them (per-answer and
 * per-session limits raised to let them in). The example sessions are then copied in, so `consolidate()` runs
 * over them against that memory, at `now`, `concurrency` calls at a time. `around` wraps every answer (to time
 * it or count the calls in flight).
 */
export async function spaceWithLongMemory(
  server: FakeAnthropicServer,
  options: {
    digestTokensPerCall: number;
    concurrency: number;
    now: Date;
    around?: <T>(answer: () => T) => Promise<T>;
  },
): Promise<{ test: TestSpace; consolidate: () => ReturnType<ReturnType<typeof createConsolidator>> }> {
  const scripted = scriptedExtractor(EXAMPLE_FACTS);
  const around = options.around ?? (async <T>(answer: () => T) => answer());
  let seeded = false;
  server.setDefault((request) =>
    around(() => {
      const reply = scripted(request) as { json: { facts: unknown[] } };
      if (seeded) return reply;
      seeded = true;
      return { json: { facts: [...reply.json.facts, ...FILLER_FACTS] } };
    }),
  );
  const test = createTestSpace({
    modelUrl: server.url,
    examples: ['2026-11-02-lisbon-delivery.json'],
    env: {
      DREAMD_DIGEST_TOKENS_PER_CALL: String(options.digestTokensPerCall),
      DREAMD_MEMORY_TOKENS_PER_CALL: '4000',
    },
  });
  const limits = { ...test.config.limits, maxFactsPerAnswer: 1_000, maxFactsPerSession: 1_000 };
  const model = { ...test.config.model, concurrency: options.concurrency };
  // Extraction calls only: the 300 filler facts would pass the curation budget and add a call of their own.
  const curation = { ...CurationConfig.parse({}), enabled: false };
  const run = createConsolidator({
    config: { ...test.config, limits, model, curation },
    model: () => createModel(model),
    now: () => options.now,
  });
  const seeding = await run(test.space, FORCED_RUN);
  if (seeding.status !== 'completed') throw new Error(`seeding the long memory ended ${seeding.status}`);
  cpSync(EXAMPLE_SESSIONS_DIR, test.space.sessionsDir, { recursive: true });
  return { test, consolidate: () => run(test.space, FORCED_RUN) };
}

/** `config` with `limits` over its own limits. */
export function withLimits(config: Config, limits: Partial<Config['limits']>): Config {
  return { ...config, limits: { ...config.limits, ...limits } };
}

/** The active facts of the test space's memory folder, as loadMemory reads them. */
export async function activeFacts(test: TestSpace): Promise<Fact[]> {
  return (await loadMemory(test.space.memoryDir)).facts.filter((fact) => fact.status === 'active');
}

/** The titles of the test space's active facts, sorted. */
export async function activeTitles(test: TestSpace): Promise<string[]> {
  return (await activeFacts(test)).map((fact) => fact.title).sort();
}

/** Session `name` of sessions/ arrives in the test space: copied into its sessions folder, modified now. */
export function addExampleSession(test: TestSpace, name: string): void {
  copyFileSync(join(EXAMPLE_SESSIONS_DIR, name), join(test.space.sessionsDir, name));
}

/**
 * A FORCED_RUN of `space` (by default the test's own) at RUN_NOW, with `config` (by default the test's) and fast
 * retries.
 */
export function forcedRunAt(test: TestSpace, space: Space = test.space, config: Config = test.config) {
  return fastConsolidator(config, { now: () => RUN_NOW })(space, FORCED_RUN);
}

/** A Claude Code project of a test: its test space, the project's space, and a FORCED_RUN of it. */
export interface ClaudeCodeProject {
  readonly test: TestSpace;
  readonly space: Space;
  readonly run: () => ReturnType<typeof forcedRunAt>;
}

/**
 * For each test of the file (or describe): a test space whose model is `fake`, and a Claude Code project folder
 * in it (claudeCodeProject, named `id`) with its sessions folder made. Returns the current test's project:
 * `project().space`, `project().run()`.
 */
export function useClaudeCodeProject(fake: { readonly url: string }, id?: string): () => ClaudeCodeProject {
  let current: ClaudeCodeProject | undefined;
  beforeEach(async () => {
    const test = createTestSpace({ modelUrl: fake.url });
    const space = claudeCodeProject(test, id);
    await mkdir(space.sessionsDir, { recursive: true });
    current = { test, space, run: () => forcedRunAt(test, space) };
  });
  afterEach(() => {
    current = undefined;
  });
  return () => {
    if (current === undefined) throw new Error('the Claude Code project exists only inside a test');
    return current;
  };
}

/** A temp home holding one Claude Code project and a dreamd config of one claude-code space over it. */
export interface ClaudeCodeHome {
  /** The temp folder: the config's cwd, holding `dreamd.config.json` and `.claude/projects/-home-me-repo`. */
  readonly root: string;
  /** The project folder: the Claude Code fixtures' transcripts, quiet since 2026-11-01. */
  readonly project: string;
  /** The project's `memory/` folder, the space's memory. */
  readonly memoryDir: string;
  readonly config: Config;
  /** A FORCED_RUN of the space, its model the SDK against the fake server, with no retries. */
  readonly consolidate: () => ReturnType<ReturnType<typeof createConsolidator>>;
}

/**
 * A Claude Code project in a fresh temp home, as `~/.claude/projects/-home-me-repo` is: the Claude Code fixtures'
 * transcripts, quiet since 2026-11-01, and a config of one claude-code space `repo` over it whose model is `fake`.
 * `space` adds fields to that space; `prepare` runs on the root before the config is read (to write what the space
 * names); `memoryFrom` is copied in as the memory folder's starting content.
 */
export function claudeCodeHome(
  fake: { readonly url: string },
  options: { space?: Record<string, unknown>; memoryFrom?: string; prepare?: (root: string) => void } = {},
): ClaudeCodeHome {
  const root = tempDirRemovedAfterTest('claude-code-home');
  const project = join(root, '.claude', 'projects', '-home-me-repo');
  mkdirSync(project, { recursive: true });
  cpSync(CLAUDE_CODE_FIXTURES, project, { recursive: true, filter: (source) => !source.endsWith('.md') });
  // Claude Code sessions have no endedAt: they settle once quiet for quietMinutes.
  const quiet = new Date('2026-11-01T00:00:00Z');
  for (const name of readdirSync(project)) utimesSync(join(project, name), quiet, quiet);
  const memoryDir = join(project, 'memory');
  if (options.memoryFrom !== undefined) cpSync(options.memoryFrom, memoryDir, { recursive: true });
  options.prepare?.(root);
  const path = join(root, 'dreamd.config.json');
  const space = { id: 'repo', sessions: project, memory: memoryDir, format: 'claude-code', ...options.space };
  writeFileSync(path, JSON.stringify({ spaces: [space] }));
  const config = loadConfig({
    path,
    env: modelEnv(fake.url),
    cwd: root,
  });
  return {
    root,
    project,
    memoryDir,
    config,
    consolidate: () =>
      createConsolidator({ config, model: createModel(config.model) })(config.spaces[0]!, FORCED_RUN),
  };
}

/** What the hello-world Claude Code fixture teaches, as the scripted model finds it. */
export const HELLO_SCRIPT_FACT: ScriptedFact = {
  trigger: 'hello.sh',
  type: 'project',
  title: 'hello.sh prints Hello world',
  body: 'The repository has a hello.sh script that prints "Hello world".',
  description: 'The hello.sh shell script in the repo and what it prints (Hello world)',
};

/** What the compact-boundary Claude Code fixture teaches about hook handlers, as the scripted model finds it. */
export const HOOK_BAIL_OUT_FACT: ScriptedFact = {
  trigger: 'bail out and return an error',
  type: 'feedback',
  title: 'Hook handlers bail out when the repository cannot be opened',
  body: 'When a Claude Code hook handler cannot open the git repository, it returns an error instead of going on.',
  why: 'Going on with no repository hides the failure.',
  howToApply: 'Return the error from opening the repository.',
  description: 'Error handling in hook handlers: fail when the git repository cannot be opened',
};

/** What a session saying "our staging box is stg-7" teaches, as the scripted model finds it. */
export const STAGING_HOST_FACT: ScriptedFact = {
  trigger: 'our staging box is stg-7',
  type: 'project',
  title: 'Staging host',
  body: 'Staging is stg-7.',
};

/** One fact as a model's extraction answer holds it (valid unless `overrides` break it), for answer-limit tests. */
export function rawFact(index: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'project',
    title: `Build step ${index}`,
    body: `The build runs step ${index} before the tests.`,
    why: null,
    howToApply: null,
    observed: '2026-11-20',
    sources: [],
    replaces: [],
    confidence: null,
    evidence: 'user',
    ...overrides,
  };
}
