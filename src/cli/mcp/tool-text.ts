/**
 * What the MCP tools answer, as text a model reads: a fact, a run's outcome, a space's status. Pure.
 */
import type { Fact } from '../../memory/types.js';
import { TOPIC_FILES } from '../../memory/types.js';
import type { QueuedOutcome } from '../consolidate-queued.js';
import { formatHeldBack } from '../format.js';
import type { SpaceStatus } from '../space-status.js';
import { counted } from '../../util/plural.js';

/** One fact in full: its id, type, file, status, dates, text. */
export function describeFact(fact: Fact): string {
  return [
    `${fact.title}`,
    `id: ${fact.id}`,
    `type: ${fact.type} (${fact.file ?? TOPIC_FILES[fact.type]})`,
    `status: ${fact.status}${fact.supersededBy === undefined ? '' : ` (replaced by ${fact.supersededBy})`}`,
    `observed ${fact.observed}, updated ${fact.updated}`,
    ...(fact.taughtAgain === undefined
      ? []
      : [`taught again ${fact.taughtAgain.count}× after it was saved, last ${fact.taughtAgain.last}`]),
    '',
    fact.body,
    ...(fact.why === undefined ? [] : ['', `Why: ${fact.why}`]),
    ...(fact.howToApply === undefined ? [] : [`How to apply: ${fact.howToApply}`]),
  ].join('\n');
}

/** A run's outcome in a few lines; `ok: false` when it failed. */
export function describeRun(outcome: QueuedOutcome, via: string): { text: string; ok: boolean } {
  if ('queued' in outcome)
    return { ok: true, text: `space ${outcome.spaceId}: queued as job ${outcome.jobId} (${via})` };
  if (!outcome.ok) {
    const holder = outcome.error.holder;
    return {
      ok: false,
      text:
        `space ${outcome.spaceId}: the run failed (${via}): ${outcome.error.message}` +
        (holder === undefined
          ? ''
          : `; the lock is held by ${holder.owner}, pid ${holder.pid} on ${holder.host}, since ${holder.startedAt}: try again when it is done`),
    };
  }
  const summary = outcome.summary;
  if (summary.status === 'skipped')
    return {
      ok: true,
      text:
        `space ${summary.spaceId}: skipped (${via}): ${summary.reason ?? 'nothing to do'}; nothing written. ` +
        'Call again with force: true to skip the time and session gates.',
    };
  const sessions = (summary as { sessionCount?: number }).sessionCount ?? summary.sessions.length;
  return {
    ok: summary.status !== 'lock-lost',
    text: [
      `space ${summary.spaceId}: run ${summary.runId} ${summary.status} (${via})`,
      `sessions read: ${sessions}`,
      `changes: ${summary.added} added, ${summary.updated} updated, ${summary.superseded} superseded, ${summary.quarantined} held back for review`,
      ...(summary.reason === undefined ? [] : [`note: ${summary.reason}`]),
      ...(summary.status === 'completed'
        ? [`undo: dreamd rollback ${summary.runId} --space ${summary.spaceId}`]
        : []),
      ...(summary.status === 'proposed'
        ? [`decide: dreamd proposals ${summary.spaceId}, then dreamd accept|reject ${summary.runId}`]
        : []),
    ].join('\n'),
  };
}

/** A space's status: the last run, the rules taught again, what waits for review, what is wrong. */
export function describeStatus(status: SpaceStatus): string {
  const lines = [
    `space ${status.space}${status.repository === undefined ? '' : ` (repository ${status.repository})`}: memory in ${status.memoryDir}`,
    `last run: ${status.lastRun === null ? 'never' : `${status.lastRun.runId} (${status.lastRun.kind}, ${status.lastRun.status}) at ${status.lastRun.committedAt}`}`,
    `gates: ${status.gates.open ? 'open: a scheduled run would start now' : `closed: ${status.gates.reasons.join('; ')}`}`,
    `sessions: ${status.sessions.settledNew} settled new, ${status.sessions.live} live, ${status.sessions.consolidated} consolidated, ${status.sessions.broken} broken, ${status.sessions.keptOut} kept out`,
  ];
  if (status.taughtAgain.length === 0) lines.push('rules taught again: none');
  else {
    lines.push('rules taught again (memory held them and the agent did not apply them):');
    for (const rule of status.taughtAgain)
      lines.push(`- ${rule.count}× "${rule.title}" (${rule.type}, ${rule.id}), last ${rule.last}`);
  }
  const review: string[] = [];
  if (status.heldBack.total > 0)
    review.push(
      `- ${counted(status.heldBack.total, 'fact')} held back in .dreamd/quarantine.md: ${formatHeldBack(status.heldBack.byKind)}`,
    );
  for (const proposal of status.proposals)
    review.push(
      `- proposal ${proposal.runId} (${counted(proposal.changes, 'change')}): dreamd proposals ${status.space}, then dreamd accept|reject ${proposal.runId}`,
    );
  lines.push(review.length === 0 ? 'waiting for review: nothing' : 'waiting for review:', ...review);
  for (const entry of status.waiting.slice(0, 10))
    lines.push(`session waiting: ${entry.sessionId}: ${entry.reason}, ${entry.detail}`);
  if (status.lock !== null) lines.push(`lock: held by ${status.lock.owner} since ${status.lock.startedAt}`);
  for (const problem of [...status.broken, ...status.memory])
    lines.push(`problem: ${problem.file}: ${problem.reason}`);
  if (status.error !== null) lines.push(`error: ${status.error}`);
  if (status.storage !== null) lines.push(`storage: ${status.storage}`);
  return lines.join('\n');
}
