import type { Command } from 'commander';
import type { DaemonRoles } from '../../daemon/daemon.js';
import type { CommandContext, CommandRegistrar } from '../program.js';

function register(
  program: Command,
  context: () => CommandContext,
  name: string,
  description: string,
  roles: DaemonRoles,
): void {
  program
    .command(name)
    .description(description)
    .action(async () => {
      // The daemon, the SDKs and the queue load only when the command runs, so `--help` stays quick.
      const { runDaemon } = await import('../../../workers/main.js');
      await runDaemon(context(), roles, program.opts<{ config?: string }>().config);
    });
}

export const registerDaemonCommands: CommandRegistrar = (program, context) => {
  register(
    program,
    context,
    'start',
    'run the daemon: scheduler, workers and the HTTP API (127.0.0.1:7077)',
    {
      scheduler: true,
      workers: true,
      server: true,
    },
  );
  register(
    program,
    context,
    'worker',
    'run only consolidation workers (scale them across machines on one Redis)',
    {
      scheduler: false,
      workers: true,
      server: false,
    },
  );
  register(
    program,
    context,
    'scheduler',
    'run only the scheduler (replicas on one Redis never queue a space twice)',
    {
      scheduler: true,
      workers: false,
      server: false,
    },
  );
};
