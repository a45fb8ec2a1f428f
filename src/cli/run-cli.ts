import { registerDoctor } from './commands/doctor.js';
import type { CliIo, ExitCode } from './output.js';
import { runProgram, type CommandRegistrar } from './program.js';

/** Every command of the CLI, in help order. */
export const COMMANDS: readonly CommandRegistrar[] = [registerDoctor];

/** Runs the dreamd CLI with the given arguments and IO; resolves to the exit code. */
export function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  return runProgram(argv, io, COMMANDS);
}
