/**
 * `npm run bench` (`tsx bench/run.ts`): every figure of the README's benchmark table, measured on a seeded
 * workload in temporary directories, side by side with the naive baseline; prints a table and writes
 * `bench/results.md` and `bench/results.json`. `--quick` runs small sizes (CI: under a minute) and writes
 * `bench/results-quick.*` instead, so a CI run never overwrites the committed full results. `--only <step>`
 * (repeatable: scheduler-tick, digest-throughput, consolidation, request-bytes, run-overhead, peak-memory,
 * peak-memory-real, index-build, topic-render, queue-throughput, chat, reconcile, new-facts, agent-import,
 * parallel-calls, batch-cost, discovery, cli-help) runs only those steps and prints their table without writing any file, so a partial run
 * never replaces the committed results.
 */
import { join } from 'node:path';
import { measurePromptSizes, measureRunOverhead } from './figures/consolidation.js';
import { measureAgentImport } from './figures/agent-import.js';
import { measureCliHelp } from './figures/cli-help.js';
import { measureChatFigures } from './figures/chat.js';
import { measureRequestBytes } from './figures/request-bytes.js';
import { measureDigestThroughput } from './figures/digest-throughput.js';
import { measureIndexBuild } from './figures/index-build.js';
import { measurePeakMemory } from './figures/peak-memory.js';
import { measureRealPeakMemory } from './figures/peak-memory-real.js';
import { measureQueueThroughput } from './figures/queue-throughput.js';
import { measureNewFacts } from './figures/new-facts.js';
import { measureParallelCalls } from './figures/parallel-calls.js';
import { measureBatchCost } from './figures/batch-cost.js';
import { measureDiscovery } from './figures/discovery.js';
import { measureReconcile } from './figures/reconcile.js';
import { measureSchedulerTick } from './figures/scheduler-tick.js';
import { measureTopicRender } from './figures/topic-render.js';
import { describeMachine } from './machine.js';
import { renderTable, writeResults, type Figure } from './report.js';

const quick = process.argv.includes('--quick');

/** Step keys of `--only`, in the order the steps run. */
const STEP_KEYS = [
  'scheduler-tick',
  'digest-throughput',
  'consolidation',
  'request-bytes',
  'run-overhead',
  'peak-memory',
  'peak-memory-real',
  'index-build',
  'topic-render',
  'queue-throughput',
  'chat',
  'reconcile',
  'new-facts',
  'agent-import',
  'parallel-calls',
  'batch-cost',
  'discovery',
  'cli-help',
] as const;
type StepKey = (typeof STEP_KEYS)[number];

/** The steps named by `--only` (each followed by a key), or undefined to run them all. */
function parseOnly(argv: readonly string[]): ReadonlySet<StepKey> | undefined {
  const chosen = new Set<StepKey>();
  argv.forEach((argument, index) => {
    if (argument !== '--only') return;
    const key = argv[index + 1];
    if (key === undefined || !(STEP_KEYS as readonly string[]).includes(key)) {
      console.error(`--only takes one of: ${STEP_KEYS.join(', ')}`);
      process.exit(2);
    }
    chosen.add(key as StepKey);
  });
  return chosen.size === 0 ? undefined : chosen;
}

const only = parseOnly(process.argv.slice(2));

/** Sizes of each mode. Full: the sizes the targets name; quick: the same code on small inputs. */
const SIZES = quick
  ? {
      tickSpaces: 10,
      tickSessions: 200,
      runsPerSpace: 5,
      digestSessions: 40,
      digestRounds: 3,
      overheadRuns: 8,
      queueRuns: 200,
      queueWorkers: [1, 4],
      memoryMb: 10,
      facts: 10_000,
      indexRounds: 5,
      importRounds: 5,
      helpRounds: 3,
      discoveryFolders: 300,
      discoveryRollouts: 3_000,
    }
  : {
      tickSpaces: 100,
      tickSessions: 1_000,
      runsPerSpace: 5,
      digestSessions: 200,
      digestRounds: 9,
      overheadRuns: 40,
      queueRuns: 1_000,
      queueWorkers: [1, 2, 4],
      memoryMb: 50,
      facts: 10_000,
      indexRounds: 11,
      importRounds: 15,
      helpRounds: 10,
      discoveryFolders: 5_000,
      discoveryRollouts: 50_000,
    };

const log = (line: string): void => console.log(line);

async function main(): Promise<void> {
  const started = performance.now();
  const machine = describeMachine();
  const date = new Date().toISOString();
  log(
    `dreamd benchmark (${quick ? 'quick' : 'full'}) on ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}`,
  );
  const figures: Figure[] = [];
  const step = async (
    key: StepKey,
    title: string,
    measure: () => Promise<Figure[]> | Figure[],
  ): Promise<void> => {
    if (only !== undefined && !only.has(key)) return;
    log(`${figures.length === 0 ? '' : '\n'}${title}`);
    const stepStarted = performance.now();
    figures.push(...(await measure()));
    log(`  done in ${((performance.now() - stepStarted) / 1000).toFixed(1)} s`);
  };

  await step('scheduler-tick', '1. scheduler tick', () =>
    measureSchedulerTick({
      spaces: SIZES.tickSpaces,
      sessionsPerSpace: SIZES.tickSessions,
      runsPerSpace: SIZES.runsPerSpace,
      log,
    }),
  );
  await step('digest-throughput', '2. digest throughput', () =>
    measureDigestThroughput({ sessions: SIZES.digestSessions, rounds: SIZES.digestRounds, log }),
  );
  await step('consolidation', '3–4. characters sent, planted facts, model calls', () =>
    measurePromptSizes(log),
  );
  await step(
    'request-bytes',
    '3b. request bytes with memory, real transcripts, cost, planted positions',
    () => measureRequestBytes(log),
  );
  await step('run-overhead', '5. run overhead', () => measureRunOverhead(SIZES.overheadRuns, log));
  await step('peak-memory', '7. peak memory', () => measurePeakMemory(SIZES.memoryMb, log));
  await step('peak-memory-real', '7b. peak memory of a real built dreamd consolidate', () =>
    measureRealPeakMemory(SIZES.memoryMb, log),
  );
  await step('index-build', '8. index build', () => measureIndexBuild(SIZES.facts, SIZES.indexRounds));
  await step('topic-render', '8b. topic-file render', () =>
    measureTopicRender(SIZES.facts, SIZES.indexRounds),
  );
  await step('queue-throughput', '6. queue throughput', () =>
    measureQueueThroughput({ runs: SIZES.queueRuns, workers: SIZES.queueWorkers, log }),
  );
  await step('chat', '9. dreamd chat: input per call, summariser characters', () => measureChatFigures(log));
  await step('reconcile', '9. reconcile', () => measureReconcile(10_000, 50, SIZES.indexRounds));
  await step('new-facts', '10. one run learning 10,000 new facts', () => measureNewFacts(quick ? 1 : 3, log));
  await step('agent-import', "11. the agent kit's import against the Anthropic SDK's", () =>
    measureAgentImport(SIZES.importRounds, log),
  );
  await step('parallel-calls', '12. parallel calls within a run, output tokens per call', () =>
    measureParallelCalls(log),
  );
  await step('batch-cost', '13. batch mode: cost per 1,000 sessions at list and at batch price', () =>
    measureBatchCost(log),
  );
  await step('discovery', '14. discovery over a home of Claude Code project folders and Codex rollouts', () =>
    measureDiscovery({ projectFolders: SIZES.discoveryFolders, rollouts: SIZES.discoveryRollouts, log }),
  );
  // Installed only in full mode: packing builds dist/ and the install takes a minute or two.
  await step('cli-help', '15. --help of every command, in a checkout and installed', () =>
    measureCliHelp({ rounds: SIZES.helpRounds, installed: !quick }, log),
  );

  const durationSeconds = (performance.now() - started) / 1000;
  log(`\n${renderTable(figures)}\n`);
  if (only !== undefined) {
    log(`--only: ${[...only].join(', ')} in ${durationSeconds.toFixed(0)} s; no results file written`);
    return;
  }
  const base = join(import.meta.dirname, quick ? 'results-quick' : 'results');
  await writeResults(base, { date, mode: quick ? 'quick' : 'full', machine, durationSeconds, figures });
  log(`written ${base}.md and ${base}.json in ${durationSeconds.toFixed(0)} s`);
}

await main();
