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
  'ghp_{r}{r}',
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
  secretsPerSession: 1,
  startDate: '2026-11-20T09:00:00.000Z',
};

export interface GeneratedSession {
  readonly spaceIndex: number;
  readonly id: string;
  readonly json: string;
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

/** Generates one session's native transcript. */
export function generateSession(options: WorkloadOptions, spaceIndex: number, sessionIndex: number): GeneratedSession {
  const random = createRandom(options.seed * 1_000_003 + spaceIndex * 10_007 + sessionIndex);
  const start = new Date(Date.parse(options.startDate) + sessionIndex * 3_600_000);
  const id = `s${String(spaceIndex).padStart(3, '0')}-${String(sessionIndex).padStart(5, '0')}`;
  const plantedFacts: string[] = [];
  const secrets: string[] = [];
  // Facts cycle through the templates so later sessions repeat (duplicates) and update (Lisbon → Porto) earlier ones.
  for (let index = 0; index < options.factsPerSession; index += 1) {
    const template = FACT_TEMPLATES[(sessionIndex * options.factsPerSession + index) % FACT_TEMPLATES.length]!;
    plantedFacts.push(fill(template, random, spaceIndex));
  }
  for (let index = 0; index < options.secretsPerSession; index += 1) {
    secrets.push(fill(SECRET_TEMPLATES[(sessionIndex + index) % SECRET_TEMPLATES.length]!, random, spaceIndex));
  }
  const factSlots = new Map<number, string>();
  plantedFacts.forEach((fact, index) => {
    factSlots.set(Math.floor(((index + 0.5) / plantedFacts.length) * options.messagesPerSession), fact);
  });
  const secretSlot = Math.floor(options.messagesPerSession / 3);

  const messages: unknown[] = [];
  let clock = start.getTime();
  let toolCounter = 0;
  for (let index = 0; messages.length < options.messagesPerSession; index += 1) {
    clock += 20_000 + Math.floor(random() * 40_000);
    const ts = new Date(clock).toISOString();
    const fact = factSlots.get(messages.length);
    const secret = messages.length === secretSlot ? secrets[0] : undefined;
    if (options.kind === 'agent' && index % 3 === 1 && fact === undefined) {
      toolCounter += 1;
      const tool = TOOLS[toolCounter % TOOLS.length]!;
      const toolId = `toolu_${id}_${toolCounter}`;
      messages.push({
        role: 'assistant',
        ts,
        content: [
          { type: 'text', text: `Let me check ${words(random, 6)}.` },
          { type: 'tool_use', id: toolId, name: tool, input: { command: `grep -rn "${words(random, 2)}" src/`, description: words(random, 8) } },
        ],
      });
      const body = words(random, Math.ceil(options.toolResultChars / 6)).slice(0, options.toolResultChars);
      messages.push({
        role: 'user',
        ts,
        content: [{ type: 'tool_result', tool_use_id: toolId, content: secret !== undefined ? `${body}\nDATABASE_URL=${secret}\n` : body }],
      });
      continue;
    }
    if (messages.length % 2 === 0) {
      const text = `${words(random, 12 + Math.floor(random() * 20))}. ${fact ?? ''} ${secret !== undefined ? `my key is ${secret}` : ''}`.trim();
      messages.push({ role: 'user', ts, content: text });
    } else {
      messages.push({ role: 'assistant', ts, content: `${words(random, 30 + Math.floor(random() * 40))}.` });
    }
  }
  const session = {
    id,
    startedAt: start.toISOString(),
    endedAt: new Date(clock + 1_000).toISOString(),
    agent: 'bench-agent',
    messages: messages.slice(0, options.messagesPerSession),
  };
  return { spaceIndex, id, json: JSON.stringify(session), plantedFacts, secrets };
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
