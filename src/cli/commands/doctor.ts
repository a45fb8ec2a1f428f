import type { CommandRegistrar } from '../program.js';
import { runDoctor } from '../doctor.js';
import { CommandExit, ExitCode, emit } from '../output.js';

export const registerDoctor: CommandRegistrar = (program, context) => {
  program
    .command('doctor')
    .description('check config, directories, Redis and model credentials, and say how to fix what is missing')
    .action(async () => {
      const { io, json, config } = context();
      const checks = await runDoctor(config(), { env: io.env });
      const ok = checks.every((check) => check.ok);
      emit(io, json, { ok, checks }, () =>
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
