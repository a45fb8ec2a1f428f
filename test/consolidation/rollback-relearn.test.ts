import { describe, expect, it } from 'vitest';
import { listRuns, loadMemory, readLedger, reopenSessions, rollbackRun } from '../../src/space/index.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { createTestSpace, type TestSpace, RUN_NOW } from '../support/space.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { EXAMPLE_SESSION_FILES, addExampleSession, forcedRunAt } from './helpers.js';

const FIRST = EXAMPLE_SESSION_FILES.slice(0, 3);
const SECOND = ['2026-11-12-no-semicolons.json', '2026-11-26-moved-to-porto.json'];

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });

function addSessions(test: TestSpace, names: readonly string[]): void {
  for (const name of names) {
    addExampleSession(test, name);
  }
}

/** The facts as a person reads them (ids left out: a fact learned again gets a new one). */
async function facts(test: TestSpace): Promise<string[]> {
  return (await loadMemory(test.space.memoryDir)).facts
    .map((fact) => `${fact.status} ${fact.type} ${fact.title}: ${fact.body}`)
    .sort();
}

describe('rollback reopens what it undid', () => {
  it('takes the run’s sessions out of the ledger, so the next run learns them again', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: FIRST });
    const first = await forcedRunAt(test);
    addSessions(test, SECOND);
    const second = await forcedRunAt(test);
    expect(second.sessions).toHaveLength(2);
    const learned = await facts(test);

    await rollbackRun(test.space.memoryDir, second.runId);
    expect(await facts(test)).not.toEqual(learned);
    const ledger = await readLedger(test.space.memoryDir);
    expect(Object.values(ledger.sessions).map((entry) => entry.runId)).toEqual(Array(3).fill(first.runId));
    const rollback = (await listRuns(test.space.memoryDir)).find((run) => run.kind === 'rollback');
    expect(rollback?.summary.reason).toBe(
      `rollback of ${second.runId}; 2 session(s) reopened for the next run`,
    );

    const again = await forcedRunAt(test);
    expect(again.status).toBe('completed');
    expect([...again.sessions].sort()).toEqual([...second.sessions].sort());
    expect(await facts(test)).toEqual(learned);
  });

  it('reopens nothing that another run consolidated', () => {
    const entry = (sessionId: string, runId: string) => ({
      sessionId,
      file: `${sessionId}.json`,
      messageCount: 4,
      size: 100,
      mtimeMs: 0,
      runId,
      consolidatedAt: RUN_NOW.toISOString(),
    });
    const ledger = {
      version: 1 as const,
      sessions: { a: entry('a', 'run-1'), b: entry('b', 'run-2'), c: entry('c', 'run-3') },
    };
    const reopened = reopenSessions(ledger, { runId: 'run-2', summary: { ...summaryOf(['b', 'c']) } });
    expect(reopened.sessionIds).toEqual(['b', 'c']);
    expect(Object.keys(reopened.ledger.sessions)).toEqual(['a']);
  });
});

function summaryOf(sessions: string[]) {
  return {
    runId: 'run-2',
    spaceId: 'default',
    status: 'completed' as const,
    reason: undefined,
    sessions,
    added: 0,
    updated: 0,
    superseded: 0,
    quarantined: 0,
    calls: 0,
    retries: 0,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    model: '',
    durationMs: 0,
    diff: '',
    problems: [],
  };
}
