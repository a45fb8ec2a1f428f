import type { RunSummary } from '../core/run.js';
import { emptyUsage } from '../core/usage.js';

/** A summary with every field a run that did nothing would have, then `fields`. */
export function runSummary(
  fields: Partial<RunSummary> & Pick<RunSummary, 'runId' | 'spaceId' | 'status'>,
): RunSummary {
  return {
    reason: undefined,
    sessions: [],
    added: 0,
    updated: 0,
    superseded: 0,
    quarantined: 0,
    calls: 0,
    retries: 0,
    usage: emptyUsage(),
    model: '',
    durationMs: 0,
    diff: '',
    problems: [],
    ...fields,
  };
}

/** Summary of a run that only moves bytes around (rollback, forget): no sessions, no model calls. */
export function maintenanceSummary(fields: {
  runId: string;
  spaceId: string;
  reason: string;
  diff: string;
  durationMs: number;
}): RunSummary {
  return runSummary({ ...fields, status: 'completed' });
}
