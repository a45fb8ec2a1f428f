/**
 * Seeded workload generator for benchmarks and load tests: spaces × sessions × messages, agent transcripts
 * with tool calls and long tool results, plain dialogue, planted facts (with duplicates, updates and
 * contradictions across sessions) and planted secrets. Same seed, same bytes.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** mulberry32: a tiny, fast, seeded PRNG (32-bit state) — good enough for workloads, not for crypto. */
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

const FILLER_WORDS =
  'the build runs on every push and the cache keeps layers warm so the second run is faster than the first one we saw yesterday in staging while the queue drained slowly'.split(
    ' ',
  );
const TOOLS = ['Bash', 'Read', 'Grep', 'Edit', 'WebFetch'] as const;
/** Characters of the log a user pastes before every second planted fact. */
export const PASTED_LOG_CHARS = 800;

/** Facts a user states in passing; `{n}` makes each space's version distinct. */
const FACT_TEMPLATES = [
  'By the way, I do not eat spicy food, keep that in mind for lunch orders {n}.',
  'For the record, my usual coffee is an oat flat white with one sugar {n}.',
  'Please always write dates as ISO 8601 in reports for team {n}, it avoids confusion with the US office.',
  'We decided to move service {n} from MySQL to Postgres 17 because of the JSONB queries.',
  'The on-call dashboard for space {n} lives at https://grafana.example.com/d/oncall-{n}.',
  'I live in Lisbon, Rua das Flores {n}.',
  'Update: I moved to Porto, Avenida da Boavista {n}, last week.',
  'My preferred language for scripts is Python 3.12 with uv, project {n}.',
];

const SECRET_TEMPLATES = [
  'sk-ant-api03-{r}{r}{r}AA',
  'AKIA{R}',
  'ghp_{r}{r}{r}',
  'postgres://admin:S3cretPass{n}@db.internal:5432/shop',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLXtufSJ9.{r}{r}',
];

export interface WorkloadOptions {
  readonly seed: number;
  readonly spaces: number;
  readonly sessionsPerSpace: number;
  /** Messages per session (user + assistant turns, tool calls counted as messages). */
  readonly messagesPerSession: number;
  /** `agent`: tool calls with long results; `dialogue`: plain conversation. */
  readonly kind: 'agent' | 'dialogue';
  /** Characters of each tool result (agent kind). */
  readonly toolResultChars: number;
  /** Planted facts per session (0 for filler-only sessions). */
  readonly factsPerSession: number;
  readonly secretsPerSession: number;
  /** ISO date of the first session; each next session is an hour later. */
  readonly startDate: string;
}

export const DEFAULT_WORKLOAD: WorkloadOptions = {
  seed: 42,
  spaces: 1,
  sessionsPerSpace: 5,
  messagesPerSession: 40,
  kind: 'agent',
  toolResultChars: 4_000,
  factsPerSession: 2,
  secretsPerSession: 2,
  startDate: '2026-11-20T09:00:00.000Z',
};

export interface GeneratedSession {
  readonly spaceIndex: number;
  readonly id: string;
  readonly json: string;
  /** Messages in the transcript (a tool call and its result may take it one past `messagesPerSession`). */
  readonly messageCount: number;
  readonly plantedFacts: readonly string[];
  readonly secrets: readonly string[];
}

function words(random: () => number, count: number): string {
  const out: string[] = [];
  for (let index = 0; index < count; index += 1) {
    out.push(FILLER_WORDS[Math.floor(random() * FILLER_WORDS.length)]!);
  }
  return out.join(' ');
}

function token(random: () => number, length: number, alphabet: string): string {
  let out = '';
  for (let index = 0; index < length; index += 1) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
}

function fill(template: string, random: () => number, n: number): string {
  return template
    .replaceAll('{n}', String(n))
    .replaceAll('{r}', () => token(random, 12, 'abcdefghijklmnopqrstuvwxyz0123456789'))
    .replaceAll('{R}', () => token(random, 16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'));
}

/** The id (and file stem) of a generated session: `s003-00042`. */
export function sessionIdOf(spaceIndex: number, sessionIndex: number): string {
  return `s${String(spaceIndex).padStart(3, '0')}-${String(sessionIndex).padStart(5, '0')}`;
}

/** Generates one session's native transcript. */
export function generateSession(
  options: WorkloadOptions,
  spaceIndex: number,
  sessionIndex: number,
): GeneratedSession {
  const random = createRandom(options.seed * 1_000_003 + spaceIndex * 10_007 + sessionIndex);
  const start = new Date(Date.parse(options.startDate) + sessionIndex * 3_600_000);
  const id = sessionIdOf(spaceIndex, sessionIndex);
  const plantedFacts: string[] = [];
  const secrets: string[] = [];
  // Facts cycle through the templates so later sessions repeat (duplicates) and update (Lisbon → Porto) earlier ones.
  for (let index = 0; index < options.factsPerSession; index += 1) {
    const template =
      FACT_TEMPLATES[(sessionIndex * options.factsPerSession + index) % FACT_TEMPLATES.length]!;
    plantedFacts.push(fill(template, random, spaceIndex));
  }
  for (let index = 0; index < options.secretsPerSession; index += 1) {
    secrets.push(
      fill(SECRET_TEMPLATES[(sessionIndex + index) % SECRET_TEMPLATES.length]!, random, spaceIndex),
    );
  }
  // Each fact and the secret are due at a message slot, and written in the first user text turn at or after
  // it (tool turns wait while something is due). Every second fact follows a pasted log of
  // PASTED_LOG_CHARS in the same message, as when a user pastes output and then mentions something: the
  // naive baseline, which keeps 500 characters a message, loses those.
  const due: { slot: number; text: string; kind: 'fact' | 'secret'; pasted: boolean }[] = plantedFacts.map(
    (fact, index) => ({
      slot: Math.floor(((index + 0.5) / plantedFacts.length) * (options.messagesPerSession - 4)),
      text: fact,
      kind: 'fact' as const,
      pasted: index % 2 === 1,
    }),
  );
  if (secrets[0] !== undefined)
    due.push({
      slot: Math.floor(options.messagesPerSession / 3),
      text: secrets[0],
      kind: 'secret',
      pasted: false,
    });

  const messages: unknown[] = [];
  let clock = start.getTime();
  let toolCounter = 0;
  for (let index = 0; messages.length < options.messagesPerSession; index += 1) {
    clock += 20_000 + Math.floor(random() * 40_000);
    const ts = new Date(clock).toISOString();
    const isDue = due.some((item) => item.slot <= messages.length);
    if (options.kind === 'agent' && index % 3 === 1 && !isDue) {
      toolCounter += 1;
      const tool = TOOLS[toolCounter % TOOLS.length]!;
      const toolId = `toolu_${id}_${toolCounter}`;
      messages.push({
        role: 'assistant',
        ts,
        content: [
          { type: 'text', text: `Let me check ${words(random, 6)}.` },
          {
            type: 'tool_use',
            id: toolId,
            name: tool,
            input: { command: `grep -rn "${words(random, 2)}" src/`, description: words(random, 8) },
          },
        ],
      });
      const body = words(random, Math.ceil(options.toolResultChars / 6)).slice(0, options.toolResultChars);
      // Tool output leaks a secret too: the environment of a failing command.
      const leaked = toolCounter === 2 && secrets[1] !== undefined ? `\nDATABASE_URL=${secrets[1]}\n` : '';
      messages.push({
        role: 'user',
        ts,
        content: [{ type: 'tool_result', tool_use_id: toolId, content: `${body}${leaked}` }],
      });
      continue;
    }
    if (messages.length % 2 === 0 || isDue) {
      const now = due.filter((item) => item.slot <= messages.length);
      for (const item of now) due.splice(due.indexOf(item), 1);
      const pieces = [`${words(random, 12 + Math.floor(random() * 20))}.`];
      for (const item of now) {
        if (item.pasted)
          pieces.push(
            `Here is the log:\n${words(random, Math.ceil(PASTED_LOG_CHARS / 6)).slice(0, PASTED_LOG_CHARS)}\n`,
          );
        pieces.push(item.kind === 'secret' ? `my key is ${item.text}` : item.text);
      }
      messages.push({ role: 'user', ts, content: pieces.join(' ') });
    } else {
      // A coding agent's own words between tool calls are short (the real Claude Code fixtures: median 142 characters);
      // a chat model's answer in plain dialogue runs to a few paragraphs (80–320 words here).
      const answerWords =
        options.kind === 'agent' ? 20 + Math.floor(random() * 30) : 80 + Math.floor(random() * 240);
      messages.push({ role: 'assistant', ts, content: `${words(random, answerWords)}.` });
    }
  }
  const session = {
    id,
    startedAt: start.toISOString(),
    endedAt: new Date(clock + 1_000).toISOString(),
    agent: 'bench-agent',
    messages,
  };
  return {
    spaceIndex,
    id,
    json: JSON.stringify(session),
    messageCount: messages.length,
    plantedFacts,
    secrets,
  };
}

/** Writes a workload under `root/space-NNN/sessions/`; returns the sessions (with their planted facts). */
export async function writeWorkload(root: string, options: WorkloadOptions): Promise<GeneratedSession[]> {
  const all: GeneratedSession[] = [];
  for (let space = 0; space < options.spaces; space += 1) {
    const directory = join(root, `space-${String(space).padStart(3, '0')}`, 'sessions');
    await mkdir(directory, { recursive: true });
    await mkdir(join(root, `space-${String(space).padStart(3, '0')}`, 'memory'), { recursive: true });
    for (let session = 0; session < options.sessionsPerSpace; session += 1) {
      const generated = generateSession(options, space, session);
      await writeFile(join(directory, `${generated.id}.json`), generated.json);
      all.push(generated);
    }
  }
  return all;
}

/**
 * The same session as Claude Code would write it: one JSON line per message (`type`, `message`,
 * `timestamp`, `sessionId`, `uuid`, `parentUuid`), for the streamed-reader figures.
 */
export function toClaudeCodeJsonl(generated: GeneratedSession): string {
  const session = JSON.parse(generated.json) as {
    messages: { role: string; ts: string; content: unknown }[];
  };
  const lines: string[] = [];
  let parent: string | null = null;
  session.messages.forEach((message, index) => {
    const uuid = `${generated.id}-${String(index).padStart(6, '0')}`;
    lines.push(
      JSON.stringify({
        type: message.role,
        message: { role: message.role, content: message.content },
        timestamp: message.ts,
        sessionId: generated.id,
        uuid,
        parentUuid: parent,
        isSidechain: false,
      }),
    );
    parent = uuid;
  });
  return `${lines.join('\n')}\n`;
}
