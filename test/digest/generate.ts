/**
 * Seeded generators of realistic sessions for the size tests: an agent session with tool calls whose results
 * are file contents and logs, and a plain dialogue. Sizes follow what Claude Code transcripts show: results
 * of a few hundred characters to tens of kilobytes (file reads, test output), answers of 1–4 KB.
 */
import type { Session } from '../../src/transcripts/types.js';
import { assistant, makeSession, toolCall, toolResult, user, type MessageInit } from './sessions.js';

/** mulberry32: a tiny deterministic PRNG, so every run sees the same data. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'the deploy script reads config from the staging box and the worker queue retries failed jobs with backoff ' +
  'we keep migrations in a separate folder so review is easier and the cache is warmed before traffic moves ' +
  'tests run against a real database with a fresh schema per test and the logger writes json lines to stdout'
).split(' ');

function words(random: () => number, count: number): string {
  const out: string[] = [];
  for (let index = 0; index < count; index += 1) out.push(WORDS[Math.floor(random() * WORDS.length)] ?? 'x');
  return out.join(' ');
}

function between(random: () => number, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}

/** A file's content or a log: numbered lines of code-like text, `chars` long. */
function payload(random: () => number, chars: number): string {
  const lines: string[] = [];
  let length = 0;
  for (let line = 1; length < chars; line += 1) {
    const text = `${String(line).padStart(6)}→  ${'  '.repeat(between(random, 0, 3))}${words(random, between(random, 3, 10))};`;
    lines.push(text);
    length += text.length + 1;
  }
  return lines.join('\n');
}

const TOOLS = [
  (random: () => number) => ({
    name: 'Read',
    input: { file_path: `/repo/src/${words(random, 1)}/${words(random, 1)}.ts` },
  }),
  (random: () => number) => ({
    name: 'Bash',
    input: { command: `npm test -- ${words(random, 2)}`, description: 'Run tests' },
  }),
  (random: () => number) => ({ name: 'Grep', input: { pattern: words(random, 2), path: '/repo/src' } }),
  (random: () => number) => ({
    name: 'Edit',
    input: { file_path: '/repo/src/index.ts', old_string: words(random, 40), new_string: words(random, 40) },
  }),
];

/** What a generator's `rest` is given for one turn: where to push its messages, the random source, the turn, the seed. */
interface Turn {
  push: (message: MessageInit) => void;
  random: () => number;
  turn: number;
  seed: number;
}

/**
 * A generator of sessions: `(id, seed, turns = 20, facts = [])` makes a session of `turns` turns from one
 * seeded random source, each turn opening with a user message of `userWords` random words (bounds included)
 * ending with the turn's fact, if any, and going on with what `rest` pushes.
 */
function sessionGenerator(
  userWords: readonly [number, number],
  rest: (turn: Turn) => void,
): (id: string, seed: number, turns?: number, facts?: readonly string[]) => Session {
  return (id, seed, turns = 20, facts = []) => {
    const random = createRandom(seed);
    const messages: MessageInit[] = [];
    const push = (message: MessageInit) => messages.push(message);
    for (let turn = 0; turn < turns; turn += 1) {
      const fact = facts[turn] ?? '';
      push(user(`${words(random, between(random, ...userWords))}. ${fact}`.trim()));
      rest({ push, random, turn, seed });
    }
    return makeSession(id, '2026-11-20T09:00:00Z', messages);
  };
}

/** `turns` user requests, each followed by an answer and 2–6 tool calls with results of 300 B – 16 KB. */
export const generateAgentSession = sessionGenerator([10, 40], ({ push, random, turn, seed }) => {
  push(assistant(words(random, between(random, 15, 50))));
  const calls = between(random, 2, 6);
  for (let call = 0; call < calls; call += 1) {
    const tool = TOOLS[between(random, 0, TOOLS.length - 1)]?.(random) ?? { name: 'Read', input: {} };
    const callId = `toolu_${seed}_${turn}_${call}`;
    push(assistant(toolCall(tool.name, tool.input, callId)));
    push(user(toolResult(payload(random, between(random, 300, 16_000)), callId)));
  }
  push(assistant(words(random, between(random, 20, 80))));
});

/** A plain conversation: short user turns (60–600 chars) and long markdown answers (1.5–4 KB). */
export const generateDialogue = sessionGenerator([10, 100], ({ push, random }) => {
  const paragraphs: string[] = [];
  let length = 0;
  const target = between(random, 1_500, 4_000);
  while (length < target) {
    const paragraph = `- **${words(random, 2)}**: ${words(random, between(random, 15, 40))}.`;
    paragraphs.push(paragraph);
    length += paragraph.length + 2;
  }
  push(assistant(paragraphs.join('\n\n')));
});
