import type { RunSummary } from '../core/run.js';

/** Summary of a run that only moves bytes around (rollback, forget): no sessions, no model calls. */
export function maintenanceSummary(fields: {
  runId: string;
  spaceId: string;
  reason: string;
  diff: string;
  durationMs: number;
}): RunSummary {
  return {
    runId: fields.runId,
    spaceId: fields.spaceId,
    status: 'completed',
    reason: fields.reason,
    sessions: [],
    added: 0,
    updated: 0,
    superseded: 0,
    quarantined: 0,
    calls: 0,
    retries: 0,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    model: '',
    durationMs: fields.durationMs,
    diff: fields.diff,
    problems: [],
  };
}
