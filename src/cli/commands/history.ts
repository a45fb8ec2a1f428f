import type { Space } from '../../config/schema.js';
import { formatUsd } from '../../cost/prices.js';
import { ConfigError } from '../../errors.js';
import type { RunRecord } from '../../space/index.js';
import {
  describeBatch,
  formatChanges,
  formatDuration,
  formatTime,
  formatUsage,
  totalTokens,
} from '../format.js';
import { emitResult, table } from '../output.js';
import type { CommandRegistrar } from '../program.js';
import type { Command } from 'commander';
import { namedSpace, withSpace, spaceCommand } from '../space-argument.js';
import { counted } from '../../util/plural.js';

/** Runs `dreamd history` lists unless --limit says otherwise. */
const DEFAULT_HISTORY_LIMIT = 20;

/** One row of `history --json`. */
export interface HistoryRow {
  readonly space: string;
  readonly runId: string;
  readonly kind: RunRecord['kind'];
  /** Commit order within the space, from 1. */
  readonly seq: number;
  readonly committedAt: string;
  readonly status: RunRecord['summary']['status'];
  readonly reason: string | null;
  readonly rollbackOf: string | null;
  /** The rollback run that undid this one, if any. */
  readonly rolledBackBy: string | null;
  readonly sessions: number;
  readonly added: number;
  readonly updated: number;
  readonly superseded: number;
  readonly quarantined: number;
  /** Facts the run moved from the active files to the archive (superseded or merged by curation). */
  readonly archived: number;
  /** Facts curation merged (moved to the archive with their successor); 0 when the run made no curation call. */
  readonly merged: number;
  readonly calls: number;
  /** `calls` by kind; null: no call, or a record written before they were counted. */
  readonly callKinds: NonNullable<RunRecord['summary']['callKinds']> | null;
  /** Extraction answers thrown away unread and asked again in halves (paid for twice). */
  readonly answersAskedAgain: number;
  readonly usage: RunRecord['summary']['usage'];
  /** USD the run's model calls cost at list price; null when the model had no known price. */
  readonly costUsd: number | null;
  readonly model: string;
  readonly durationMs: number;
  /** The message batch the run collected: its id, the calls it answered and their price; null: none. */
  readonly batch: NonNullable<RunRecord['summary']['batch']> | null;
}

function historyRows(space: Space, runs: readonly RunRecord[]): HistoryRow[] {
  const undoneBy = new Map(
    runs.filter((run) => run.rollbackOf !== undefined).map((run) => [run.rollbackOf ?? '', run.runId]),
  );
  return runs.map((run) => ({
    space: space.id,
    runId: run.runId,
    kind: run.kind,
    seq: run.seq,
    committedAt: run.committedAt,
    status: run.summary.status,
    reason: run.summary.reason ?? null,
    rollbackOf: run.rollbackOf ?? null,
    rolledBackBy: undoneBy.get(run.runId) ?? null,
    sessions: run.summary.sessions.length,
    added: run.summary.added,
    updated: run.summary.updated,
    superseded: run.summary.superseded,
    quarantined: run.summary.quarantined,
    archived: run.summary.archived ?? 0,
    merged: run.summary.curation?.merged ?? 0,
    calls: run.summary.calls,
    callKinds: run.summary.callKinds ?? null,
    answersAskedAgain: run.summary.answersAskedAgain ?? 0,
    usage: run.summary.usage,
    costUsd: run.summary.costUsd ?? null,
    model: run.summary.model,
    durationMs: run.summary.durationMs,
    batch: run.summary.batch ?? null,
  }));
}

function describeRows(rows: readonly HistoryRow[]): string {
  if (rows.length === 0) return 'no runs yet: `dreamd consolidate` makes the first';
  return table([
    ['RUN', 'SPACE', 'KIND', 'DATE', 'STATUS', 'SESSIONS', 'CHANGES', 'CALLS', 'TOKENS', 'COST'],
    ...rows.map((row) => [
      row.runId,
      row.space,
      row.kind,
      formatTime(row.committedAt),
      row.rolledBackBy !== null
        ? `rolled back by ${row.rolledBackBy}`
        : row.rollbackOf !== null
          ? `undid ${row.rollbackOf}`
          : row.status,
      String(row.sessions),
      formatChanges(row),
      row.callKinds !== null && row.callKinds.updateCheck > 0
        ? `${row.calls} (${row.callKinds.updateCheck} check)`
        : String(row.calls),
      String(totalTokens(row.usage)),
      `${formatUsd(row.costUsd ?? undefined)}${row.batch !== null && row.batch.batchedCalls > 0 ? ' (batch)' : ''}`,
    ]),
  ]);
}

/** " (1 carrying the update check)" after the curation calls that did, else nothing. */
function carriedCheck(carried: number | undefined): string {
  return carried === undefined || carried === 0 ? '' : ` (${carried} carrying the update check)`;
}

/**
 * A run's calls by kind, the answers it threw away and the facts a user line yielded: "9 extraction, 2 update
 * check, 1 curation; 1 answer thrown away and asked again in halves; 1.4 facts a user line".
 */
export function describeCalls(summary: {
  readonly calls: number;
  readonly callKinds?: RunRecord['summary']['callKinds'];
  readonly answersAskedAgain?: number | undefined;
  readonly factsPerUserLine?: number | undefined;
}): string {
  const kinds =
    summary.callKinds === undefined
      ? counted(summary.calls, 'call')
      : `${summary.callKinds.extraction} extraction, ${summary.callKinds.updateCheck} update check, ${summary.callKinds.curation} curation${carriedCheck(summary.callKinds.updateCheckCarried)}`;
  const again = summary.answersAskedAgain ?? 0;
  return [
    kinds,
    ...(again > 0 ? [`${counted(again, 'answer')} thrown away and asked again in halves`] : []),
    ...(summary.factsPerUserLine === undefined ? [] : [`${summary.factsPerUserLine} facts a user line`]),
  ].join('; ');
}

function describeRun(space: Space, run: RunRecord): string {
  const summary = run.summary;
  return [
    `run ${run.runId} (${run.kind}) in space ${space.id}, committed ${run.committedAt}`,
    ...(run.rollbackOf !== undefined ? [`  undid      ${run.rollbackOf}`] : []),
    ...(summary.reason !== undefined ? [`  note       ${summary.reason}`] : []),
    `  sessions   ${summary.sessions.length}${summary.sessions.length > 0 ? `: ${summary.sessions.join(', ')}` : ''}`,
    `  changes    ${summary.added} added, ${summary.updated} updated, ${summary.superseded} superseded, ${summary.quarantined} quarantined`,
    ...(summary.archived !== undefined
      ? [
          `  archived   ${counted(summary.archived, 'fact')} left the active files for .dreamd/archive.json (\`memory show --archived\`)`,
        ]
      : []),
    ...(summary.curation !== undefined
      ? [
          `  curation   ${summary.curation.types.map((entry) => `${entry.type} (${entry.why.join(', ')})`).join(', ')}: ` +
            `${counted(summary.curation.calls, 'call')}, ${counted(summary.curation.merged, 'fact')} merged into ${summary.curation.results}, ` +
            `${counted(summary.curation.refused.length, 'result')} refused`,
          ...summary.curation.refused.map(
            (entry) => `    refused  ${entry.type} "${entry.title}": ${entry.reason}`,
          ),
        ]
      : []),
    `  model      ${summary.model || '(no call)'}, ${counted(summary.calls, 'call')}, ${formatDuration(summary.durationMs)}`,
    ...(summary.calls > 0 ? [`  calls      ${describeCalls(summary)}`] : []),
    `  tokens     ${formatUsage(summary.usage)}`,
    `  cost       ${summary.costUsd === undefined ? 'unknown (no price for the model; see model.price)' : formatUsd(summary.costUsd)}`,
    ...(summary.batch === undefined ? [] : [`  batch      ${describeBatch(summary.batch)}`]),
    `  files      ${Object.keys(run.files).join(', ') || '-'}`,
    '',
    summary.diff === '' ? '(no change to the memory files)' : summary.diff.trimEnd(),
  ].join('\n');
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_HISTORY_LIMIT;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1) {
    throw new ConfigError(`--limit ${value}: give a whole number of 1 or more`, 'limit');
  }
  return limit;
}

export const registerHistory: CommandRegistrar = (program, context) => {
  const history = withSpace(
    program
      .command('history')
      .description('runs that changed memory, newest first (`history show <runId>` for one with its diff)'),
    'space id or repository path (default: every space)',
  )
    .option('--limit <n>', `most runs listed (default ${DEFAULT_HISTORY_LIMIT})`)
    .action(async (positional: string | undefined, options: { limit?: string }, command: Command) => {
      const { spaceId, commandContext } = spaceCommand(command, positional, context);
      const { io, json, config } = commandContext;
      const limit = parseLimit(options.limit);
      // Loaded when the command runs, so `--help` stays quick.
      const [{ listRuns }, { spacesOf }] = await Promise.all([
        import('../../space/index.js'),
        import('../spaces.js'),
      ]);
      const loaded = config();
      const rows: HistoryRow[] = [];
      for (const space of await spacesOf(commandContext, spaceId)) {
        await (await import('../space-lock.js')).recoverBeforeReading(loaded, space);
        rows.push(...historyRows(space, await listRuns(space.memoryDir)));
      }
      rows.sort((left, right) => right.committedAt.localeCompare(left.committedAt) || right.seq - left.seq);
      const shown = rows.slice(0, limit);
      emitResult(io, json, { command: 'history', data: shown }, () => describeRows(shown));
    });

  withSpace(
    history
      .command('show')
      .description('one run: what it changed and its diff')
      .argument('<runId>', 'run id, as `dreamd history` lists them'),
    'space id or repository path (default: the space whose history has the run)',
  ).action(async (runId: string, positional: string | undefined, _options: object, command: Command) => {
    const commandContext = context();
    const { io, json } = commandContext;
    // `--limit` is `history`'s: after `show` the parser hands it to the list, which does not run.
    if (command.parent?.opts<{ limit?: string }>().limit !== undefined)
      throw new ConfigError(
        `--limit: history show shows one run, whole; drop --limit (it limits \`dreamd history\`'s list)`,
        'limit',
      );
    const spaceId = namedSpace(command, positional);
    const [{ findRun }, { spacesOf }] = await Promise.all([import('../find-run.js'), import('../spaces.js')]);
    const { space, run } = await findRun(await spacesOf(commandContext, spaceId), runId);
    emitResult(
      io,
      json,
      {
        command: 'history show',
        data: {
          space: space.id,
          runId: run.runId,
          kind: run.kind,
          seq: run.seq,
          committedAt: run.committedAt,
          rollbackOf: run.rollbackOf ?? null,
          files: Object.keys(run.files),
          summary: run.summary,
        },
      },
      () => describeRun(space, run),
    );
  });
};
