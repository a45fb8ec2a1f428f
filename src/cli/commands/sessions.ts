import type { CommandRegistrar } from '../program.js';
import { formatBytes, formatTime } from '../format.js';
import { CommandExit, ExitCode, emitResult, table } from '../output.js';
import type * as SessionList from '../session-list.js';
import type { SessionRow } from '../session-list.js';
import type { Command } from 'commander';
import { namedSpace, withSpace } from '../space-argument.js';

function describeRows(rows: readonly SessionRow[]): string {
  const header = ['SPACE', 'STATUS', 'FILE', 'MESSAGES', 'SIZE', 'MODIFIED'];
  const lines = rows.map((row) => [
    row.space,
    row.status,
    row.file,
    row.messages === null
      ? '-'
      : row.newMessages !== null && row.newMessages > 0 && row.newMessages < row.messages
        ? `${row.messages} (${row.newMessages} new)`
        : String(row.messages),
    formatBytes(row.size),
    formatTime(row.mtime),
  ]);
  const broken = rows.filter((row) => row.status === 'broken');
  const reasons = broken.map(
    (row) => `broken ${row.file} (${row.reason ?? 'unreadable'}): ${row.message ?? ''}`,
  );
  return [table([header, ...lines]), ...(reasons.length > 0 ? ['', ...reasons] : [])].join('\n');
}

function totalsLine(
  rows: readonly SessionRow[],
  sessionTotals: typeof SessionList.sessionTotals,
  quietMinutes: number,
): string {
  const totals = sessionTotals(rows);
  const line =
    `${totals.sessions} session(s): ${totals.settled} settled, ${totals.live} live, ` +
    `${totals.consolidated} consolidated, ${totals.broken} broken; ` +
    `${totals.messages} message(s), ${formatBytes(totals.bytes)}`;
  if (totals.live === 0) return line;
  return (
    `${line}\nlive: still being written, or changed in the last ${quietMinutes} min; read once unchanged for ` +
    `${quietMinutes} min (gates.quietMinutes, DREAMD_QUIET_MINUTES)`
  );
}

export const registerSessions: CommandRegistrar = (program, context) => {
  const sessions = program.command('sessions').description('session transcripts (input)');
  withSpace(
    sessions
      .command('list')
      .description(
        'every session file with its status (settled, live, consolidated, broken), messages, size, mtime',
      ),
    'space id or repository path (default: every space)',
  ).action(async (positional: string | undefined, _options: object, command: Command) => {
    const spaceId = namedSpace(command, positional);
    const { io, json, discoveredConfig } = context();
    const loaded = await discoveredConfig();
    // Loaded when the command runs, so `--help` stays quick (the transcript readers are heavy).
    const [{ listSessions, sessionTotals }, { selectSpaces }] = await Promise.all([
      import('../session-list.js'),
      import('../spaces.js'),
    ]);
    const { rows, errors } = await listSessions(loaded, selectSpaces(loaded, spaceId, io.cwd));
    emitResult(io, json, { command: 'sessions list', ok: errors.length === 0, data: rows }, () =>
      rows.length === 0
        ? `no session files\n${totalsLine(rows, sessionTotals, loaded.gates.quietMinutes)}`
        : `${describeRows(rows)}\n\n${totalsLine(rows, sessionTotals, loaded.gates.quietMinutes)}`,
    );
    for (const error of errors) io.stderr(`dreamd: ${error.message}\n`);
    if (errors.length > 0) throw new CommandExit(ExitCode.failure);
  });
};
