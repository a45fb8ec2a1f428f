import type { DaemonClient } from '../daemon-client.js';
import { formatHeldBack, formatTime } from '../format.js';
import { describeCalls } from './history.js';
import { CommandExit, ExitCode, emitResult } from '../output.js';
import type { CommandRegistrar } from '../program.js';
import type { QueueCounts, SpaceStatus } from '../space-status.js';
import type { Command } from 'commander';
import { withSpace, spaceCommand } from '../space-argument.js';
import { counted } from '../../util/plural.js';

interface QueueView {
  readonly recentFailures: readonly {
    jobId: string;
    spaceId: string;
    failedReason: string;
    finishedAt?: string;
  }[];
}
interface SpaceView {
  readonly currentJob: { readonly id: string; readonly state: string } | null;
}

/** Queue counts of each space, from a running daemon's API: its current job and its recent failures. */
async function createQueueCounts(daemon: DaemonClient): Promise<(spaceId: string) => Promise<QueueCounts>> {
  const queue = (await daemon.get('/queue')) as QueueView;
  return async (spaceId) => {
    const view = (await daemon.get(`/spaces/${encodeURIComponent(spaceId)}`)) as SpaceView;
    const state = view.currentJob?.state;
    const failures = queue.recentFailures.filter((failure) => failure.spaceId === spaceId);
    return {
      waiting: state === 'waiting' || state === 'prioritized' || state === 'waiting-children' ? 1 : 0,
      active: state === 'active' ? 1 : 0,
      delayed: state === 'delayed' ? 1 : 0,
      failed: failures.length,
      recentFailures: failures.map(({ jobId, failedReason, finishedAt }) => ({
        jobId,
        failedReason,
        finishedAt,
      })),
    };
  };
}

/** The gates line: open, or closed and why; an inspection's error is named once, on its own `error` line. */
function describeGates(status: SpaceStatus): string {
  if (status.gates.open) return 'open: a scheduled run would start now';
  const { error } = status;
  const reasons = status.gates.reasons.map((reason) =>
    error !== null && reason.includes(error) ? 'the space could not be inspected (the error below)' : reason,
  );
  return `closed: ${reasons.join('; ')}`;
}

function describeStatus(status: SpaceStatus): string {
  const lines = [
    status.sources === undefined
      ? `space ${status.space} (${status.format}): ${status.sessionsDir} → ${status.memoryDir}`
      : `space ${status.space}${status.repository === undefined ? '' : ` (repository ${status.repository})`} → ${status.memoryDir}`,
    ...(status.sources ?? []).map((source) => `  source     ${source.format}: ${source.sessionsDir}`),
    `  gates      ${describeGates(status)}`,
    `  sessions   ${status.sessions.settledNew} settled new, ${status.sessions.live} live, ` +
      `${status.sessions.consolidated} consolidated, ${status.sessions.broken} broken` +
      (status.sessions.keptOut > 0
        ? `, ${status.sessions.keptOut} kept out (dreamd sessions list says why)`
        : ''),
    `  last run   ${status.lastRun === null ? 'never' : `${status.lastRun.runId} (${status.lastRun.kind}, ${status.lastRun.status}) ${formatTime(status.lastRun.committedAt)}`}`,
    ...(status.lastRun !== null && status.lastRun.calls > 0
      ? [`  calls      ${describeCalls(status.lastRun)} (last run)`]
      : []),
    ...(status.lastRun?.factsDropped !== undefined
      ? [
          `  dropped    the last run dropped invalid facts of the model's answers: ${Object.entries(
            status.lastRun.factsDropped,
          )
            .map(([reason, count]) => `${count} ${reason}`)
            .join(', ')} (an error: see \`dreamd history show ${status.lastRun.runId}\`)`,
        ]
      : []),
    ...(status.lock !== null
      ? [
          `  lock       held by ${status.lock.owner} (pid ${status.lock.pid} on ${status.lock.host}) since ${status.lock.startedAt}`,
        ]
      : status.claudeCodeLock === null
        ? ['  lock       free']
        : []),
  ];
  if (status.claudeCodeLock !== null) {
    const { pid, since, ageMs } = status.claudeCodeLock;
    lines.push(
      `  lock       held by Claude Code (.consolidate-lock, pid ${pid}) for ${Math.round(ageMs / 60_000)} min, since ${since}; ` +
        'runs, rollback and forget wait until it is free',
    );
  }
  if (status.queue !== undefined) {
    const queue = status.queue;
    lines.push(
      `  queue      ${queue.waiting} waiting, ${queue.active} active, ${queue.delayed} delayed, ${queue.failed} failed`,
    );
    for (const failure of queue.recentFailures ?? []) {
      lines.push(`  failed     job ${failure.jobId} ${failure.finishedAt ?? ''}: ${failure.failedReason}`);
    }
  }
  for (const broken of status.broken) lines.push(`  broken     ${broken.file}: ${broken.reason}`);
  for (const problem of status.memory) lines.push(`  memory     ${problem.file}: ${problem.reason}`);
  if (status.error !== null) lines.push(`  error      ${status.error}`);
  if (status.storage !== null) lines.push(`  storage    ${status.storage}`);
  if (status.recovery !== null) lines.push(`  recovery   ${status.recovery}`);
  for (const progress of status.inProgress) lines.push(`  progress   ${progress}`);
  if (status.heldBack.total > 0)
    lines.push(
      `  held back  ${counted(status.heldBack.total, 'fact')} in .dreamd/quarantine.md for you to review: ${formatHeldBack(status.heldBack.byKind)}`,
    );
  for (const proposal of status.proposals)
    lines.push(
      `  proposal   ${proposal.runId} (${counted(proposal.changes, 'change')}, made ${proposal.createdAt}) awaits a decision: dreamd proposals ${status.space}`,
    );
  if (status.taughtAgain.length > 0) {
    lines.push('  forgetting rules your agents keep forgetting (taught again after they were saved):');
    for (const rule of status.taughtAgain)
      lines.push(`             ${rule.count}× "${rule.title}" (${rule.type}, ${rule.id}), last ${rule.last}`);
  }
  lines.push(`  batching   ${status.batch.mode}`);
  if (status.batch.pending !== null) lines.push(`  batch      ${status.batch.pending.description}`);
  for (const entry of status.waiting.slice(0, 20))
    lines.push(`  waiting    ${entry.sessionId}: ${entry.reason}, ${entry.detail}`);
  if (status.waiting.length > 20)
    lines.push(`  waiting    and ${counted(status.waiting.length - 20, 'more session')}`);
  return lines.join('\n');
}

export const registerStatus: CommandRegistrar = (program, context) => {
  withSpace(
    program.command('status').description('per space: gates, sessions waiting, last run, lock holder'),
    'space id or repository path (default: every space)',
  ).action(async (positional: string | undefined, _options: object, command: Command) => {
    const { spaceId, commandContext } = spaceCommand(command, positional, context);
    const { io, json, discoveredConfig } = commandContext;
    const loaded = await discoveredConfig();
    // Loaded when the command runs (memory, ledger, HTTP client), so `--help` stays quick.
    const [{ createDaemonClient }, { spaceStatus }, { spacesOf }] = await Promise.all([
      import('../daemon-client.js'),
      import('../space-status.js'),
      import('../spaces.js'),
    ]);
    const statuses: SpaceStatus[] = [];
    const spaces = await spacesOf(commandContext, spaceId);
    const daemon = createDaemonClient(loaded);
    const match = await daemon.serves(spaces);
    const queueCounts = match.use ? await createQueueCounts(daemon) : undefined;
    if (!match.use && match.reachable && !json) io.stderr(`dreamd: queue not shown: ${match.why}\n`);
    if (match.use) {
      // The daemon's own health: a Redis that refuses writes, or stopped workers, hold every space back.
      const health = (await daemon.get('/healthz').catch(() => undefined)) as
        { ok?: boolean; reason?: string; redis?: string; workers?: string } | undefined;
      if (health?.ok === false) {
        io.stderr(
          `dreamd: the daemon at ${daemon.baseUrl} cannot run jobs now: ${health.reason ?? `workers ${health.workers ?? 'unknown'}`}\n`,
        );
      }
    }
    for (const space of spaces)
      statuses.push(
        await spaceStatus(space, { config: loaded, ...(queueCounts !== undefined ? { queueCounts } : {}) }),
      );
    emitResult(
      io,
      json,
      { command: 'status', ok: statuses.every((status) => status.error === null), data: statuses },
      () => statuses.map(describeStatus).join('\n\n'),
    );
    if (statuses.some((status) => status.error !== null)) throw new CommandExit(ExitCode.failure);
  });
};
