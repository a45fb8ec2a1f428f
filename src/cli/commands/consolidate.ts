import { Writable } from 'node:stream';
import { awaitingDecision, leftSessionsWaiting, type RunSummary } from '../../core/run.js';
import type { QueuedOutcome } from '../consolidate-queued.js';
import type { DaemonMatch } from '../daemon-client.js';
import { formatUsd } from '../../cost/prices.js';
import { describeBatch, formatChanges, formatDuration, formatHeldBack, formatUsage } from '../format.js';
import { CommandExit, ExitCode, emitResult, type CliIo } from '../output.js';
import type { CommandContext, CommandRegistrar } from '../program.js';
import type { Command } from 'commander';
import { withSpace, spaceCommand } from '../space-argument.js';
import { counted } from '../../util/plural.js';

/**
 * Retries and warnings go to stderr, beside the command's own output: pino's JSON lines under --json (through
 * this stream), else one readable line each, printed by the progress bar (above it, on a terminal).
 */
function stderrStream(write: (text: string) => void): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      write(String(chunk));
      done();
    },
  });
}

/** Sessions shown by name when a run leaves some waiting; the run record (or --json) lists them all. */
const WAITING_SHOWN = 20;

/** `  waiting    <session>: <reason>, <detail>` lines, and how many more there are. */
function describeWaitingSessions(summary: RunSummary): string[] {
  const waiting = summary.unconsolidated ?? [];
  const total = (summary as { unconsolidatedCount?: number }).unconsolidatedCount ?? waiting.length;
  if (total === 0) return [];
  const lines = waiting
    .slice(0, WAITING_SHOWN)
    .map((entry) => `  waiting    ${entry.sessionId}: ${entry.reason}, ${entry.detail}`);
  const shown = Math.min(waiting.length, WAITING_SHOWN);
  if (total > shown) lines.push(`  waiting    and ${counted(total - shown, 'more session')}`);
  lines.push(
    `  exit 3     ${counted(total, 'session')} due ${total === 1 ? 'was' : 'were'} not consolidated; they wait for the next run`,
  );
  return lines;
}

function describeSummary(summary: RunSummary): string {
  if (summary.status === 'skipped') {
    return [
      `space ${summary.spaceId}: skipped, ${summary.reason ?? 'nothing to do'}; nothing written (--force skips the time and session gates)`,
      ...describeWaitingSessions(summary),
    ].join('\n');
  }
  if (summary.status === 'lock-lost') {
    return [
      `space ${summary.spaceId}: run ${summary.runId} lost its lock, ${summary.reason ?? 'it was taken over'}; nothing written`,
      ...describeWaitingSessions(summary),
    ].join('\n');
  }
  const lines = [
    summary.status === 'dry-run'
      ? `space ${summary.spaceId}: dry run in ${formatDuration(summary.durationMs)}, nothing written`
      : summary.status === 'proposed'
        ? `space ${summary.spaceId}: run ${summary.runId} proposed in ${formatDuration(summary.durationMs)}; nothing written to memory until you decide`
        : `space ${summary.spaceId}: run ${summary.runId} completed in ${formatDuration(summary.durationMs)}`,
    // Through a daemon the summary is the job's slim one: `sessionCount` counts what `sessions` lists in part.
    `  sessions   ${(summary as { sessionCount?: number }).sessionCount ?? summary.sessions.length}`,
    `  changes    ${summary.added} added, ${summary.updated} updated, ${summary.superseded} superseded, ${summary.quarantined} quarantined (${formatChanges(summary)})`,
    `  model      ${summary.model || '(no call)'}, ${counted(summary.calls, 'call')}${summary.retries > 0 ? `, ${summary.retries} retried` : ''}`,
    `  tokens     ${formatUsage(summary.usage)}`,
  ];
  // A proposed run's note opens with how to decide, which its `decide` line below says: said once.
  const decide = summary.status === 'proposed' ? awaitingDecision(summary.runId, summary.spaceId) : undefined;
  const note = summary.reason
    ?.split('; ')
    .filter((part) => part !== decide)
    .join('; ');
  if (note !== undefined && note !== '') lines.push(`  note       ${note}`);
  if (summary.costUsd !== undefined) lines.push(`  cost       ${formatUsd(summary.costUsd)}`);
  else if (summary.calls > 0) lines.push('  cost       unknown (no price for the model; see model.price)');
  if (summary.batch !== undefined) lines.push(`  batch      ${describeBatch(summary.batch)}`);
  for (const problem of summary.problems) {
    if (problem.kind === 'memory') {
      const named = problem.reason.startsWith(problem.file);
      lines.push(`  memory     ${named ? '' : `${problem.file}: `}${problem.reason}`);
    } else lines.push(`  set aside  ${problem.file}: ${problem.reason}`);
  }
  if (summary.quarantined > 0) {
    // Records of runs before the counts by kind have only the total.
    const kinds = summary.heldBack === undefined ? '' : `: ${formatHeldBack(summary.heldBack)}`;
    lines.push(`  held back  ${counted(summary.quarantined, 'fact')}${kinds}`);
    lines.push('  review     .dreamd/quarantine.md holds what was held back');
  }
  const dropped = Object.entries(summary.factsDropped ?? {});
  if (dropped.length > 0)
    lines.push(
      `  dropped    facts of the answers: ${dropped.map(([reason, count]) => `${count} ${reason}`).join(', ')}`,
    );
  lines.push(...describeWaitingSessions(summary));
  if (summary.status === 'dry-run')
    lines.push('', summary.diff === '' ? '(no change to the memory files)' : summary.diff.trimEnd());
  else if (summary.status === 'completed')
    lines.push(`  undo       dreamd rollback ${summary.runId} --space ${summary.spaceId}`);
  else if (summary.status === 'proposed')
    lines.push(
      `  decide     dreamd proposals ${summary.spaceId}, then dreamd accept|reject ${summary.runId} [--only <fact ids>]`,
    );
  return lines.join('\n');
}

function describeOutcome(outcome: QueuedOutcome): string {
  if ('queued' in outcome) {
    return outcome.duplicate
      ? `space ${outcome.spaceId}: already queued or running as job ${outcome.jobId}; follow it with \`dreamd status ${outcome.spaceId}\``
      : `space ${outcome.spaceId}: queued as job ${outcome.jobId}`;
  }
  if (outcome.ok)
    return `${describeSummary(outcome.summary)}${outcome.jobId !== undefined ? `\n  job        ${outcome.jobId}` : ''}`;
  if (outcome.error.name === 'LockBusyError') {
    const holder = outcome.error.holder;
    return (
      `space ${outcome.spaceId}: busy, ${outcome.error.message}` +
      (holder !== undefined
        ? `\n  held by ${holder.owner}, pid ${holder.pid} on ${holder.host}, since ${holder.startedAt}`
        : '')
    );
  }
  // After its commit point a run's memory is partly in place, never "nothing written" (transaction.ts).
  const written =
    outcome.error.name === 'CommitIncompleteError'
      ? 'the run is committed but not fully in place; the next dreamd command that reads this memory finishes it'
      : 'nothing was written; its sessions stay pending for the next run';
  return `space ${outcome.spaceId}: failed, ${outcome.error.message}\n  ${written}`;
}

/** The options of `dreamd consolidate`. */
interface ConsolidateOptions {
  readonly force: boolean;
  readonly dryRun: boolean;
  readonly wait: boolean;
  readonly inProcess: boolean;
  readonly batch: boolean;
}

/** Says on stdout where the runs go: through the daemon, or here and why the daemon up was not used. */
function announceRoute(io: CliIo, json: boolean, match: DaemonMatch | undefined, baseUrl: string): void {
  if (json) return;
  if (match?.use === true) io.stdout(`via the daemon at ${baseUrl} (pid ${match.identity.pid})\n`);
  else if (match?.reachable === true) io.stdout(`in this process: ${match.why}\n`);
}

/** The outcomes as JSON under --json, then the exit code: failure, or incomplete when sessions were left waiting. */
function finishWith(
  io: CliIo,
  json: boolean,
  outcomes: readonly QueuedOutcome[],
  via: { queued: boolean; baseUrl: string; match: DaemonMatch | undefined },
): void {
  const { match } = via;
  const ok = outcomes.every((outcome) => outcome.ok);
  if (json)
    emitResult(
      io,
      json,
      {
        command: 'consolidate',
        ok,
        data: {
          via: via.queued ? via.baseUrl : 'in-process',
          ...(match !== undefined && !match.use && match.reachable ? { daemonSkipped: match.why } : {}),
          results: outcomes,
        },
      },
      () => '',
    );
  if (!ok) throw new CommandExit(ExitCode.failure);
  // Every run went through, but one left sessions it was due to consolidate: say so in the exit code.
  if (outcomes.some((outcome) => 'summary' in outcome && leftSessionsWaiting(outcome.summary)))
    throw new CommandExit(ExitCode.incomplete);
}

/** Runs `dreamd consolidate`: each space queued to the daemon that serves them all, else run in this process. */
async function consolidateAction(
  context: () => CommandContext,
  positional: string | undefined,
  options: ConsolidateOptions,
  command: Command,
): Promise<void> {
  const { spaceId, commandContext } = spaceCommand(command, positional, context);
  const { io, json, discoveredConfig } = commandContext;
  const loaded = await discoveredConfig();
  // Loaded when the command runs (the pipeline, the SDKs), so `--help` stays quick.
  const [
    { consolidateInProcess },
    { consolidateQueued },
    { createDaemonClient },
    { spacesOf },
    { createDreamd },
    { createLogger },
    { createNoteLogger },
    { createPlainProgress, createProgressBar, showsProgress },
  ] = await Promise.all([
    import('../consolidate-in-process.js'),
    import('../consolidate-queued.js'),
    import('../daemon-client.js'),
    import('../spaces.js'),
    import('../../dreamd.js'),
    import('../../daemon/logger.js'),
    import('../note-logger.js'),
    import('../progress.js'),
  ]);
  const spaces = await spacesOf(commandContext, spaceId);
  const drawsBar = showsProgress(io, json);
  const bar = drawsBar ? createProgressBar() : createPlainProgress(io.stderr);
  const logger = json
    ? createLogger({ pretty: false, level: 'warn', env: io.env, destination: stderrStream(io.stderr) })
    : createNoteLogger({
        note: (line) => bar.note(line),
        colorize: drawsBar && (io.env.NO_COLOR === undefined || io.env.NO_COLOR === ''),
      });
  let outcomes: QueuedOutcome[];
  const daemon = createDaemonClient(loaded);
  // A batched run waits for its batch in the process that asked for it.
  const match = options.inProcess || options.batch ? undefined : await daemon.serves(spaces);
  const queued = match?.use === true;
  announceRoute(io, json, match, daemon.baseUrl);
  const shown = {
    onStart: (space: { id: string }) => bar.start(space.id),
    onProgress: (progress: Parameters<typeof bar.update>[0]) => bar.update(progress),
    onEnd: (outcome: QueuedOutcome) => {
      bar.stop();
      if (!json) io.stdout(`${describeOutcome(outcome)}\n`);
    },
  };
  try {
    outcomes = queued
      ? await consolidateQueued({
          client: daemon,
          spaces,
          force: options.force,
          dryRun: options.dryRun,
          wait: options.wait,
          ...shown,
        })
      : await consolidateInProcess({
          dreamd: createDreamd({ getConfig: () => loaded, env: io.env, logger }),
          spaces,
          force: options.force,
          dryRun: options.dryRun,
          batch: options.batch,
          ...shown,
        });
  } finally {
    bar.stop();
  }
  finishWith(io, json, outcomes, { queued, baseUrl: daemon.baseUrl, match });
}

export const registerConsolidate: CommandRegistrar = (program, context) => {
  withSpace(
    program
      .command('consolidate')
      .description(
        'consolidate new sessions into memory now: queued to the daemon when one is up, else in this process (every space when none is named)',
      ),
    'space id or repository path (default: every space, discovered ones included, in turn)',
  )
    .option('--force', 'skip the time and session-count gates (never the lock)', false)
    .option('--dry-run', 'show the diff it would make and write nothing', false)
    .option('--no-wait', 'with a daemon: return once the run is queued')
    .option('--in-process', 'run here even when a daemon is up', false)
    .option(
      '--batch',
      'send the calls that do not depend on each other as a message batch (half price) and wait for it in this process; Ctrl-C leaves it for the next run to collect',
      false,
    )
    .action((positional: string | undefined, options: ConsolidateOptions, command: Command): Promise<void> =>
      consolidateAction(context, positional, options, command),
    );
};
