import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunStep } from '../../src/consolidation/run.js';
import { loadMemoryContext } from '../../src/agent/index.js';
import { LOCK_FILE, listRuns, readLedger } from '../../src/space/index.js';
import { runCliCaptured } from '../support/cli.js';
import { EXAMPLE_ACTIVE_TITLES, EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import {
  MANUAL,
  checkMemory,
  consolidatorFor,
  createWorkspace,
  plantedFacts,
  runChild,
  writeSession,
  type Workspace,
  cleanUpWorkspaces,
} from './support/harness.js';
import { useFakeAnthropic } from '../support/fixtures.js';

/**
 * kill -9 of the process running a consolidation at each step of the run, then a run in another process: the
 * memory directory parses, the index is in its limits, every planted fact is there once, every session is in
 * the ledger and in exactly one run record, no staging is left, and the dead process's lock is taken over.
 */

const planted = plantedFacts(12);
const FACTS = [...EXAMPLE_FACTS, ...planted.facts];
const EXPECTED_TITLES = [...EXAMPLE_ACTIVE_TITLES, ...planted.facts.map((fact) => fact.title)].sort();

const fake = useFakeAnthropic({ facts: FACTS, scope: 'all' });
afterAll(async () => {
  cleanUpWorkspaces();
});

function plantedWorkspace(): Workspace {
  const workspace = createWorkspace({ modelUrl: fake.url, spaces: [{ id: 'crash', examples: true }] });
  const sessionsDir = workspace.space('crash').sessionsDir;
  for (const [id, lines] of planted.sessions) writeSession(sessionsDir, id, lines);
  return workspace;
}

const ALL_SESSIONS = 7 + planted.sessions.size;
const CHILD_TIMEOUT_MS = 300_000;

/** The steps a clean run passes through, recorded in-process on an identical space. */
async function stepsOfACleanRun(): Promise<RunStep[]> {
  const workspace = plantedWorkspace();
  const steps: RunStep[] = [];
  const summary = await consolidatorFor(workspace.config, { faultInjection: (step) => steps.push(step) })(
    workspace.space('crash'),
    MANUAL,
  );
  expect(summary.status).toBe('completed');
  return steps;
}

describe('crashes: kill -9 at each step of a run, then run again', () => {
  let crashPoints: { name: string; step: RunStep; committed: boolean }[] = [];

  beforeAll(async () => {
    const steps = await stepsOfACleanRun();
    const applies = steps.filter((step) => step.startsWith('commit:apply:'));
    // Applied in order: memory files, then the ledger, then the run record (transaction.ts).
    const ledgerStep = applies.at(-2)!;
    const recordStep = applies.at(-1)!;
    crashPoints = [
      { name: 'after the digest', step: 'after-digest', committed: false },
      { name: 'after extraction', step: 'after-extraction', committed: false },
      { name: 'before staging', step: 'commit:stage', committed: false },
      { name: 'staged, before the COMMITTED marker', step: 'commit:commit', committed: false },
      { name: 'in the middle of writing topic files', step: 'commit:apply:1', committed: true },
      { name: 'after memory, before the ledger', step: ledgerStep, committed: true },
      { name: 'after the ledger, before the run record', step: recordStep, committed: true },
      { name: 'during cleanup', step: 'commit:cleanup', committed: true },
    ];
    expect(applies.length).toBeGreaterThanOrEqual(5);
  });

  it('recovers from every crash point with each fact and each session exactly once', async () => {
    const outcomes: string[] = [];
    // The kills run side by side (each in its own space); the restarts one by one, to count model calls.
    const crashed = await Promise.all(
      crashPoints.map(async (point) => {
        const workspace = plantedWorkspace();
        // A generous timeout: eight children start at once on a machine that may be busy.
        const child = await runChild(
          'run-child.ts',
          [workspace.configPath, 'crash', 'kill', point.step],
          CHILD_TIMEOUT_MS,
        );
        return { point, workspace, child };
      }),
    );
    for (const { point, workspace, child } of crashed) {
      const space = workspace.space('crash');
      const requestsBefore = fake.server.requests.length;
      expect(child.signal, `${point.name}: ${child.stderr}`).toBe('SIGKILL');
      expect(child.stdout).not.toContain('result');
      // The dead process's lock is still there, naming its pid.
      const lock = JSON.parse(readFileSync(join(space.memoryDir, LOCK_FILE), 'utf8')) as { pid: number };
      expect(lock.pid).not.toBe(process.pid);

      // Restart: a run in this process (another pid) recovers the transaction and takes the stale lock over.
      const afterCrash = await consolidatorFor(workspace.config)(space, MANUAL);
      const check = await checkMemory(space.memoryDir);
      expect(check.problems, point.name).toEqual([]);
      expect(check.activeTitles, point.name).toEqual(EXPECTED_TITLES);
      expect(check.ledgerSessions, point.name).toHaveLength(ALL_SESSIONS);
      expect(existsSync(join(space.memoryDir, LOCK_FILE)), `${point.name}: lock released`).toBe(false);

      // Each session is consolidated by exactly one recorded run, and the ledger names that run.
      const runs = await listRuns(space.memoryDir);
      const ledger = await readLedger(space.memoryDir);
      const perSession = new Map<string, string[]>();
      for (const run of runs)
        for (const id of run.summary.sessions) perSession.set(id, [...(perSession.get(id) ?? []), run.runId]);
      expect(perSession.size, point.name).toBe(ALL_SESSIONS);
      for (const [id, runIds] of perSession) {
        expect(runIds, `${point.name}: ${id}`).toHaveLength(1);
        expect(ledger.sessions[id]?.runId).toBe(runIds[0]);
      }
      expect(runs, point.name).toHaveLength(1);
      // A committed run is finished by recovery: the restart finds nothing new and asks the model nothing.
      if (point.committed) expect(afterCrash.status, point.name).toBe('skipped');
      else expect(afterCrash.status, point.name).toBe('completed');
      const calls = fake.server.requests.length - requestsBefore;
      outcomes.push(`${point.step}: ${afterCrash.status}, ${calls} model call(s)`);
    }
    expect(outcomes).toHaveLength(8);
  }, 600_000);
});

/** Links of MEMORY.md (`](file.md#anchor)` or `](file.md)`) whose file, or anchor in it, is not on disk. */
function danglingIndexLinks(memoryDir: string): string[] {
  const indexFile = join(memoryDir, 'MEMORY.md');
  if (!existsSync(indexFile)) return [];
  const dangling: string[] = [];
  for (const match of readFileSync(indexFile, 'utf8').matchAll(/\]\(([^)#\s]+)(?:#([^)\s]+))?\)/g)) {
    const [link, file = '', anchor] = match;
    const target = join(memoryDir, file);
    if (!existsSync(target)) dangling.push(`${link}: no ${file}`);
    else if (anchor !== undefined && !readFileSync(target, 'utf8').includes(anchor))
      dangling.push(`${link}: no ${anchor}`);
  }
  return dangling;
}

describe('crashes inside the commit: what a reader sees', () => {
  it('never shows an index naming a missing fact, and a reader finishes the commit before reading', async () => {
    const steps = await stepsOfACleanRun();
    // Every rename of memory files and the index (the ledger and the run record come after them).
    const applies = steps.filter((step) => step.startsWith('commit:apply:')).slice(0, -2);
    const crashed: { step: RunStep; workspace: Workspace; child: Awaited<ReturnType<typeof runChild>> }[] =
      [];
    for (const step of applies) {
      const workspace = plantedWorkspace();
      const child = await runChild(
        'run-child.ts',
        [workspace.configPath, 'crash', 'kill', step],
        CHILD_TIMEOUT_MS,
      );
      crashed.push({ step, workspace, child });
    }
    const readers = [
      async (workspace: Workspace) => {
        const run = await runCliCaptured(
          ['--config', workspace.configPath, '--json', 'memory', 'show', 'crash'],
          {
            cwd: workspace.root,
          },
        );
        expect(run.code, run.stderr).toBe(0);
      },
      async (workspace: Workspace) => {
        expect(await loadMemoryContext(workspace.space('crash').memoryDir)).toContain('<memory-context>');
      },
      async (workspace: Workspace) => {
        const run = await runCliCaptured(['--config', workspace.configPath, '--json', 'status', 'crash'], {
          cwd: workspace.root,
        });
        expect(run.code, run.stderr).toBe(0);
      },
    ];
    for (const [position, { step, workspace, child }] of crashed.entries()) {
      const memoryDir = workspace.space('crash').memoryDir;
      expect(child.signal, `${step}: ${child.stderr}`).toBe('SIGKILL');
      // As the crash left it, before anyone recovers: every index line points at a fact that is there.
      expect(danglingIndexLinks(memoryDir), step).toEqual([]);
      // A reader (CLI memory show, the agent's loadMemoryContext, status) finishes the transaction first.
      await readers[position % readers.length]!(workspace);
      const check = await checkMemory(memoryDir);
      expect(check.problems, step).toEqual([]);
      expect(check.activeTitles, step).toEqual(EXPECTED_TITLES);
      expect(check.ledgerSessions, step).toHaveLength(ALL_SESSIONS);
      expect(check.runs, step).toBe(1);
      expect(existsSync(join(memoryDir, LOCK_FILE)), `${step}: lock released`).toBe(false);
    }
    expect(crashed.length).toBeGreaterThanOrEqual(3);
  }, 900_000);
});
