/**
 * Figures 3, 4 and 5: one consolidation run of five sessions against the fake Anthropic server (the real
 * SDK over HTTP, zero latency), side by side with the naive baseline of `baseline.ts`.
 *
 * 3. Characters and estimated tokens sent to the model per session, from the request bodies the fake server
 *    recorded, against the raw transcript and the baseline's prompt; and which planted facts reached the
 *    model in each (a fact counts when its text is in the prompt; the digest may add a resolved date after a
 *    relative one, "last week [week of 2026-11-16]", which is removed before looking).
 * 4. Model calls per run and per session; the baseline makes one call.
 * 5. Run overhead without model time: wall time of `consolidate` minus the time spent inside model calls,
 *    over repeated runs on fresh copies of the space.
 */
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { digestSession } from '../../src/digest/index.js';
import { readSessionFile } from '../../src/transcripts/index.js';
import { createConsolidator } from '../../src/consolidation/run.js';
import type { RunRequest } from '../../src/core/run.js';
import { createModel } from '../../src/model/index.js';
import type { ModelProvider } from '../../src/model/types.js';
import {
  startFakeAnthropicServer,
  type RecordedAnthropicRequest,
} from '../../harness/fake-anthropic-server.js';
import { sessionsInPrompt } from '../../harness/scripted-extractor.js';
import { buildBaselinePrompt } from '../baseline.js';
import type { Figure } from '../report.js';
import { benchConfig, makeTempRoot, workloadSpace } from '../setup.js';
import { percentile, tokensOf } from '../stats.js';
import { DEFAULT_WORKLOAD, writeWorkload, type GeneratedSession, type WorkloadOptions } from '../workload.js';

const SESSIONS = 5;
const FORCED: RunRequest = { force: true, dryRun: false, trigger: 'manual' };

/** Dates the digest adds after relative expressions; removed before looking for a planted fact. */
const RESOLVED_DATE = / \[(?:\d{4}-\d{2}(?:-\d{2})?|week of \d{4}-\d{2}-\d{2})\]/g;

function withoutResolvedDates(text: string): string {
  return text.replace(RESOLVED_DATE, '');
}

/** The fake model's answer: one user fact for each planted fact whose text it was sent. */
export function extractPlanted(planted: readonly string[]) {
  return (request: RecordedAnthropicRequest) => {
    const facts = sessionsInPrompt(request.prompt).flatMap((session) => {
      const text = withoutResolvedDates(session.text);
      return planted
        .filter((fact) => text.includes(fact))
        .map((fact) => ({
          type: 'user',
          title: fact.slice(0, 60),
          body: fact,
          why: null,
          howToApply: null,
          observed: session.date,
          sources: [session.id],
          replaces: [],
          confidence: null,
        }));
    });
    return { json: { facts } };
  };
}

/** A model whose calls are timed, so model time can be subtracted from a run. */
function timedModel(inner: ModelProvider): { model: ModelProvider; takeMs: () => number } {
  let spent = 0;
  const time = async <T>(call: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await call();
    } finally {
      spent += performance.now() - started;
    }
  };
  return {
    model: {
      ...inner,
      generateObject: (request) => time(() => inner.generateObject(request)),
      generateText: (request) => time(() => inner.generateText(request)),
    },
    takeMs: () => {
      const ms = spent;
      spent = 0;
      return ms;
    },
  };
}

/** Real Claude Code sessions (test/fixtures/claude-code), public Codex rollout slices (test/fixtures/codex) and the repository's example sessions. */
const REAL_TRANSCRIPTS = [
  {
    dir: fileURLToPath(new URL('../../test/fixtures/claude-code/', import.meta.url)),
    format: 'claude-code' as const,
  },
  {
    dir: fileURLToPath(new URL('../../test/fixtures/codex/', import.meta.url)),
    format: 'codex' as const,
  },
  { dir: fileURLToPath(new URL('../../sessions/', import.meta.url)), format: 'native' as const },
];

/** Digest characters over file bytes of real transcripts, by directory; directories absent are left out. */
async function realTranscriptRatios(): Promise<Record<string, string>> {
  const ratios: Record<string, string> = {};
  for (const { dir, format } of REAL_TRANSCRIPTS) {
    if (!existsSync(dir)) continue;
    const files = (await readdir(dir)).filter((file) =>
      file.endsWith(format === 'native' ? '.json' : '.jsonl'),
    );
    let raw = 0;
    let digested = 0;
    for (const file of files) {
      const { session, size } = await readSessionFile(file, {
        format,
        sessionsDir: dir,
        maxBytes: Number.MAX_SAFE_INTEGER,
      });
      raw += size;
      digested += digestSession(session).chars;
    }
    ratios[`digest / raw of ${files.length} real ${format} transcripts (${(raw / 1e3).toFixed(0)} kB)`] = (
      digested / raw
    ).toFixed(3);
  }
  return ratios;
}

async function measureSizes(kind: WorkloadOptions['kind']): Promise<{ figures: Figure[]; calls: number }> {
  const root = await makeTempRoot(`sizes-${kind}`);
  const server = await startFakeAnthropicServer();
  try {
    const generated = await writeWorkload(root.path, {
      ...DEFAULT_WORKLOAD,
      sessionsPerSpace: SESSIONS,
      kind,
    });
    const space = workloadSpace(root.path, 0);
    const planted = generated.flatMap((session) => session.plantedFacts);
    server.setDefault(extractPlanted(planted));
    const config = benchConfig(root.path, [space], server.url);
    const consolidate = createConsolidator({ config, model: createModel(config.model) });
    const summary = await consolidate(space, FORCED);
    if (summary.status !== 'completed' || summary.sessions.length !== SESSIONS) {
      throw new Error(
        `the ${kind} run did not consolidate ${SESSIONS} sessions: ${summary.status} ${summary.reason ?? ''}`,
      );
    }
    const sentChars = server.requests.reduce(
      (sum, request) => sum + request.system.length + request.prompt.length,
      0,
    );
    const transcriptChars = server.requests.reduce((sum, request) => sum + request.prompt.length, 0);
    const bodyChars = server.requests.reduce((sum, request) => sum + JSON.stringify(request.body).length, 0);
    const sent = withoutResolvedDates(server.requests.map((request) => request.prompt).join('\n'));
    const rawChars = generated.reduce((sum, session) => sum + session.json.length, 0);
    const files = (await readdir(space.sessionsDir)).sort().map((file) => join(space.sessionsDir, file));
    const baseline = await buildBaselinePrompt(files);
    const reached = planted.filter((fact) => sent.includes(fact)).length;
    const baselineReached = planted.filter((fact) => baseline.text.includes(fact)).length;
    const leakedSecrets = generated
      .flatMap((session) => session.secrets)
      .filter((secret) => sent.includes(secret)).length;

    const perSession = sentChars / SESSIONS;
    const rawPerSession = rawChars / SESSIONS;
    const baselinePerSession = baseline.text.length / SESSIONS;
    const limit = kind === 'agent' ? 0.06 : 0.5;
    const figures: Figure[] = [
      {
        key: `sent-chars-${kind}`,
        name: `Characters sent to the model a session, ${kind === 'agent' ? 'agent transcripts' : 'plain dialogue'}`,
        value: perSession,
        unit: `chars (~${tokensOf(perSession)} tokens)`,
        target: kind === 'agent' ? '≤ 0.06 × raw, never more than the baseline' : '≤ 0.5 × raw',
        ratio: perSession / rawPerSession,
        ratioOf: `× raw (${(perSession / baselinePerSession).toFixed(2)} × baseline)`,
        met: perSession / rawPerSession <= limit && (kind === 'dialogue' || perSession <= baselinePerSession),
        details: {
          'raw transcript a session (chars)': rawPerSession,
          'baseline prompt a session (chars)': baselinePerSession,
          'transcript digest alone a session (chars)': transcriptChars / SESSIONS,
          'fixed instructions a call (chars, cached by the provider)':
            (sentChars - transcriptChars) / server.requests.length,
          'request bodies a session (chars of JSON)': bodyChars / SESSIONS,
          'estimated tokens a session (sent / baseline / raw)': [
            tokensOf(perSession),
            tokensOf(baselinePerSession),
            tokensOf(rawPerSession),
          ],
          'secrets sent (of planted)': `${leakedSecrets} of ${generated.flatMap((session) => session.secrets).length}`,
          ...(kind === 'agent' ? await realTranscriptRatios() : {}),
        },
      },
      {
        key: `facts-reached-${kind}`,
        name: `Planted facts that reach the model, ${kind}`,
        value: (100 * reached) / planted.length,
        unit: `% (${reached} of ${planted.length})`,
        target: '100% (the baseline loses some)',
        ratio: baselineReached / planted.length,
        ratioOf: `baseline share (loses ${planted.length - baselineReached})`,
        met: reached === planted.length,
      },
    ];
    return { figures, calls: summary.calls };
  } finally {
    await server.close();
    await root.remove();
  }
}

export async function measurePromptSizes(log: (line: string) => void): Promise<Figure[]> {
  const figures: Figure[] = [];
  let agentCalls = 0;
  for (const kind of ['agent', 'dialogue'] as const) {
    log(`  ${kind}: one run of ${SESSIONS} sessions`);
    const result = await measureSizes(kind);
    figures.push(...result.figures);
    if (kind === 'agent') agentCalls = result.calls;
  }
  figures.push({
    key: 'model-calls',
    name: `Model calls for a run of ${SESSIONS} ordinary sessions`,
    value: agentCalls,
    unit: `calls (${(agentCalls / SESSIONS).toFixed(2)} a session)`,
    target: '≤ 2',
    ratio: agentCalls / 1,
    ratioOf: '× baseline (1 call, 0.2 a session)',
    met: agentCalls <= 2,
  });
  return figures;
}

/** Figure 5: repeated five-session runs on fresh copies of one space. */
export async function measureRunOverhead(runs: number, log: (line: string) => void): Promise<Figure[]> {
  const root = await makeTempRoot('overhead');
  const server = await startFakeAnthropicServer({ latencyMs: 0 });
  try {
    const template = join(root.path, 'template');
    const generated: GeneratedSession[] = await writeWorkload(template, {
      ...DEFAULT_WORKLOAD,
      sessionsPerSpace: SESSIONS,
    });
    server.setDefault(extractPlanted(generated.flatMap((session) => session.plantedFacts)));
    const overheads: number[] = [];
    const modelTimes: number[] = [];
    log(`  ${runs} runs`);
    for (let run = 0; run < runs; run += 1) {
      const space = workloadSpace(join(root.path, `run-${run}`), 0);
      await cp(workloadSpace(template, 0).sessionsDir, space.sessionsDir, { recursive: true });
      await mkdir(space.memoryDir, { recursive: true });
      const config = benchConfig(root.path, [space], server.url);
      const timed = timedModel(createModel(config.model));
      const consolidate = createConsolidator({ config, model: timed.model });
      const started = performance.now();
      const summary = await consolidate(space, FORCED);
      const wall = performance.now() - started;
      if (summary.status !== 'completed')
        throw new Error(`run ${run} ended ${summary.status}: ${summary.reason ?? ''}`);
      const modelMs = timed.takeMs();
      modelTimes.push(modelMs);
      overheads.push(wall - modelMs);
    }
    // The first run loads and compiles modules: reported, not counted.
    const counted = overheads.slice(1);
    const p50 = percentile(counted, 50);
    return [
      {
        key: 'run-overhead',
        name: `Run overhead without model time, ${SESSIONS} sessions (p50)`,
        value: p50,
        unit: 'ms',
        target: '≤ 50 ms median',
        ratio: p50 / 50,
        ratioOf: '× limit',
        met: p50 <= 50,
        details: {
          'p95 (ms)': percentile(counted, 95),
          'first run, cold (ms)': overheads[0] ?? Number.NaN,
          'model time a run, p50 (ms)': percentile(modelTimes.slice(1), 50),
          runs: counted.length,
        },
      },
    ];
  } finally {
    await server.close();
    await root.remove();
  }
}
