import { describe, expect, it } from 'vitest';
import type { JobQueue } from '../../src/daemon/jobs.js';
import { createMetrics } from '../../src/daemon/metrics.js';
import { makeSpace, makeSummary } from './fakes.js';

/** The run metrics of what a run left waiting and of the facts it dropped, by reason. */

// Only the job-count gauge reads the queue, and only at scrape time of the whole registry: never here.
const noJobs = {} as JobQueue;
const run = makeSummary(makeSpace('alpha'), { force: true, dryRun: false, trigger: 'manual' });

describe('metrics of sessions left waiting', () => {
  it('counts sessions left waiting and dropped facts by reason, and the gauge follows the last run', async () => {
    const metrics = createMetrics(noJobs);
    metrics.recordRun({
      ...run,
      status: 'skipped',
      unconsolidated: [
        { sessionId: 's-1', reason: 'refusal', detail: 'refused' },
        { sessionId: 's-2', reason: 'refusal', detail: 'refused' },
        { sessionId: 's-3', reason: 'output-limit', detail: 'too long' },
      ],
      factsDropped: { schema: 2, 'fact-too-large': 1 },
    });
    metrics.recordRun({
      ...run,
      status: 'lock-lost',
      unconsolidated: [{ sessionId: 's-1', reason: 'lock-lost', detail: 'taken over' }],
    });

    const total = await metrics.registry.getSingleMetricAsString('dreamd_sessions_left_waiting_total');
    expect(total).toContain('dreamd_sessions_left_waiting_total{space="alpha",reason="refusal"} 2');
    expect(total).toContain('dreamd_sessions_left_waiting_total{space="alpha",reason="output-limit"} 1');
    expect(total).toContain('dreamd_sessions_left_waiting_total{space="alpha",reason="lock-lost"} 1');
    const gauge = await metrics.registry.getSingleMetricAsString('dreamd_sessions_waiting');
    expect(gauge).toContain('dreamd_sessions_waiting{space="alpha",reason="lock-lost"} 1');
    expect(gauge).toContain('dreamd_sessions_waiting{space="alpha",reason="refusal"} 0');
    const dropped = await metrics.registry.getSingleMetricAsString('dreamd_facts_dropped_total');
    expect(dropped).toContain('dreamd_facts_dropped_total{space="alpha",reason="schema"} 2');
    expect(dropped).toContain('dreamd_facts_dropped_total{space="alpha",reason="fact-too-large"} 1');

    metrics.retainSpaces([]);
    expect(await metrics.registry.getSingleMetricAsString('dreamd_sessions_waiting')).not.toContain('alpha');
  });
});
