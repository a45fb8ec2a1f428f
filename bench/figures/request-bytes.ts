/**
 * What one run sends and costs, measured on the real pipeline against the fake Anthropic server (the real SDK
 * over HTTP), with every byte of the request counted: the JSON bodies as sent, so instructions, the output
 * schema, the memory list and the digest are all in.
 *
 * - Request bytes a session, agent transcripts and plain dialogue, with 0 and with 200 facts in memory, against
 *   the raw transcript bytes and the naive baseline's request (`baseline.ts`, one call, no memory list).
 * - The same on the real Claude Code transcripts inside the repository (`test/fixtures/claude-code/`).
 *   Missing fixtures fail the benchmark.
 * - Dollars per 1,000 sessions at Claude Haiku 4.5 list price, from the run's usage, interactive and at batch
 *   prices. The fake counts 4 characters a token and, like Haiku 4.5, caches only prefixes of 4,096 tokens or
 *   more.
 * - Planted facts lost by the baseline when a fact sits at every position of a message (0 to 1,950 characters
 *   in, every 50), and by dreamd's digest.
 */
import { cp, mkdir, readdir, stat, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config, Space } from '../../src/config/schema.js';
import { createConsolidator } from '../../src/consolidation/run.js';
import type { RunRequest, RunSummary } from '../../src/core/run.js';
import { costOfCall, priceFor } from '../../src/cost/index.js';
import { digestSession } from '../../src/digest/index.js';
import { loadMemory } from '../../src/space/index.js';
import { createModel } from '../../src/model/index.js';
import { readSessionFile } from '../../src/transcripts/index.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { buildBaselinePrompt } from '../baseline.js';
import type { Figure } from '../report.js';
import { benchConfig, makeTempRoot, workloadSpace } from '../setup.js';
import { DEFAULT_WORKLOAD, writeWorkload, type WorkloadOptions } from '../workload.js';
import { extractPlanted } from './consolidation.js';

const SESSIONS = 5;
const FORCED: RunRequest = { force: true, dryRun: false, trigger: 'manual' };
/** Model priced: Claude Haiku 4.5, the small model whose list price the issue asks for. */
const PRICED_MODEL = 'claude-haiku-4-5';
/** Claude Haiku 4.5's smallest cacheable prompt. */
const MIN_CACHEABLE_TOKENS = 4_096;
const MEMORY_SIZES = [0, 200] as const;

/** The fixtures of real Claude Code transcripts, inside the repository; their absence is an error. */
export function realFixturesDir(): string {
  const dir = fileURLToPath(new URL('../../test/fixtures/claude-code/', import.meta.url));
  if (!existsSync(dir)) {
    throw new Error(
      `no real Claude Code transcripts at ${dir}: restore test/fixtures/claude-code/ from git ` +
        '(the real-transcript figures cannot be measured without them)',
    );
  }
  return dir;
}

function pricedConfig(root: string, spaces: readonly Space[], url: string): Config {
  const config = benchConfig(root, spaces, url);
  return { ...config, model: { ...config.model, name: PRICED_MODEL } };
}

function bodyBytes(server: FakeAnthropicServer, from = 0): number {
  return server.requests
    .slice(from)
    .reduce((sum, request) => sum + Buffer.byteLength(JSON.stringify(request.body)), 0);
}

/** A memory of `count` distinct facts, made by a real run whose model answers with them. */
async function seedMemory(root: string, count: number): Promise<{ memoryDir: string; facts: number }> {
  const space: Space = {
    id: 'seed',
    sessionsDir: join(root, 'seed-sessions'),
    memoryDir: join(root, 'seed-memory'),
    format: 'native',
  };
  await mkdir(space.sessionsDir, { recursive: true });
  await writeFile(
    join(space.sessionsDir, 'seed.json'),
    JSON.stringify({
      startedAt: '2026-10-01T09:00:00Z',
      endedAt: '2026-10-01T10:00:00Z',
      messages: [{ role: 'user', content: 'seed' }],
    }),
  );
  const server = await startFakeAnthropicServer();
  const subjects = [
    'billing',
    'search',
    'checkout',
    'mobile app',
    'data team',
    'on-call',
    'design system',
    'payments',
    'reporting',
    'infra',
  ];
  const types = ['user', 'feedback', 'project', 'reference'] as const;
  server.setDefault({
    json: {
      facts: Array.from({ length: count }, (_, index) => ({
        type: types[index % 4],
        title: `${subjects[index % 10]} rule ${index}: ${['weekly', 'nightly', 'quarterly', 'hourly'][index % 4]} ${index * 7}`,
        body: `For ${subjects[index % 10]}, item ${index} is owned by person ${index * 13} and reviewed ${['on Mondays', 'after each release', 'by the lead', 'in the retro'][index % 4]} (code ${index * 31}).`,
        why: null,
        howToApply: null,
        observed: `2026-10-${String(1 + (index % 28)).padStart(2, '0')}`,
        sources: ['seed'],
        replaces: [],
        confidence: null,
      })),
    },
  });
  try {
    const config = benchConfig(root, [space], server.url);
    // One answer carries the whole seed: over the default per-answer and per-session limits.
    const limits = { ...config.limits, maxFactsPerAnswer: count, maxFactsPerSession: count };
    await createConsolidator({ config: { ...config, limits }, model: createModel(config.model) })(
      space,
      FORCED,
    );
  } finally {
    await server.close();
  }
  const memory = await loadMemory(space.memoryDir);
  return {
    memoryDir: space.memoryDir,
    facts: memory.facts.filter((fact) => fact.status === 'active').length,
  };
}

interface Measured {
  readonly requestBytes: number;
  readonly calls: number;
  readonly summary: RunSummary;
}

async function runOnce(root: string, space: Space, planted: readonly string[]): Promise<Measured> {
  const server = await startFakeAnthropicServer({ minCacheableTokens: MIN_CACHEABLE_TOKENS });
  server.setDefault(extractPlanted(planted));
  try {
    const config = pricedConfig(root, [space], server.url);
    const summary = await createConsolidator({ config, model: createModel(config.model) })(space, FORCED);
    if (summary.status !== 'completed')
      throw new Error(`run ended ${summary.status}: ${summary.reason ?? ''}`);
    return { requestBytes: bodyBytes(server), calls: server.requests.length, summary };
  } finally {
    await server.close();
  }
}

function dollarsPer1000(summary: RunSummary, sessions: number, batch: boolean): number {
  const price = priceFor(PRICED_MODEL)!;
  // Usage summed over the run: Haiku 4.5 has no long-context tier, so the sum prices like the calls.
  return (costOfCall(summary.usage, price, { batch }) / sessions) * 1000;
}

async function measureWorkload(
  kind: WorkloadOptions['kind'],
  seeded: { memoryDir: string; facts: number },
  log: (line: string) => void,
): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const memorySize of MEMORY_SIZES) {
    const root = await makeTempRoot(`request-${kind}-${memorySize}`);
    try {
      log(`  ${kind}, ${memorySize} facts in memory`);
      const generated = await writeWorkload(root.path, {
        ...DEFAULT_WORKLOAD,
        sessionsPerSpace: SESSIONS,
        kind,
      });
      const space = workloadSpace(root.path, 0);
      if (memorySize > 0) await cp(seeded.memoryDir, space.memoryDir, { recursive: true });
      const measured = await runOnce(
        root.path,
        space,
        generated.flatMap((session) => session.plantedFacts),
      );
      const raw = generated.reduce((sum, session) => sum + Buffer.byteLength(session.json), 0);
      const files = (await readdir(space.sessionsDir)).sort().map((file) => join(space.sessionsDir, file));
      const baseline = await buildBaselinePrompt(files);
      const baselineBytes = Buffer.byteLength(
        JSON.stringify({
          model: PRICED_MODEL,
          max_tokens: 4096,
          messages: [{ role: 'user', content: baseline.text }],
        }),
      );
      // Agent transcripts: the synthetic workload's own target. Plain dialogue: 0.5 × with empty memory,
      // 0.6 × with the memory list beside it.
      const limit = kind === 'agent' ? 0.06 : memorySize === 0 ? 0.5 : 0.6;
      const ratio = measured.requestBytes / raw;
      const name = kind === 'agent' ? 'agent transcripts' : 'plain dialogue';
      figures.push({
        key: `request-bytes-${kind}-${memorySize}`,
        name: `Request bytes a session, ${name}, ${memorySize === 0 ? 'empty memory' : `${seeded.facts} facts in memory`}`,
        value: measured.requestBytes / SESSIONS,
        unit: 'bytes',
        target: `≤ ${limit} × raw and ≤ the naive baseline`,
        ratio,
        ratioOf: `× raw (${(measured.requestBytes / baselineBytes).toFixed(2)} × baseline)`,
        met: ratio <= limit && measured.requestBytes <= baselineBytes,
        details: {
          'raw transcript a session (bytes)': raw / SESSIONS,
          'baseline request a session (bytes)': baselineBytes / SESSIONS,
          'model calls': measured.calls,
          'usage (tokens: input, output, cache read, cache write)': [
            measured.summary.usage.inputTokens,
            measured.summary.usage.outputTokens,
            measured.summary.usage.cacheReadTokens,
            measured.summary.usage.cacheWriteTokens,
          ],
        },
      });
      const interactive = dollarsPer1000(measured.summary, SESSIONS, false);
      figures.push({
        key: `cost-${kind}-${memorySize}`,
        name: `Cost per 1,000 sessions at Haiku 4.5 list price, ${name}, ${memorySize === 0 ? 'empty memory' : `${seeded.facts} facts`}`,
        value: interactive,
        unit: 'USD interactive',
        target: 'reported; halved in batch mode',
        ratio: dollarsPer1000(measured.summary, SESSIONS, true) / interactive,
        ratioOf: `× at batch prices ($${dollarsPer1000(measured.summary, SESSIONS, true).toFixed(3)})`,
        met: undefined,
        details: { 'cost of the run as recorded (USD)': measured.summary.costUsd ?? null },
        note: 'batch prices applied to the same usage; step 13 (batch-cost) measures a run in batch mode',
      });
    } finally {
      await root.remove();
    }
  }
  return figures;
}

/** Request bytes of one run over the real Claude Code fixtures, against their bytes on disk. */
async function measureRealTranscripts(log: (line: string) => void): Promise<Figure[]> {
  const fixtures = realFixturesDir();
  const names = (await readdir(fixtures)).filter((name) => name.endsWith('.jsonl'));
  if (names.length === 0)
    throw new Error(`${fixtures} holds no .jsonl transcript; the real-transcript figure needs them`);
  log(`  ${names.length} real Claude Code transcripts from ${fixtures}`);
  const root = await makeTempRoot('request-real');
  try {
    const space: Space = {
      id: 'real',
      sessionsDir: join(root.path, 'sessions'),
      memoryDir: join(root.path, 'memory'),
      format: 'claude-code',
    };
    await mkdir(space.sessionsDir, { recursive: true });
    let raw = 0;
    let digestChars = 0;
    for (const name of names) {
      await cp(join(fixtures, name), join(space.sessionsDir, name));
      // Settled: unchanged for a day (a copy is new, and a Claude Code session has no end marker).
      const dayAgo = new Date(Date.now() - 86_400_000);
      await utimes(join(space.sessionsDir, name), dayAgo, dayAgo);
      raw += (await stat(join(fixtures, name))).size;
      const { session } = await readSessionFile(name, {
        format: 'claude-code',
        sessionsDir: fixtures,
        maxBytes: Number.MAX_SAFE_INTEGER,
      });
      digestChars += digestSession(session).chars;
    }
    const measured = await runOnce(root.path, space, []);
    const ratio = measured.requestBytes / raw;
    return [
      {
        key: 'request-bytes-real',
        name: `Request bytes, ${names.length} real Claude Code transcripts (${(raw / 1e3).toFixed(0)} kB)`,
        value: measured.requestBytes,
        unit: 'bytes',
        target: '≤ 0.05 × raw',
        ratio,
        ratioOf: '× raw',
        met: ratio <= 0.05,
        details: {
          'digest alone / raw': (digestChars / raw).toFixed(3),
          'model calls': measured.calls,
          fixtures,
        },
      },
    ];
  } finally {
    await root.remove();
  }
}

/** A fact planted at every position of a long user message: what the baseline and the digest keep. */
async function measurePlantedPositions(): Promise<Figure[]> {
  const root = await makeTempRoot('positions');
  try {
    const dir = join(root.path, 'sessions');
    await mkdir(dir, { recursive: true });
    const padding =
      'the build runs on every push and the cache keeps layers warm so the second run is faster '.repeat(30);
    const planted: string[] = [];
    const files: string[] = [];
    for (let offset = 0; offset <= 1950; offset += 50) {
      const fact = `Planted fact number ${offset}: my locker code is ${offset + 1000}.`;
      planted.push(fact);
      const content = `${padding.slice(0, offset)}${fact} ${padding.slice(0, 2000 - offset)}`;
      const file = join(dir, `p${String(offset).padStart(4, '0')}.json`);
      await writeFile(
        file,
        JSON.stringify({
          startedAt: '2026-11-20T09:00:00Z',
          endedAt: '2026-11-20T10:00:00Z',
          messages: [
            { role: 'user', content },
            { role: 'assistant', content: 'Noted.' },
          ],
        }),
      );
      files.push(file);
    }
    let baselineKept = 0;
    let digestKept = 0;
    // The baseline reads five files a call: every file goes through it in groups of five.
    for (let index = 0; index < files.length; index += 5) {
      const group = files.slice(index, index + 5);
      const baseline = await buildBaselinePrompt(group);
      baselineKept += planted.slice(index, index + 5).filter((fact) => baseline.text.includes(fact)).length;
    }
    for (const [index, file] of files.entries()) {
      const { session } = await readSessionFile(file.slice(dir.length + 1), {
        format: 'native',
        sessionsDir: dir,
        maxBytes: Number.MAX_SAFE_INTEGER,
      });
      if (digestSession(session).text.includes(planted[index]!)) digestKept += 1;
    }
    return [
      {
        key: 'planted-positions',
        name: `Planted facts kept, a fact at every position of a 2,000-character message (${planted.length} positions)`,
        value: (100 * digestKept) / planted.length,
        unit: `% by dreamd's digest (${digestKept} of ${planted.length})`,
        target: '100% (the baseline loses some)',
        ratio: baselineKept / planted.length,
        ratioOf: `baseline share (loses ${planted.length - baselineKept})`,
        met: digestKept === planted.length,
      },
    ];
  } finally {
    await root.remove();
  }
}

export async function measureRequestBytes(log: (line: string) => void): Promise<Figure[]> {
  const seedRoot = await makeTempRoot('seed-memory');
  try {
    log('  seeding a memory of 200 facts');
    const seeded = await seedMemory(seedRoot.path, 200);
    const figures: Figure[] = [];
    for (const kind of ['agent', 'dialogue'] as const)
      figures.push(...(await measureWorkload(kind, seeded, log)));
    figures.push(...(await measureRealTranscripts(log)));
    figures.push(...(await measurePlantedPositions()));
    return figures;
  } finally {
    await seedRoot.remove();
  }
}
