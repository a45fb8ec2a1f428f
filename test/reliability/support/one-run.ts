/**
 * The reliability cases' vitest fixtures and checks, apart from harness.ts so that the child processes that
 * import harness.ts (run-child.ts) load no test runner.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import type { Config, Space } from '../../../src/config/schema.js';
import type { RunSummary } from '../../../src/core/run.js';
import { listRuns, readLedger, type RunRecord } from '../../../src/space/index.js';
import type { AnthropicScript } from '../../../harness/fake-anthropic-server.js';
import { useFakeAnthropic, type FakeAnthropicFixture } from '../../support/fixtures.js';
import { MANUAL, cleanUpWorkspaces, consolidatorFor, createWorkspace, type SpaceSpec } from './harness.js';

/**
 * One consolidation of one space, run once before the file's tests: a fake Anthropic server that answers with
 * `answer`, a workspace whose space holds the sessions `write` puts in its sessions folder, and `config` over
 * the workspace's config. The workspaces go after the file. Call it at the top of the file.
 */
export function useOneRun(options: {
  readonly answer: AnthropicScript;
  readonly space: SpaceSpec;
  readonly write?: (sessionsDir: string) => void;
  readonly config?: (config: Config) => Config;
}): { readonly fake: FakeAnthropicFixture; readonly space: Space; readonly summary: RunSummary } {
  const fake = useFakeAnthropic({ answer: options.answer, scope: 'all' });
  let run: { space: Space; summary: RunSummary } | undefined;
  beforeAll(async () => {
    const workspace = createWorkspace({ modelUrl: fake.url, spaces: [options.space] });
    const space = workspace.space(options.space.id);
    options.write?.(space.sessionsDir);
    const config = options.config?.(workspace.config) ?? workspace.config;
    run = { space, summary: await consolidatorFor(config)(space, MANUAL) };
  });
  afterAll(() => {
    cleanUpWorkspaces();
  });
  const done = () => {
    if (run === undefined) throw new Error('useOneRun: the run has not happened yet (use it inside a test)');
    return run;
  };
  return {
    fake,
    get space() {
      return done().space;
    },
    get summary() {
      return done().summary;
    },
  };
}

/**
 * Checks that the space of `memoryDir` (named `id` in failures) was consolidated by one run only, and that
 * every one of its `sessions` ledger entries names that run; returns the run.
 */
export async function expectOneRun(memoryDir: string, id: string, sessions: number): Promise<RunRecord> {
  const runs = await listRuns(memoryDir);
  expect(runs, id).toHaveLength(1);
  const ledger = await readLedger(memoryDir);
  expect(
    Object.values(ledger.sessions).map((entry) => entry.runId),
    id,
  ).toEqual(Array.from({ length: sessions }, () => runs[0]!.runId));
  return runs[0]!;
}
