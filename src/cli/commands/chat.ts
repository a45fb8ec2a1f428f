import { InvalidArgumentError, type Command } from 'commander';
import type { AgentEvent } from '../../agent/run-agent.js';
import { ConfigError } from '../../errors.js';
import { formatUsd } from '../../model/prices.js';
import { CommandExit, ExitCode, emit } from '../output.js';
import type { CommandRegistrar } from '../program.js';
import { spaceCommand } from '../space-argument.js';
import { counted } from '../../util/plural.js';

/** Longest tool input or result shown by `--verbose`, in characters: one readable line. */
const TRACE_CHARS = 200;

/** `--max-turns`: a whole number of model calls, at least 1 (0 or text is a usage error, exit 2). */
export function parseMaxTurns(value: string): number {
  const turns = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(turns) || turns < 1) {
    throw new InvalidArgumentError('give a whole number of model calls, at least 1 (e.g. --max-turns 10)');
  }
  return turns;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= TRACE_CHARS ? flat : `${flat.slice(0, TRACE_CHARS - 1)}…`;
}

/** The `--verbose` line of an event (`[turn 1] called write_memory {…}`), or undefined. */
export function traceLine(event: AgentEvent): string | undefined {
  switch (event.type) {
    case 'tool-call':
      return `[turn ${event.turn}] called ${event.name} ${oneLine(JSON.stringify(event.input) ?? '')}`;
    case 'tool-result':
      return `[turn ${event.turn}] ${event.name} → ${oneLine(event.content)}`;
    case 'tool-error':
      return `[turn ${event.turn}] ${event.name} failed: ${oneLine(event.message)}`;
    case 'context-summarised':
      return `[context] folded ${counted(event.messages, 'message')} into the summary`;
    case 'memory-backfill':
      return (
        `[memory backfill] ${event.memoryBytes.toLocaleString('en')} bytes of memory (${counted(event.memoryLines, 'line')}) ` +
        `in the system prompt; ${counted(event.retrievedFacts.length, 'fact')} retrieved for this message ` +
        `(${event.retrievedBytes.toLocaleString('en')} bytes)` +
        (event.retrievedFacts.length === 0 ? '' : `: ${oneLine(event.retrievedFacts.join(', '))}`)
      );
    case 'summary-failed':
      return `[context] summary failed (${oneLine(event.message)}); older messages left without one`;
    default:
      return undefined;
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin as AsyncIterable<Buffer | string>) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function messageFrom(argument: string): Promise<string> {
  if (argument === '-' && process.stdin.isTTY === true) {
    throw new ConfigError(
      'dreamd chat -: reads the message from standard input; pipe it in (echo "…" | dreamd chat -)',
      'message',
    );
  }
  const message = argument === '-' ? (await readStdin()).trim() : argument;
  if (message.trim() === '') {
    throw new ConfigError(
      argument === '-'
        ? 'dreamd chat -: standard input was empty; pipe the message in'
        : 'the message is empty',
      'message',
    );
  }
  return message;
}

export const registerChat: CommandRegistrar = (program, context) => {
  program
    .command('chat')
    .description(
      'talk to a small agent with memory: MEMORY.md in its prompt, relevant facts retrieved, tools to save ' +
        'and recall; the session is recorded (continue it with --session)',
    )
    .argument('<message>', 'what to say ("-" reads it from standard input)')
    .argument('[space]', 'space id or repository path whose memory the agent uses (default: the only one)')
    .option('--space <id>', 'space id or repository path whose memory the agent uses (default: the only one)')
    .option('--max-turns <n>', 'most model calls for this message (at least 1)', parseMaxTurns, 10)
    .option('--session <id>', 'continue the recorded session <id> (its history and summary)')
    .option('--verbose', 'print each tool call and its result on one line (on stderr)', false)
    .action(
      async (
        argument: string,
        positional: string | undefined,
        flags: { maxTurns: number; session?: string; verbose: boolean },
        command: Command,
      ) => {
        const { spaceId, commandContext } = spaceCommand(command, positional, context);
        const { io, json, config } = commandContext;
        const loaded = config();
        // The agent kit and the SDKs load only when the command runs, so `--help` stays quick.
        const [{ createMemoryAgent }, { spaceOf }] = await Promise.all([
          import('../../agent/memory-agent.js'),
          import('../spaces.js'),
        ]);
        const space = await spaceOf(commandContext, spaceId);
        const message = await messageFrom(argument);
        const agent = await createMemoryAgent({
          space,
          config: loaded,
          maxTurns: flags.maxTurns,
          ...(flags.session === undefined ? {} : { sessionId: flags.session, resume: true }),
          ...(flags.verbose
            ? {
                onEvent: (event: AgentEvent) => {
                  const line = traceLine(event);
                  if (line !== undefined) io.stderr(`${line}\n`);
                },
              }
            : {}),
        });
        try {
          const result = await agent.chat(message);
          const outOfTurns = result.stopReason === 'max_turns';
          const problem = outOfTurns
            ? `stopped after ${result.turns} model calls (--max-turns ${flags.maxTurns}) before the model finished; ` +
              `continue with: dreamd chat --session ${agent.sessionId} "…" (or raise --max-turns)`
            : undefined;
          emit(
            io,
            json,
            {
              ok: !outOfTurns,
              space: space.id,
              sessionId: agent.sessionId,
              sessionFile: agent.sessionFile,
              text: result.text,
              stopReason: result.stopReason,
              turns: result.turns,
              usage: result.usage,
              costUsd: result.costUsd,
              retrievedFacts: result.retrievedFacts,
              ...(problem === undefined ? {} : { error: { name: 'TurnLimit', message: problem } }),
            },
            () => result.text,
          );
          if (!json) {
            io.stderr(
              problem === undefined
                ? `[stop: ${result.stopReason}, ${result.turns} model call${result.turns === 1 ? '' : 's'}, ` +
                    `${formatUsd(result.costUsd)}, session ${agent.sessionId}]\n`
                : `dreamd: ${problem}\n`,
            );
          }
          if (outOfTurns) throw new CommandExit(ExitCode.failure);
        } finally {
          await agent.end();
        }
      },
    );
};
