import type { CliIo, ExitCode } from './output.js';
import { runProgram, type CommandEntry } from './program.js';

const daemonCommands = async () => (await import('./commands/daemon.js')).registerDaemonCommands;
const proposalCommands = async () => (await import('./commands/proposals.js')).registerProposals;

/**
 * Every command of the CLI, in help order: how `dreamd --help` lists it, and its module, loaded only when the
 * command runs. Adding a command is one entry here (its module gives the same description; a test checks).
 */
export const COMMANDS: readonly CommandEntry[] = [
  {
    usage: 'status [space]',
    summary: 'per space: gates, sessions waiting, last run, lock holder',
    load: async () => (await import('./commands/status.js')).registerStatus,
  },
  {
    usage: 'sessions',
    summary: 'session transcripts (input)',
    load: async () => (await import('./commands/sessions.js')).registerSessions,
  },
  {
    usage: 'consolidate [space]',
    summary:
      'consolidate new sessions into memory now: queued to the daemon when one is up, else in this process (every space when none is named)',
    load: async () => (await import('./commands/consolidate.js')).registerConsolidate,
  },
  {
    usage: 'discover',
    summary:
      'the repositories the coding agents worked in: their sessions, the memory folder each feeds, what was skipped',
    load: async () => (await import('./commands/discover.js')).registerDiscover,
  },
  {
    usage: 'memory',
    summary: 'the curated memory (output): show, search, forget',
    load: async () => (await import('./commands/memory.js')).registerMemory,
  },
  {
    usage: 'history [space]',
    summary: 'runs that changed memory, newest first (`history show <runId>` for one with its diff)',
    load: async () => (await import('./commands/history.js')).registerHistory,
  },
  {
    usage: 'rollback <runId> [space]',
    summary: 'restore the memory files as they were before a run (recorded as a new run)',
    load: async () => (await import('./commands/rollback.js')).registerRollback,
  },
  {
    usage: 'proposals [space]',
    summary:
      'proposals of approval-mode spaces awaiting a decision, with their changes (--diff: the exact diff)',
    load: proposalCommands,
  },
  {
    usage: 'accept <runId> [space]',
    summary: 'apply a proposal (or the changes --only names) to memory as one transaction',
    load: proposalCommands,
  },
  {
    usage: 'reject <runId> [space]',
    summary:
      'drop a proposal (or the changes --only names); rejected facts are not proposed again from the same sessions',
    load: proposalCommands,
  },
  {
    usage: 'team',
    summary: "memory shared with the team through the repository's AGENTS.md: setup, share, personal, merge",
    load: async () => (await import('./commands/team.js')).registerTeam,
  },
  {
    usage: 'batch',
    summary: 'the message batches of batch mode (model.batch, consolidate --batch)',
    load: async () => (await import('./commands/batch.js')).registerBatch,
  },
  {
    usage: 'chat <message> [space]',
    summary:
      'talk to a small agent with memory: MEMORY.md in its prompt, relevant facts retrieved, tools to save and recall; the session is recorded (continue it with --session)',
    load: async () => (await import('./commands/chat.js')).registerChat,
  },
  {
    usage: 'mcp',
    summary:
      "serve memory to an MCP client over stdio (Claude Code, Codex, any client): recall, read_memory, remember, consolidate, status on the client's repository",
    load: async () => (await import('./commands/mcp.js')).registerMcp,
  },
  {
    usage: 'hook',
    summary:
      "what Claude Code's hooks run: session-start (the rules people keep re-teaching, as context), session-end (ask the daemon to check the space)",
    load: async () => (await import('./commands/hook.js')).registerHook,
  },
  {
    usage: 'doctor',
    summary:
      'check config, directories, Redis and the model (URL, key, one models-list request), and say how to fix what is missing',
    load: async () => (await import('./commands/doctor.js')).registerDoctor,
  },
  {
    usage: 'start',
    summary: 'run the daemon: scheduler, workers and the HTTP API',
    load: daemonCommands,
  },
  {
    usage: 'worker',
    summary: 'run only consolidation workers (scale them across machines on one Redis)',
    load: daemonCommands,
  },
  {
    usage: 'scheduler',
    summary: 'run only the scheduler (replicas on one Redis never queue a space twice)',
    load: daemonCommands,
  },
];

/** Runs the dreamd CLI with the given arguments and IO; resolves to the exit code. */
export function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  return runProgram(argv, io, COMMANDS);
}
