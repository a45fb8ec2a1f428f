/**
 * Batch mode's price on the path a user runs: the same workload consolidated twice with the default model
 * (Claude Haiku 5.5), against the fake Anthropic server (the real SDK over HTTP): once synchronously (a manual
 * run) and once as a scheduled run in batch mode (`model.batch` `scheduled`, the default), through the fake
 * Message Batches endpoint. The figure is the cost per 1,000 sessions each run recorded, at list price and at
 * batch price, on agent transcripts and on plain dialogue; the ratio is batch over list. A session whose
 * later parts depend on earlier answers sends those synchronously at list price, so the ratio is 0.5 only
 * when every call was a session's first part (the details say how many were batched).
 */
import { createConsolidator } from '../../src/consolidation/run.js';
import type { RunRequest, RunSummary } from '../../src/core/run.js';
import { DEFAULT_ANTHROPIC_MODEL, createModel } from '../../src/model/index.js';
import { startFakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import type { Figure } from '../report.js';
import { benchConfig, makeTempRoot, workloadSpace } from '../setup.js';
import { DEFAULT_WORKLOAD, writeWorkload, type WorkloadOptions } from '../workload.js';
import { extractPlanted } from './consolidation.js';

const SESSIONS = 20;
const MANUAL: RunRequest = { force: true, dryRun: false, trigger: 'manual' };
const SCHEDULED: RunRequest = { force: true, dryRun: false, trigger: 'schedule' };

async function runOnce(kind: WorkloadOptions['kind'], request: RunRequest): Promise<RunSummary> {
  const root = await makeTempRoot(`batch-cost-${kind}`);
  const server = await startFakeAnthropicServer();
  try {
    const generated = await writeWorkload(root.path, {
      ...DEFAULT_WORKLOAD,
      sessionsPerSpace: SESSIONS,
      kind,
    });
    server.setDefault(extractPlanted(generated.flatMap((session) => session.plantedFacts)));
    const space = workloadSpace(root.path, 0);
    const config = benchConfig(root.path, [space], server.url);
    if (config.model.name !== DEFAULT_ANTHROPIC_MODEL)
      throw new Error(`not the default model: ${config.model.name}`);
    const model = { ...config.model, batchPollSeconds: 0.01 };
    const limits = { ...config.limits, maxCallsPerRun: 1_000 };
    const summary = await createConsolidator({
      config: { ...config, model, limits },
      model: createModel(model),
    })(space, request);
    if (summary.status !== 'completed')
      throw new Error(`run ended ${summary.status}: ${summary.reason ?? ''}`);
    if (summary.costUsd === undefined)
      throw new Error(`${config.model.name} has no price: no cost to report`);
    if (request.trigger === 'schedule' && summary.batch?.outcome !== 'collected') {
      throw new Error('the scheduled run did not go through a message batch');
    }
    return summary;
  } finally {
    await server.close();
    await root.remove();
  }
}

export async function measureBatchCost(log: (line: string) => void): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const kind of ['agent', 'dialogue'] as const) {
    log(`  ${kind}: ${SESSIONS} sessions, synchronous and batched`);
    const list = await runOnce(kind, MANUAL);
    const batched = await runOnce(kind, SCHEDULED);
    const per1000 = (summary: RunSummary): number => ((summary.costUsd ?? 0) / SESSIONS) * 1000;
    const name = kind === 'agent' ? 'agent transcripts' : 'plain dialogue';
    figures.push({
      key: `batch-cost-${kind}`,
      name: `Cost per 1,000 sessions, ${DEFAULT_ANTHROPIC_MODEL}, ${name}: list price (synchronous run) and batch mode`,
      value: per1000(list),
      unit: 'USD at list price',
      target: 'batch mode at half price',
      ratio: per1000(batched) / per1000(list),
      ratioOf: `× list in batch mode ($${per1000(batched).toFixed(4)})`,
      // Run costs are recorded to the millionth of a dollar: half price within that rounding.
      met: per1000(batched) / per1000(list) <= 0.5 + 0.001,
      details: {
        'calls (synchronous run)': list.calls,
        'calls (batched run), of which answered by the batch': [
          batched.calls,
          batched.batch?.batchedCalls ?? 0,
        ],
        'batched calls at list price (USD)': batched.batch?.listCostUsd ?? null,
        'batched calls at batch price (USD)': batched.batch?.costUsd ?? null,
      },
    });
  }
  return figures;
}
