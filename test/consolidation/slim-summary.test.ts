import { describe, expect, it } from 'vitest';
import { slimRunSummary } from '../../src/consolidation/summary/slim-summary.js';
import { SLIM_PROBLEMS } from '../../src/consolidation/summary/tunables.js';
import type { RunSummary } from '../../src/core/run.js';

const summary: RunSummary = {
  runId: 'run-20261201T100000Z-abc123',
  spaceId: 'shop',
  status: 'completed',
  reason: undefined,
  sessions: Array.from({ length: 50 }, (_, index) => `s${index}`),
  added: 3,
  updated: 1,
  superseded: 0,
  quarantined: 0,
  calls: 2,
  retries: 0,
  usage: { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0 },
  costUsd: 0.0015,
  model: 'anthropic:claude-haiku-4-5',
  durationMs: 1200,
  diff: `--- a/user.md\n+++ b/user.md\n${'+ a long line of memory\n'.repeat(50_000)}`,
  problems: Array.from({ length: 30 }, (_, index) => ({ file: `bad-${index}.json`, reason: 'not JSON' })),
};

describe('slim job value', () => {
  it('keeps what the API shows and leaves the diff and long lists to the run record', () => {
    const slim = slimRunSummary(summary);
    expect(slim).toMatchObject({
      runId: summary.runId,
      added: 3,
      calls: 2,
      costUsd: 0.0015,
      diff: '',
      sessionCount: 50,
      problemCount: 30,
    });
    expect(slim.diffBytes).toBe(Buffer.byteLength(summary.diff));
    expect(slim.runRecord).toBe('.dreamd/runs/run-20261201T100000Z-abc123.json');
    expect(slim.sessions).toHaveLength(SLIM_PROBLEMS);
    expect(slim.problems).toHaveLength(SLIM_PROBLEMS);
    expect(JSON.stringify(slim).length).toBeLessThan(3_000);
    expect(slimRunSummary({ ...summary, status: 'dry-run' })).toMatchObject({
      runRecord: null,
      diff: summary.diff,
    });
  });
});
