import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { FACT_DROP_REASONS, WAIT_REASONS, type RunSummary } from '../core/run.js';
import { JOB_STATES, type JobQueue } from './jobs.js';
import type { ConsolidationQueue } from './queue.js';

export const REDIS_STATES = ['up', 'down', 'refuses-writes'] as const;
export type RedisState = (typeof REDIS_STATES)[number];

export interface DaemonMetrics {
  readonly registry: Registry;
  /** Records a finished run (completed or dry run) this process ran. */
  recordRun(summary: RunSummary): void;
  /** Records a failed attempt of a job this process ran. */
  recordFailure(spaceId: string | undefined): void;
  /** Sets the settled-new-sessions gauge of a space (from the scheduler's inspections). */
  setPendingSessions(spaceId: string, count: number): void;
  /** Drops the series of spaces no longer configured. */
  retainSpaces(spaceIds: readonly string[]): void;
  /** The registry's text, plus BullMQ's own Prometheus export of the queue when there is Redis. */
  render(): Promise<{ contentType: string; body: string }>;
}

/** The gauges read at scrape time: Redis as this process sees it (when asked for), and the queue's jobs by state. */
function registerScrapeGauges(
  registry: Registry,
  jobs: JobQueue,
  redisState: (() => Promise<RedisState>) | undefined,
): void {
  if (redisState !== undefined) {
    new Gauge({
      name: 'dreamd_redis_state',
      help: 'Redis as this process sees it: 1 for the current state (up, down, refuses-writes), 0 for the others',
      labelNames: ['state'] as const,
      registers: [registry],
      async collect() {
        const current = await redisState();
        for (const state of REDIS_STATES) this.set({ state }, state === current ? 1 : 0);
      },
    });
  }
  new Gauge({
    name: 'dreamd_jobs',
    help: 'Consolidation jobs in the queue by state (all machines on Redis; this process with the embedded queue)',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const counts = await jobs.counts();
      for (const state of JOB_STATES) this.set({ state }, counts[state] ?? 0);
    },
  });
}

/** A counter of the registry with a `space` label. */
function spaceCounter(registry: Registry, name: string, help: string): Counter<'space'> {
  return new Counter({ name, help, labelNames: ['space'] as const, registers: [registry] });
}

/** The metrics of the runs this process ran, by space, registered in this order. */
function createRunMetrics(registry: Registry) {
  return {
    duration: new Histogram({
      name: 'dreamd_run_duration_seconds',
      help: 'Duration of consolidation runs, by space and status',
      labelNames: ['space', 'status'] as const,
      // Runs take seconds (nothing new) to tens of minutes (a backlog at maxCallsPerRun model calls).
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1200, 2400],
      registers: [registry],
    }),
    tokens: new Counter({
      name: 'dreamd_model_tokens_total',
      help: 'Model tokens used by consolidation runs, by space and kind (input, output, cache_read, cache_write)',
      labelNames: ['space', 'kind'] as const,
      registers: [registry],
    }),
    cost: spaceCounter(
      registry,
      'dreamd_model_cost_usd_total',
      'USD spent on model calls by consolidation runs at list price, by space (runs with a known price)',
    ),
    factsAdded: spaceCounter(registry, 'dreamd_facts_added_total', 'Facts added to memory'),
    factsSuperseded: spaceCounter(
      registry,
      'dreamd_facts_superseded_total',
      'Facts superseded by newer ones',
    ),
    factsQuarantined: spaceCounter(
      registry,
      'dreamd_facts_quarantined_total',
      'Facts quarantined (contradictory or unsafe) instead of written',
    ),
    failures: spaceCounter(
      registry,
      'dreamd_run_failures_total',
      'Failed attempts of consolidation jobs run by this process',
    ),
    pending: new Gauge({
      name: 'dreamd_pending_sessions',
      help: 'Settled sessions not consolidated yet, by space (as of the last scheduler tick or the last run of the space)',
      labelNames: ['space'] as const,
      registers: [registry],
    }),
    leftWaiting: new Counter({
      name: 'dreamd_sessions_left_waiting_total',
      help: 'Sessions a run was due to consolidate but left waiting, by space and reason (lock-lost, output-limit, refusal, answer-dropped, monthly-budget, call-budget)',
      labelNames: ['space', 'reason'] as const,
      registers: [registry],
    }),
    waiting: new Gauge({
      name: 'dreamd_sessions_waiting',
      help: 'Sessions the last run of the space left waiting, by reason (0 once a run consolidates them)',
      labelNames: ['space', 'reason'] as const,
      registers: [registry],
    }),
    factsDropped: new Counter({
      name: 'dreamd_facts_dropped_total',
      help: "Facts of the model's answers dropped before reconcile, by space and reason (schema, fact-too-large, answer-fact-limit, session-fact-limit)",
      labelNames: ['space', 'reason'] as const,
      registers: [registry],
    }),
  };
}

type RunMetrics = ReturnType<typeof createRunMetrics>;

/** Adds a finished run to the run metrics of its space. */
function recordRun(metrics: RunMetrics, summary: RunSummary): void {
  const { duration, tokens, cost, leftWaiting, waiting, factsDropped } = metrics;
  const space = summary.spaceId;
  duration.observe({ space, status: summary.status }, summary.durationMs / 1000);
  tokens.inc({ space, kind: 'input' }, summary.usage.inputTokens);
  tokens.inc({ space, kind: 'output' }, summary.usage.outputTokens);
  tokens.inc({ space, kind: 'cache_read' }, summary.usage.cacheReadTokens);
  tokens.inc({ space, kind: 'cache_write' }, summary.usage.cacheWriteTokens);
  if (summary.costUsd !== undefined) cost.inc({ space }, summary.costUsd);
  // A lock-lost run reports what it would have consolidated as waiting; a dry run waits for nothing.
  if (summary.status !== 'dry-run') {
    const byReason = new Map<string, number>(WAIT_REASONS.map((reason) => [reason, 0]));
    for (const entry of summary.unconsolidated ?? [])
      byReason.set(entry.reason, (byReason.get(entry.reason) ?? 0) + 1);
    for (const [reason, count] of byReason) {
      if (count > 0) leftWaiting.inc({ space, reason }, count);
      waiting.set({ space, reason }, count);
    }
  }
  for (const [reason, count] of Object.entries(summary.factsDropped ?? {}))
    if (count > 0) factsDropped.inc({ space, reason }, count);
  if (summary.status !== 'completed') return; // a dry run or a skipped run changed nothing
  metrics.factsAdded.inc({ space }, summary.added);
  metrics.factsSuperseded.inc({ space }, summary.superseded);
  metrics.factsQuarantined.inc({ space }, summary.quarantined);
}

/** Removes every series of a space from the run metrics. */
function removeSpace(metrics: RunMetrics, space: string): void {
  const perSpace = [
    metrics.cost,
    metrics.factsAdded,
    metrics.factsSuperseded,
    metrics.factsQuarantined,
    metrics.failures,
    metrics.pending,
  ];
  for (const metric of perSpace) metric.remove({ space });
  for (const reason of WAIT_REASONS) {
    metrics.leftWaiting.remove({ space, reason });
    metrics.waiting.remove({ space, reason });
  }
  for (const reason of FACT_DROP_REASONS) metrics.factsDropped.remove({ space, reason });
  for (const kind of ['input', 'output', 'cache_read', 'cache_write']) metrics.tokens.remove({ space, kind });
  for (const status of ['completed', 'skipped', 'dry-run', 'lock-lost', 'proposed'])
    metrics.duration.remove({ space, status });
}

/**
 * Prometheus metrics of one daemon, on their own registry (never prom-client's global one, so two daemons in one
 * process, as in the tests, do not collide). Run metrics count the runs of the workers in this process; queue
 * metrics (`dreamd_jobs`, `bullmq_*`) are read from Redis at scrape time and cover every machine.
 */
export function createMetrics(
  jobs: JobQueue,
  bullQueue?: ConsolidationQueue,
  /** Asked at scrape time: whether Redis answers and takes writes (the probe's write check). */
  redisState?: () => Promise<RedisState>,
): DaemonMetrics {
  const registry = new Registry();
  // process_* and nodejs_* (CPU, memory, handles, event-loop lag) beside dreamd's own.
  collectDefaultMetrics({ register: registry });
  registerScrapeGauges(registry, jobs, redisState);
  const metrics = createRunMetrics(registry);
  const seenSpaces = new Set<string>();

  return {
    registry,
    recordRun(summary) {
      seenSpaces.add(summary.spaceId);
      recordRun(metrics, summary);
    },
    recordFailure(spaceId) {
      const space = spaceId ?? 'unknown';
      seenSpaces.add(space);
      metrics.failures.inc({ space });
    },
    setPendingSessions(spaceId, count) {
      seenSpaces.add(spaceId);
      metrics.pending.set({ space: spaceId }, count);
    },
    retainSpaces(spaceIds) {
      const keep = new Set(spaceIds);
      for (const space of seenSpaces) {
        if (keep.has(space)) continue;
        seenSpaces.delete(space);
        removeSpace(metrics, space);
      }
    },
    async render() {
      const [own, bullmq] = await Promise.all([
        registry.metrics(),
        bullQueue !== undefined ? bullQueue.exportPrometheusMetrics() : Promise.resolve(''),
      ]);
      return { contentType: registry.contentType, body: exposition(own, bullmq) };
    },
  };
}

/**
 * One exposition text of dreamd's registry and BullMQ's export, in the form strict parsers take: no blank
 * lines, label pairs without spaces (BullMQ writes `{queue="x", state="y"}`), `NaN` spelt so (prom-client writes
 * `Nan` for an event-loop lag not measured yet), one final newline.
 */
export function exposition(...parts: readonly string[]): string {
  const lines = parts
    .flatMap((part) => part.split('\n'))
    .filter((line) => line.trim() !== '')
    .map((line) => (line.startsWith('#') ? line : tightenLabels(line).replace(/ Nan$/, ' NaN')));
  return `${lines.join('\n')}\n`;
}

/** A sample line with the blanks after its label pairs' commas removed (values in quotes kept as they are). */
function tightenLabels(line: string): string {
  const open = line.indexOf('{');
  if (open === -1) return line;
  let out = line.slice(0, open + 1);
  let quoted = false;
  for (let i = open + 1; i < line.length; i++) {
    const char = line[i]!;
    if (quoted) {
      out += char;
      if (char === '\\') out += line[++i] ?? '';
      else if (char === '"') quoted = false;
      continue;
    }
    if (char === '"') quoted = true;
    if (char === '}') return out + line.slice(i);
    if (char === ' ' || char === '\t') continue;
    out += char;
  }
  return out;
}
