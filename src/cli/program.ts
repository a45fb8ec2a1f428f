import { Command, CommanderError } from 'commander';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { CommandExit, ExitCode, reportError, type CliIo } from './output.js';
import { packageVersion } from './version.js';

/** What every command's action receives: the IO, the global flags and a lazy config loader. */
export interface CommandContext {
  readonly io: CliIo;
  readonly json: boolean;
  /** Loads the config once (from --config, DREAMD_CONFIG or ./dreamd.config.json). */
  readonly config: () => Config;
}

export type CommandRegistrar = (program: Command, context: () => CommandContext) => void;

/**
 * Builds the commander program with global flags and registers the commands. Errors thrown by an action
 * are reported once, as text or JSON, and become the exit code (1 failure, 2 usage/config).
 */
export async function runProgram(
  argv: readonly string[],
  io: CliIo,
  registrars: readonly CommandRegistrar[],
): Promise<ExitCode> {
  const program = new Command('dreamd')
    .description('Memory consolidation for LLM agents: transcripts in, curated memory out.')
    .option('--config <path>', 'config file (default: $DREAMD_CONFIG or ./dreamd.config.json)')
    .option('--json', 'machine-readable output', false)
    .version(packageVersion(), '-V, --version', 'print the version of dreamd')
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });

  let loaded: Config | undefined;
  const context = (): CommandContext => {
    const flags = program.opts<{ config?: string; json: boolean }>();
    return {
      io,
      json: flags.json,
      config: () => (loaded ??= loadConfig({ path: flags.config, env: io.env, cwd: io.cwd })),
    };
  };
  for (const register of registrars) register(program, context);
  program.commands.forEach((command) => {
    command.exitOverride();
    command.configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
    command.commands.forEach((sub) => {
      sub.exitOverride();
      sub.configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
    });
  });

  try {
    await program.parseAsync(['node', 'dreamd', ...argv]);
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.exitCode === 0
      ) {
        return ExitCode.ok;
      }
      return ExitCode.usage;
    }
    if (error instanceof CommandExit) return error.code;
    return reportError(io, program.opts<{ json: boolean }>().json, error);
  }
}
