import type { CommandRegistrar } from '../program.js';
import { CommandExit, ExitCode, emitResult } from '../output.js';

export const registerDoctor: CommandRegistrar = (program, context) => {
  program
    .command('doctor')
    .description(
      'check config, directories, Redis and the model (URL, key, one models-list request), and say how to fix what is missing',
    )
    .option('--no-probe', 'do not send the models-list request to the model endpoint')
    .option(
      '--probe-messages',
      'when the endpoint serves no models list, send one one-token message (a few paid tokens) to check the key and model name',
      false,
    )
    .action(async (options: { probe: boolean; probeMessages: boolean }) => {
      const { io, json, config } = context();
      // Loaded when the command runs (ioredis, the SDKs), so `--help` stays quick.
      const [{ runDoctor }, { probeModelEndpoint }] = await Promise.all([
        import('../doctor.js'),
        import('../../model/probe.js'),
      ]);
      const checks = await runDoctor(config(), {
        env: io.env,
        ...(options.probe
          ? {
              probeModel: (model, env) => probeModelEndpoint(model, { env, messages: options.probeMessages }),
            }
          : {}),
      });
      const ok = checks.every((check) => check.ok);
      emitResult(io, json, { command: 'doctor', ok, data: { checks } }, () =>
        checks
          .map(
            (check) =>
              `${check.ok ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}${check.fix !== undefined ? `\n     fix: ${check.fix}` : ''}`,
          )
          .join('\n'),
      );
      if (!ok) throw new CommandExit(ExitCode.failure);
    });
};
