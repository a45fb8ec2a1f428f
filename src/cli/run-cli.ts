import { registerBatch } from './commands/batch.js';
import { registerChat } from './commands/chat.js';
import { registerConsolidate } from './commands/consolidate.js';
import { registerDaemonCommands } from './commands/daemon.js';
import { registerDiscover } from './commands/discover.js';
import { registerDoctor } from './commands/doctor.js';
import { registerHistory } from './commands/history.js';
import { registerMemory } from './commands/memory.js';
import { registerProposals } from './commands/proposals.js';
import { registerRollback } from './commands/rollback.js';
import { registerSessions } from './commands/sessions.js';
import { registerStatus } from './commands/status.js';
import type { CliIo, ExitCode } from './output.js';
import { runProgram, type CommandRegistrar } from './program.js';

/** Every command of the CLI, in help order. */
export const COMMANDS: readonly CommandRegistrar[] = [
  registerStatus,
  registerSessions,
  registerConsolidate,
  registerDiscover,
  registerMemory,
  registerHistory,
  registerRollback,
  registerProposals,
  registerBatch,
  registerChat,
  registerDoctor,
  registerDaemonCommands,
];

/** Runs the dreamd CLI with the given arguments and IO; resolves to the exit code. */
export function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  return runProgram(argv, io, COMMANDS);
}
