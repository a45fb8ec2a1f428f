import type { CommandRegistrar } from '../program.js';
import { formatBytes, formatTime } from '../format.js';
import { CommandExit, ExitCode, emitResult, table } from '../output.js';
import type * as SessionList from '../session-list.js';
import type { SessionRow } from '../session-list.js';
import type { Command } from 'commander';
import { withSpace, spaceCommand } from '../space-argument.js';
import type { SessionMarkResult } from '../session-marks.js';
import { counted } from '../../util/plural.js';

/** Why a session is kept out, as `sessions list` says it. */
const KEPT_OUT_WORDS: Readonly<Record<string, string>> = {
  command: 'by dreamd sessions exclude',
  marker: 'by #dreamd:ignore in the session',
  'external-context': 'read web or MCP content, keepOut.externalContext',
};

function describeMark(result: SessionMarkResult, verb: 'exclude' | 'include'): string {
  const name = `${result.file}${result.sessionId === null ? '' : ` (session ${result.sessionId})`} of space ${result.space}`;
  const reasons = result.reasons.map(
    (mark) => `${KEPT_OUT_WORDS[mark.reason] ?? mark.reason}: ${mark.detail}`,
  );
  if (verb === 'exclude') {
    return [
      `${result.changed ? 'kept out' : 'already kept out'} ${name}: no run reads it (undo: dreamd sessions include ${result.sessionId ?? result.file} --space ${result.space})`,
      ...(result.consolidatedBefore
        ? [
            'part of it was consolidated before: the facts learned from it stay (dreamd memory search, then dreamd memory forget <id>; or dreamd rollback)',
          ]
        : []),
    ].join('\n');
  }
  if (!result.keptOut)
    return `${result.changed ? 'let in' : 'not kept out'} ${name}: the next run reads it${reasons.length > 0 ? ` (${reasons.join('; ')}, while keepOut.externalContext is off)` : ''}`;
  return `${result.changed ? 'took the exclude mark off' : 'no exclude mark on'} ${name}, but it stays out: ${reasons.join('; ')}`;
}

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
  const reasons = [
    ...broken.map((row) => `broken ${row.file} (${row.reason ?? 'unreadable'}): ${row.message ?? ''}`),
    ...rows.flatMap((row) =>
      row.keptOut === null
        ? []
        : [
            `kept out ${row.file} (${KEPT_OUT_WORDS[row.keptOut.reason] ?? row.keptOut.reason}): ${row.keptOut.detail}`,
          ],
    ),
  ];
  return [table([header, ...lines]), ...(reasons.length > 0 ? ['', ...reasons] : [])].join('\n');
}

function totalsLine(
  rows: readonly SessionRow[],
  sessionTotals: typeof SessionList.sessionTotals,
  quietMinutes: number,
): string {
  const totals = sessionTotals(rows);
  const line =
    `${counted(totals.sessions, 'session')}: ${totals.settled} settled, ${totals.live} live, ` +
    `${totals.consolidated} consolidated, ${totals.broken} broken, ${totals['kept-out']} kept out; ` +
    `${counted(totals.messages, 'message')}, ${formatBytes(totals.bytes)}`;
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
    const { spaceId, commandContext } = spaceCommand(command, positional, context);
    const { io, json, discoveredConfig } = commandContext;
    const loaded = await discoveredConfig();
    // Loaded when the command runs, so `--help` stays quick (the transcript readers are heavy).
    const [{ listSessions, sessionTotals }, { spacesOf }] = await Promise.all([
      import('../session-list.js'),
      import('../spaces.js'),
    ]);
    const { rows, errors } = await listSessions(loaded, await spacesOf(commandContext, spaceId));
    emitResult(io, json, { command: 'sessions list', ok: errors.length === 0, data: rows }, () =>
      rows.length === 0
        ? `no session files\n${totalsLine(rows, sessionTotals, loaded.gates.quietMinutes)}`
        : `${describeRows(rows)}\n\n${totalsLine(rows, sessionTotals, loaded.gates.quietMinutes)}`,
    );
    for (const error of errors) io.stderr(`dreamd: ${error.message}\n`);
    if (errors.length > 0) throw new CommandExit(ExitCode.failure);
  });
  registerMark(sessions, context, 'exclude');
  registerMark(sessions, context, 'include');
};

/** `sessions exclude <session>` and `sessions include <session>`: a person's keep-out mark, on and off. */
function registerMark(
  sessions: Command,
  context: Parameters<CommandRegistrar>[1],
  verb: 'exclude' | 'include',
): void {
  withSpace(
    sessions
      .command(verb)
      .description(
        verb === 'exclude'
          ? 'keep one session out of memory: no run reads it (kept in .dreamd/kept-out.json)'
          : 'take the exclude mark off a session: the next run reads it',
      )
      .argument('<session>', 'its file, path or session id, as `dreamd sessions list` shows them'),
    'space id or repository path (default: every space)',
  ).action(async (session: string, positional: string | undefined, _options: object, command: Command) => {
    const { spaceId, commandContext } = spaceCommand(command, positional, context);
    const { io, json, discoveredConfig } = commandContext;
    const loaded = await discoveredConfig();
    const [{ excludeSession, includeSession }, { spacesOf }] = await Promise.all([
      import('../session-marks.js'),
      import('../spaces.js'),
    ]);
    const spaces = await spacesOf(commandContext, spaceId);
    const result =
      verb === 'exclude'
        ? await excludeSession(loaded, spaces, session, { cwd: io.cwd, now: new Date() })
        : await includeSession(loaded, spaces, session, { cwd: io.cwd });
    emitResult(io, json, { command: `sessions ${verb}`, data: result }, () => describeMark(result, verb));
  });
}
