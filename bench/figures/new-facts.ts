/**
 * Figure: one run that learns 10,000 new facts (issue 21: reconcile and rendering stay near-linear in the
 * number of facts). A real consolidation run against the fake Anthropic server (no latency): `sessions`
 * generated sessions, each answered with `factsPerSession` distinct facts (people, places, things and an
 * item number, four types), the per-answer limit raised so every fact of a session comes in one answer and
 * the default per-session limit (200) kept; the update check answers no update and curation merges nothing, as
 * a model would of distinct facts. The details give what the run added and held back (the screen holds back a
 * `feedback` fact the user's lines do not say) and its calls by kind. Measured at 2,000 and at 10,000 facts: the ratio of the two per
 * fact shows whether the run grows linearly (1.0) or worse (a quadratic run scores about 5).
 */
import { mkdir } from 'node:fs/promises';
import { createConsolidator } from '../../src/consolidation/run.js';
import type { RunRequest } from '../../src/core/run.js';
import { createModel } from '../../src/model/index.js';
import { FACT_TYPES } from '../../src/memory/types.js';
import { startFakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { isUpdateCheckRequest, sessionsInPrompt, withCurator } from '../../harness/scripted-extractor.js';
import type { Figure } from '../report.js';
import { benchConfig, makeTempRoot, workloadSpace } from '../setup.js';
import { median } from '../stats.js';
import { DEFAULT_WORKLOAD, writeWorkload } from '../workload.js';

const FORCED: RunRequest = { force: true, dryRun: false, trigger: 'manual' };
const PEOPLE = ['Melanie', 'Caroline', 'João', 'Priya', 'Tomás', 'Aiko', 'Lena', 'Omar', 'Chen', 'Sofia'];
const PLACES = ['Lisbon', 'Porto', 'Berlin', 'Osaka', 'Madrid', 'Austin', 'Nairobi', 'Lyon'];
const THINGS = [
  'pottery class',
  'staging queue',
  'build cache',
  'coffee order',
  'release train',
  'dashboard',
];
/** Facts each session's answer carries: the default `limits.maxFactsPerSession`. */
const FACTS_PER_SESSION = 200;

function factsFor(sessionId: string, offset: number): Record<string, unknown>[] {
  return Array.from({ length: FACTS_PER_SESSION }, (_, index) => {
    const n = offset + index;
    const person = PEOPLE[n % PEOPLE.length]!;
    const place = PLACES[(n >> 3) % PLACES.length]!;
    const thing = THINGS[(n >> 5) % THINGS.length]!;
    return {
      type: FACT_TYPES[n % FACT_TYPES.length],
      title: `${person}'s ${thing} in ${place}, item ${n}`,
      body: `${person} keeps the ${thing} in ${place}; item ${n} was confirmed on 2026-11-${String(1 + (n % 28)).padStart(2, '0')}.`,
      why: null,
      howToApply: null,
      observed: '2026-11-20',
      sources: [sessionId],
      replaces: [],
      confidence: null,
      evidence: 'user',
    };
  });
}

/** Seconds of one run that learns `facts` new facts, what it added and held back, and its calls by kind. */
async function timeRun(facts: number) {
  const sessions = Math.ceil(facts / FACTS_PER_SESSION);
  const root = await makeTempRoot('new-facts');
  const server = await startFakeAnthropicServer({ latencyMs: 0 });
  try {
    await writeWorkload(root.path, {
      ...DEFAULT_WORKLOAD,
      sessionsPerSpace: sessions,
      messagesPerSession: 6,
    });
    const space = workloadSpace(root.path, 0);
    await mkdir(space.memoryDir, { recursive: true });
    const ids = new Map<string, number>();
    // Extraction answers each session's facts; the update check finds no update and curation merges nothing
    // (the facts are distinct), as a model would answer them.
    server.setDefault(
      withCurator(
        (request) =>
          isUpdateCheckRequest(request)
            ? { json: { updates: [] } }
            : {
                json: {
                  facts: sessionsInPrompt(request.prompt).flatMap((session) => {
                    if (!ids.has(session.id)) ids.set(session.id, ids.size * FACTS_PER_SESSION);
                    return factsFor(session.id, ids.get(session.id)!);
                  }),
                },
              },
        () => ({ results: [] }),
      ),
    );
    const base = benchConfig(root.path, [space], server.url);
    const config = {
      ...base,
      limits: {
        ...base.limits,
        maxFactsPerAnswer: 10_000,
        maxCallsPerRun: 1_000,
        maxAnswerChars: 64_000_000,
      },
    };
    const consolidate = createConsolidator({ config, model: createModel(config.model) });
    const started = performance.now();
    const summary = await consolidate(space, FORCED);
    const seconds = (performance.now() - started) / 1000;
    if (summary.status !== 'completed')
      throw new Error(`the run ended ${summary.status}: ${summary.reason ?? ''}`);
    return {
      seconds,
      added: summary.added,
      calls: summary.calls,
      heldBack: summary.quarantined,
      ...summary.callKinds,
    };
  } finally {
    await server.close();
    await root.remove();
  }
}

export async function measureNewFacts(rounds: number, log: (line: string) => void): Promise<Figure[]> {
  const small: number[] = [];
  const large: number[] = [];
  let outcome: Omit<Awaited<ReturnType<typeof timeRun>>, 'seconds'> | undefined;
  for (let round = 0; round < rounds; round += 1) {
    small.push((await timeRun(2_000)).seconds);
    const run = await timeRun(10_000);
    large.push(run.seconds);
    const { seconds: _seconds, ...rest } = run;
    outcome = rest;
    log(
      `  round ${round + 1}: 2,000 facts ${small.at(-1)!.toFixed(2)} s, 10,000 facts ${run.seconds.toFixed(2)} s`,
    );
  }
  const value = median(large);
  const perFact = value / 10_000 / (median(small) / 2_000);
  return [
    {
      key: 'new-facts-run',
      name: 'One run learning 10,000 new facts (fake model, no latency)',
      value,
      unit: 's',
      target: 'near-linear: per fact ≤ 1.5 × the 2,000-fact run',
      ratio: perFact,
      ratioOf: '× per-fact time of 2,000',
      met: perFact <= 1.5,
      details: { '2,000 facts (s)': median(small), ...outcome, rounds },
    },
  ];
}
