/**
 * Parallel calls within a run, on the path a user runs: a real consolidation of 20 sessions, each too long to
 * share a call with another, against the fake Anthropic server answering every request after 1 s. The same
 * run with `model.concurrency` 1 (one call after another) and 4; the figure is the ratio of their wall times,
 * whose ideal is ¼. The output tokens of each call, as the run record keeps them, are reported beside.
 */
import { isUpdateCheckRequest } from '../../harness/scripted-extractor.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Space } from '../../src/config/schema.js';
import { createConsolidator } from '../../src/consolidation/run.js';
import type { RunRequest, RunSummary } from '../../src/core/run.js';
import { createModel } from '../../src/model/index.js';
import { startFakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import type { Figure } from '../report.js';
import { benchConfig, makeTempRoot } from '../setup.js';
import { extractPlanted } from './consolidation.js';

const SESSIONS = 20;
const LATENCY_MS = 1_000;
const CONCURRENCY = 4;
const FORCED: RunRequest = { force: true, dryRun: false, trigger: 'manual' };
/** Tokens a call carries (instructions, memory list, digest, room for the answer): one session fits, two do not. */
const DIGEST_TOKENS_PER_CALL = 5000;

async function writeSessions(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const planted: string[] = [];
  for (let index = 0; index < SESSIONS; index++) {
    const fact = `Planted fact ${index}: the build cache of service ${index} lives in bucket b-${index * 7}.`;
    planted.push(fact);
    const filler = `We went through the deploy notes of service ${index} step by step, line ${index}. `;
    const messages = Array.from({ length: 12 }, (_, turn) => ({
      role: turn % 2 === 0 ? 'user' : 'assistant',
      content: turn === 0 ? `${fact} ${filler.repeat(6)}` : `${filler.repeat(6)} (turn ${turn})`,
    }));
    await writeFile(
      join(dir, `2026-11-${String(1 + index).padStart(2, '0')}-s${index}.json`),
      JSON.stringify({ startedAt: '2026-11-20T09:00:00Z', endedAt: '2026-11-20T10:00:00Z', messages }),
    );
  }
  return planted;
}

async function timedRun(concurrency: number): Promise<{ ms: number; summary: RunSummary }> {
  const root = await makeTempRoot(`parallel-${concurrency}`);
  const server = await startFakeAnthropicServer({ latencyMs: LATENCY_MS });
  try {
    const space: Space = {
      id: 'parallel',
      sessionsDir: join(root.path, 'sessions'),
      memoryDir: join(root.path, 'memory'),
      format: 'native',
    };
    const planted = await writeSessions(space.sessionsDir);
    server.setDefault(extractPlanted(planted));
    const config = benchConfig(root.path, [space], server.url);
    const model = { ...config.model, concurrency };
    const limits = { ...config.limits, digestTokensPerCall: DIGEST_TOKENS_PER_CALL, maxCallsPerRun: 100 };
    const consolidate = createConsolidator({
      config: { ...config, model, limits },
      model: createModel(model),
    });
    const started = performance.now();
    const summary = await consolidate(space, FORCED);
    const ms = performance.now() - started;
    if (summary.status !== 'completed')
      throw new Error(`run ended ${summary.status}: ${summary.reason ?? ''}`);
    // One extraction call per session (an update check, if the facts call for one, is a call of its own).
    const extractions = server.requests.filter((request) => !isUpdateCheckRequest(request)).length;
    if (extractions !== SESSIONS) {
      throw new Error(
        `the run made ${extractions} extraction calls, not one per session (${SESSIONS}): resize the sessions`,
      );
    }
    return { ms, summary };
  } finally {
    await server.close();
    await root.remove();
  }
}

export async function measureParallelCalls(log: (line: string) => void): Promise<Figure[]> {
  log(`  ${SESSIONS} independent calls, fake model ${LATENCY_MS} ms a call, one after another`);
  const sequential = await timedRun(1);
  log(`  the same with model.concurrency ${CONCURRENCY}`);
  const parallel = await timedRun(CONCURRENCY);
  const ratio = parallel.ms / sequential.ms;
  const perCall = parallel.summary.outputTokensPerCall ?? [];
  return [
    {
      key: 'parallel-calls',
      name: `A run of ${SESSIONS} independent calls, concurrency ${CONCURRENCY}, fake model ${LATENCY_MS / 1000} s a call`,
      value: parallel.ms / 1000,
      unit: 's',
      target: '≈ ¼ of one after another (≤ 0.3 ×)',
      ratio,
      ratioOf: `× one after another (${(sequential.ms / 1000).toFixed(1)} s)`,
      met: ratio <= 0.3,
    },
    {
      key: 'output-tokens-per-call',
      name: `Output tokens per extraction call (run record), ${perCall.length} calls`,
      value:
        perCall.length === 0 ? Number.NaN : perCall.reduce((sum, tokens) => sum + tokens, 0) / perCall.length,
      unit: 'tokens (mean)',
      target: 'reported',
      ratio: undefined,
      ratioOf: '',
      met: undefined,
      details: { 'output tokens of each call': perCall },
      note: 'the fake model counts 4 characters of its answer a token and does not think; model.effort sets the real one',
    },
  ];
}
