/**
 * Shared parts of the reliability suite: temporary spaces written as a real `dreamd.config.json` (so child
 * processes load the very same config), the consolidator wired to the fake model server, and the checks every
 * case makes on the memory directory afterwards.
 */
import { snapshotDirectory, fastConsolidator } from '../../support/space.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../../src/config/load.js';
import type { Config, Space } from '../../../src/config/schema.js';
import type { RunStep } from '../../../src/consolidation/run.js';
import { INDEX_LIMITS } from '../../../src/memory/index.js';
import { STAGING_DIR, listRuns, loadMemory, readLedger } from '../../../src/space/index.js';
import type { RunRequest } from '../../../src/core/run.js';
import type { ScriptedFact } from '../../../harness/scripted-extractor.js';

export const SUPPORT_DIR = dirname(fileURLToPath(import.meta.url));
export const EXAMPLE_SESSIONS_DIR = fileURLToPath(new URL('../../../sessions/', import.meta.url));
export const HOSTILE_DIR = fileURLToPath(new URL('../../fixtures/hostile/', import.meta.url));
/** The clock of every run in this suite: after all example sessions, so all are settled. */
export const NOW = new Date('2026-11-29T12:00:00Z');
export const MANUAL: RunRequest = { force: true, dryRun: false, trigger: 'manual' };

export interface SpaceSpec {
  readonly id: string;
  /** Copy the repository's seven example sessions. */
  readonly examples?: boolean;
  readonly format?: 'native' | 'claude-code';
}

const created: string[] = [];

/** Removes every workspace this test file created; call it from an afterAll. */
export function cleanUpWorkspaces(): void {
  for (const root of created.splice(0)) rmSync(root, { recursive: true, force: true });
}

export interface Workspace {
  readonly root: string;
  readonly configPath: string;
  readonly config: Config;
  space(id: string): Space;
}

/**
 * A temporary workspace with one sessions and one memory directory per space, and a config file. Model
 * retries: `maxRetries` (default 2) with millisecond backoff given by `consolidatorFor`.
 */
export function createWorkspace(options: {
  readonly modelUrl: string;
  readonly spaces: readonly SpaceSpec[];
  readonly maxRetries?: number;
  readonly timeoutMs?: number;
  readonly redisUrl?: string;
  readonly redisPrefix?: string;
  readonly concurrency?: number;
}): Workspace {
  const root = mkdtempSync(join(tmpdir(), 'dreamd-reliability-'));
  created.push(root);
  for (const spec of options.spaces) {
    const sessions = join(root, spec.id, 'sessions');
    mkdirSync(sessions, { recursive: true });
    mkdirSync(join(root, spec.id, 'memory'), { recursive: true });
    if (spec.examples === true) cpSync(EXAMPLE_SESSIONS_DIR, sessions, { recursive: true });
  }
  const file = {
    model: {
      provider: 'anthropic',
      name: 'claude-haiku-5-5',
      baseUrl: options.modelUrl,
      apiKey: 'sk-ant-test-key-not-a-secret',
      maxRetries: options.maxRetries ?? 2,
      timeoutMs: options.timeoutMs ?? 10_000,
    },
    ...(options.redisUrl === undefined ? {} : { redisUrl: options.redisUrl }),
    ...(options.redisPrefix === undefined ? {} : { redisPrefix: options.redisPrefix }),
    gates: { minHours: 24, minSessions: 1, quietMinutes: 30 },
    workers: { concurrency: options.concurrency ?? 2, attempts: 5, backoffMs: 50 },
    server: { port: 0 },
    stateDir: join(root, '.state'),
    spaces: options.spaces.map((spec) => ({
      id: spec.id,
      sessions: `./${spec.id}/sessions`,
      memory: `./${spec.id}/memory`,
      format: spec.format ?? 'native',
    })),
  };
  const configPath = join(root, 'dreamd.config.json');
  writeFileSync(configPath, `${JSON.stringify(file, null, 2)}\n`);
  const config = loadConfig({ path: configPath, env: {}, cwd: root });
  return {
    root,
    configPath,
    config,
    space(id) {
      const found = config.spaces.find((space) => space.id === id);
      if (found === undefined) throw new Error(`no space ${id}`);
      return found;
    },
  };
}

/** Config of one space's runs: the same config with the model URL of that space. */
export function configWithModel(config: Config, modelUrl: string): Config {
  return { ...config, model: { ...config.model, baseUrl: modelUrl } };
}

export function consolidatorFor(
  config: Config,
  options: { faultInjection?: (step: RunStep) => void; now?: () => Date; owner?: string } = {},
) {
  return fastConsolidator(config, {
    now: options.now ?? (() => NOW),
    ...(options.faultInjection === undefined ? {} : { faultInjection: options.faultInjection }),
    ...(options.owner === undefined ? {} : { owner: options.owner }),
  });
}

/** A native session file with these user lines (each answered by a short assistant line). */
export function writeSession(
  sessionsDir: string,
  id: string,
  userLines: readonly string[],
  options: { date?: string } = {},
): void {
  const date = options.date ?? '2026-11-20';
  const messages = userLines.flatMap((line, index) => [
    { role: 'user', ts: `${date}T10:${String(index).padStart(2, '0')}:00Z`, content: line },
    { role: 'assistant', ts: `${date}T10:${String(index).padStart(2, '0')}:30Z`, content: 'Noted.' },
  ]);
  writeFileSync(
    join(sessionsDir, `${id}.json`),
    `${JSON.stringify({ id, startedAt: `${date}T10:00:00Z`, endedAt: `${date}T11:00:00Z`, messages }, null, 2)}\n`,
  );
}

/** Distinct subjects, so reconcile never merges two planted facts as near-duplicates. */
const PLANTED_SUBJECTS: readonly (readonly [type: ScriptedFact['type'], title: string, body: string])[] = [
  ['user', 'Plays the cello', 'The user plays the cello in a community orchestra on Tuesdays'],
  ['user', 'Allergic to penicillin', 'The user is allergic to penicillin'],
  ['user', 'Dog named Biscuit', 'The user has a beagle called Biscuit'],
  ['user', 'Prefers answers in Portuguese', 'The user wants replies written in European Portuguese'],
  ['project', 'Billing service written in Rust', 'The billing microservice is implemented in Rust with axum'],
  ['project', 'Release freeze in December', 'No production deploys during the December release freeze'],
  ['project', 'Kafka for order events', 'Order events travel over a Kafka topic named orders.v2'],
  ['feedback', 'Squash merges only', 'Pull requests are merged with squash, never with merge commits'],
  ['feedback', 'Tabs for Go files', 'Go source is formatted by gofmt; never hand-align with spaces'],
  ['reference', 'Runbook on Notion', 'The on-call runbook lives at https://notion.so/acme/oncall-runbook'],
  [
    'reference',
    'Design files in Figma',
    'Checkout mockups are in Figma file https://figma.com/file/checkout-v3',
  ],
  ['user', 'Runs marathons', 'The user trains for the Berlin marathon every autumn'],
  ['project', 'Tenant ids are UUIDv7', 'Every tenant identifier is a UUIDv7 generated by the API gateway'],
  ['reference', 'Incident channel', 'Incidents are coordinated in the Slack channel #inc-war-room'],
  ['feedback', 'Explain before refactoring', 'Describe a refactor and wait for a yes before changing code'],
  ['user', 'Works from Tokyo', 'The user works from Tokyo, in Japan Standard Time'],
];

/**
 * Planted facts: session `<prefix>-N` states subject N with a unique marker word; the scripted model extracts
 * the fact when that word reached it. At most 16.
 */
export function plantedFacts(
  count: number,
  prefix = 'planted',
): { sessions: Map<string, string[]>; facts: ScriptedFact[] } {
  const sessions = new Map<string, string[]>();
  const facts: ScriptedFact[] = [];
  PLANTED_SUBJECTS.slice(0, count).forEach(([type, title, body], index) => {
    const marker = `${prefix}mark${index + 1}q`;
    sessions.set(`${prefix}-${index + 1}`, [`Please keep this in mind (${marker}): ${body}.`]);
    facts.push({ trigger: marker, type, title, body: `${body}.` });
  });
  if (facts.length < count) throw new Error(`at most ${PLANTED_SUBJECTS.length} planted facts`);
  return { sessions, facts };
}

/** Every file under a directory with its bytes (relative path → content). */
export const readTree = snapshotDirectory;

/** The memory files a person and an agent read: MEMORY.md and the topic files (not `.dreamd/`). */
export function memoryFiles(memoryDir: string): Map<string, string> {
  return new Map([...readTree(memoryDir)].filter(([path]) => !path.startsWith('.dreamd')));
}

export interface MemoryCheck {
  readonly activeTitles: string[];
  readonly ledgerSessions: string[];
  readonly runs: number;
}

/**
 * The invariants of a memory directory after any run, crash or not: every topic file parses, the index is
 * within its limits, no staging directory is left, and each active title appears once. Returns what it saw.
 */
export async function checkMemory(memoryDir: string): Promise<MemoryCheck & { problems: string[] }> {
  const problems: string[] = [];
  const memory = await loadMemory(memoryDir);
  for (const problem of memory.problems) problems.push(`${problem.file}: ${problem.reason}`);
  const index = memory.indexText ?? '';
  const lines = index.trimEnd().split('\n');
  if (lines.length > INDEX_LIMITS.maxLines) problems.push(`MEMORY.md has ${lines.length} lines`);
  if (Buffer.byteLength(index) > INDEX_LIMITS.maxBytes) problems.push('MEMORY.md is over its byte limit');
  const long = lines.find((line) => [...line].length > INDEX_LIMITS.maxLineChars);
  if (long !== undefined) problems.push(`MEMORY.md line too long: ${long}`);
  const staging = readTree(join(memoryDir, STAGING_DIR));
  if (staging.size > 0) problems.push(`staging leftovers: ${[...staging.keys()].join(', ')}`);
  const activeTitles = memory.facts.filter((fact) => fact.status === 'active').map((fact) => fact.title);
  const seen = new Set<string>();
  for (const title of activeTitles) {
    if (seen.has(title)) problems.push(`active fact twice: ${title}`);
    seen.add(title);
  }
  const ledger = await readLedger(memoryDir);
  const runs = await listRuns(memoryDir);
  return {
    problems,
    activeTitles: activeTitles.sort(),
    ledgerSessions: Object.keys(ledger.sessions).sort(),
    runs: runs.length,
  };
}

export interface ChildResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a support script with `node --import tsx` and waits for it to end. */
export async function runChild(
  script: string,
  args: readonly string[],
  timeoutMs = 60_000,
): Promise<ChildResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(SUPPORT_DIR, script), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  return { code, signal, stdout, stderr };
}

/** One message of a native session file. */
export interface SessionMessage {
  readonly role: 'user' | 'assistant';
  readonly content: unknown;
}

/** Text the agent read with a tool: the assistant's call `id` of `tool`, and its result holding `text`. */
export function readWithTool(
  text: string,
  id: string,
  tool: { readonly name: string; readonly input: unknown },
): SessionMessage[] {
  return [
    { role: 'assistant', content: [{ type: 'tool_use', id, name: tool.name, input: tool.input }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: text }] },
  ];
}

/** A native session file `id` of these messages, a minute apart from 10:00 on 2026-11-20. */
export function writeNativeSession(
  sessionsDir: string,
  id: string,
  messages: readonly SessionMessage[],
): void {
  const dated = messages.map((message, index) => ({
    ...message,
    ts: `2026-11-20T10:${String(index).padStart(2, '0')}:00Z`,
  }));
  const session = { id, startedAt: '2026-11-20T10:00:00Z', endedAt: '2026-11-20T11:00:00Z', messages: dated };
  writeFileSync(join(sessionsDir, `${id}.json`), `${JSON.stringify(session, null, 2)}\n`);
}

/**
 * What a model that copies the digest takes from one of its lines: the text after `user:` or `tool ← Name:`,
 * and whether the user said it or the agent read it; undefined for other lines.
 */
export function copiedLine(line: string): { text: string; evidence: 'user' | 'read' } | undefined {
  const user = /^(?:\[\d{4}-\d{2}-\d{2}\] )?user: (.*)$/u.exec(line);
  if (user !== null) return { text: user[1]!, evidence: 'user' };
  const read = /^tool ← [^:]+: (.*)$/u.exec(line);
  if (read !== null) return { text: read[1]!, evidence: 'read' };
  return undefined;
}
