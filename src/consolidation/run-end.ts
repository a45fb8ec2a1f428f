/**
 * What a run returns and leaves for status: the summary every run starts from, a skipped run's, and the
 * sessions a run leaves waiting (`.dreamd/waiting.json`), each with why.
 */
import { clearBatchInFlight, recordWaitingSessions, runSummary } from '../space/index.js';
import type { RunSummary, WaitingSession, WaitReason } from '../core/run.js';
import type { RunContext } from './run-context.js';
import { counted } from '../util/plural.js';

/** The summary of a run that stops before it writes anything, with why (`fields.reason`) and how long it took. */
export function skipped(ctx: RunContext, fields: Partial<RunSummary>): RunSummary {
  return runSummary({
    runId: ctx.runId,
    spaceId: ctx.space.id,
    status: 'skipped',
    ...fields,
    durationMs: ctx.elapsed(),
  });
}

/**
 * A run that ran (not a dry run, not one that lost its lock) leaves what it left waiting for status; a batch
 * it collected (or gave up) is done with: its facts are committed with this run, or its sessions wait.
 */
export async function endRun(ctx: RunContext, result: RunSummary): Promise<RunSummary> {
  const { space, stage } = ctx;
  if (!ctx.request.dryRun && result.status !== 'lock-lost') {
    if (stage?.kind === 'collect') await clearBatchInFlight(space.memoryDir);
    await recordWaitingSessions(space.memoryDir, {
      runId: ctx.runId,
      at: ctx.now().toISOString(),
      sessions: result.unconsolidated ?? [],
    });
  }
  return result;
}

/** One note per reason: how many sessions wait for it and which (the first few), for the summary's notes. */
export function describeWaiting(unconsolidated: readonly WaitingSession[]): string[] {
  const byReason = new Map<WaitReason, string[]>();
  for (const entry of unconsolidated) {
    const ids = byReason.get(entry.reason) ?? [];
    ids.push(entry.sessionId);
    byReason.set(entry.reason, ids);
  }
  return [...byReason].map(([reason, ids]) => {
    const shown = ids.slice(0, 5).join(', ');
    const more = ids.length > 5 ? ` and ${ids.length - 5} more` : '';
    return `${counted(ids.length, 'session')} ${ids.length === 1 ? 'waits' : 'wait'} for the next run (${reason}): ${shown}${more}`;
  });
}
