import type { Command } from 'commander';
import { serverAddressFromEnvironment } from '../../config/server-address.js';
import type { DaemonRoles } from '../../daemon/daemon.js';
import type { CommandContext, CommandRegistrar } from '../program.js';

function register(
  program: Command,
  context: () => CommandContext,
  name: string,
  description: string,
  roles: DaemonRoles,
): void {
  const command = program.command(name).description(description);
  if (roles.server)
    // Where the API listens as the command would take it from the environment (the config file can say
    // otherwise; reading it would load the schema, which --help does not).
    command.addHelpText('after', () => {
      const address = serverAddressFromEnvironment(context().io.env);
      return `\nThe HTTP API listens on ${address} unless the config file's server.host/server.port say otherwise (DREAMD_HOST and DREAMD_PORT come first).`;
    });
  command.action(async () => {
    // The daemon, the SDKs and the queue load only when the command runs, so `--help` stays quick.
    const { runDaemon } = await import('../../../workers/main.js');
    await runDaemon(context(), roles, program.opts<{ config?: string }>().config);
  });
}

export const registerDaemonCommands: CommandRegistrar = (program, context) => {
  register(program, context, 'start', 'run the daemon: scheduler, workers and the HTTP API', {
    scheduler: true,
    workers: true,
    server: true,
  });
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
