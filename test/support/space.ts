import { cpSync, readdirSync, readFileSync, statSync, type Dirent } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import type { Config, Space } from '../../src/config/schema.js';
import { createConsolidator, type ConsolidatorOptions } from '../../src/consolidation/run.js';
import type { RunRequest } from '../../src/core/run.js';
import { createModel } from '../../src/model/index.js';
// A cycle (fixtures.ts reads EXAMPLE_SESSIONS_DIR from here), harmless: each side uses the other in functions only.
import { tempDirRemovedAfterTest } from './temp-dir.js';

/** A forced manual run (`dreamd consolidate --force`): no gate or quiet time holds it back. */
export const FORCED_RUN: RunRequest = { force: true, dryRun: false, trigger: 'manual' };

/** The clock of the consolidation tests: three days after the last example session. */
export const RUN_NOW = new Date('2026-11-29T12:00:00Z');

/** The example sessions shipped in the repository's `sessions/` (read only, never edited). */
export const EXAMPLE_SESSIONS_DIR = fileURLToPath(new URL('../../sessions/', import.meta.url));

export interface TestSpace {
  readonly root: string;
  readonly config: Config;
  readonly space: Space;
}

/**
 * A temp workspace with `sessions/` and `memory/` and a config pointing the model at a fake server, removed when
 * the running test finishes (call it inside a test or its beforeEach). `examples: true` copies the example
 * transcripts of the repository's `sessions/`.
 */
export function createTestSpace(options: {
  modelUrl: string;
  examples?: boolean | readonly string[];
  env?: Record<string, string>;
}): TestSpace {
  const root = tempDirRemovedAfterTest('space');
  const sessions = join(root, 'sessions');
  cpSync(EXAMPLE_SESSIONS_DIR, sessions, {
    recursive: true,
    filter: (source) => {
      if (options.examples === undefined || options.examples === false)
        return source === EXAMPLE_SESSIONS_DIR.replace(/\/$/, '') || statSync(source).isDirectory();
      if (options.examples === true || statSync(source).isDirectory()) return true;
      return options.examples.some((name) => source.endsWith(name));
    },
  });
  const config = loadConfig({
    env: {
      DREAMD_MODEL_BASE_URL: options.modelUrl,
      ANTHROPIC_API_KEY: 'sk-ant-test-key',
      DREAMD_MODEL_MAX_RETRIES: '2',
      ...options.env,
    },
    cwd: root,
  });
  return { root, config, space: config.spaces[0]! };
}

/**
 * Every file under a directory (relative path → its text), for "nothing changed" assertions: the one snapshot
 * helper of the tests. A missing directory is empty; links are read as the files they point to, never walked.
 */
export function snapshotDirectory(directory: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (current: string): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.set(relative(directory, path), readFileSync(path, 'utf8'));
    }
  };
  walk(directory);
  return files;
}

/**
 * The real consolidator of `config`, its model (the SDK against the test's fake server) waiting 1 to 5 ms
 * between retries instead of seconds; `options` add a clock, fault injection, a lock timer.
 */
export function fastConsolidator(
  config: Config,
  options: Omit<ConsolidatorOptions, 'config' | 'model'> = {},
): ReturnType<typeof createConsolidator> {
  return createConsolidator({
    config,
    model: () => createModel(config.model, { retryBaseDelayMs: 1, retryMaxDelayMs: 5 }),
    ...options,
  });
}

/**
 * A Claude Code project folder in the test's root, as `~/.claude/projects/<project>/` is: its transcripts in
 * `project/`, its memory folder in `project/memory/`. Nothing is created on disk.
 */
export function claudeCodeProject(test: TestSpace, id = 'my-repo'): Space {
  const sessionsDir = join(test.root, 'project');
  return { id, sessionsDir, memoryDir: join(sessionsDir, 'memory'), format: 'claude-code' };
}
