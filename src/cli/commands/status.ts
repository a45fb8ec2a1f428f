import { formatTime } from '../format.js';
import { CommandExit, ExitCode, emit } from '../output.js';
import type { CommandRegistrar } from '../program.js';
import { spaceStatus, type SpaceStatus } from '../space-status.js';
import { selectSpaces } from '../spaces.js';

function describeStatus(status: SpaceStatus): string {
  const lines = [
    `space ${status.space} (${status.format}): ${status.sessionsDir} → ${status.memoryDir}`,
    `  gates      ${status.gates.open ? 'open: a scheduled run would start now' : `closed: ${status.gates.reasons.join('; ')}`}`,
    `  sessions   ${status.sessions.settledNew} settled new, ${status.sessions.live} live, ` +
      `${status.sessions.consolidated} consolidated, ${status.sessions.broken} broken`,
    `  last run   ${status.lastRun === null ? 'never' : `${status.lastRun.runId} (${status.lastRun.kind}, ${status.lastRun.status}) ${formatTime(status.lastRun.committedAt)}`}`,
    `  lock       ${status.lock === null ? 'free' : `held by ${status.lock.owner} (pid ${status.lock.pid} on ${status.lock.host}) since ${status.lock.startedAt}`}`,
  ];
  if (status.queue !== undefined) {
    const queue = status.queue;
    lines.push(
      `  queue      ${queue.waiting} waiting, ${queue.active} active, ${queue.delayed} delayed, ${queue.failed} failed`,
    );
  }
  for (const broken of status.broken) lines.push(`  broken     ${broken.file}: ${broken.reason}`);
  if (status.error !== null) lines.push(`  error      ${status.error}`);
  return lines.join('\n');
}

export const registerStatus: CommandRegistrar = (program, context) => {
  program
    .command('status')
    .description('per space: gates, sessions waiting, last run, lock holder')
    .argument('[space]', 'space id (default: every configured space)')
    .action(async (spaceId: string | undefined) => {
      const { io, json, config } = context();
      const loaded = config();
      const statuses: SpaceStatus[] = [];
      for (const space of selectSpaces(loaded, spaceId))
        statuses.push(await spaceStatus(space, { config: loaded }));
      emit(io, json, statuses, () => statuses.map(describeStatus).join('\n\n'));
      if (statuses.some((status) => status.error !== null)) throw new CommandExit(ExitCode.failure);
    });
};
