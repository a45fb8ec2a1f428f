import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Space } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import { directoriesFingerprint } from '../core/daemon-identity.js';
import { evaluateGates, type GateDecision } from '../core/gates.js';
import type { SpaceInspection } from '../core/inspection.js';
import type { JobQueue } from './jobs.js';
import type { ConsolidationQueue } from './queue.js';
import type { DaemonMetrics } from './metrics.js';
import type { Config } from '../config/schema.js';
import type { InspectSpaceFunction } from '../core/inspection.js';
import type { HealthReport } from './daemon-health.js';
import { z } from 'zod';

/** The routes of the daemon's HTTP API about spaces, the queue and its jobs, and the dashboard. */

/** Body of `POST /spaces/:id/consolidate`. */
export const ConsolidateBody = z.strictObject({
  /** Skip the time and session-count gates (never the lock). */
  force: z.boolean().default(false),
  /** Compute the diff, write nothing. */
  dryRun: z.boolean().default(false),
});

/** What the space routes read (`CreateServerOptions` gives it). */
export interface SpaceRouteOptions {
  readonly getConfig: () => Config;
  readonly jobs: JobQueue;
  readonly inspectSpace: InspectSpaceFunction;
  readonly metrics: DaemonMetrics;
  readonly health: () => Promise<HealthReport>;
  readonly now: () => Date;
}

interface SpaceView {
  readonly id: string;
  readonly sessionsDir: string;
  readonly memoryDir: string;
  readonly format: string;
  readonly inspection: SpaceInspection;
  readonly gates: GateDecision;
  /** The job queued or running for this space, if any. */
  readonly currentJob: { readonly id: string; readonly state: string } | null;
}

/** /healthz, /daemon, /metrics, /spaces, /spaces/:id and POST /spaces/:id/consolidate. */
export function registerSpaceRoutes(
  app: FastifyInstance,
  options: SpaceRouteOptions,
  requireToken: boolean,
): void {
  const { jobs, metrics } = options;
  const findSpace = (id: string): Space | undefined =>
    options.getConfig().spaces.find((space) => space.id === id);

  const currentJob = async (spaceId: string): Promise<SpaceView['currentJob']> => {
    return jobs.currentJob(spaceId);
  };

  const describeSpace = async (space: Space): Promise<SpaceView> => {
    let inspection: SpaceInspection;
    try {
      inspection = await options.inspectSpace(space);
    } catch (error) {
      inspection = { spaceId: space.id, settledNew: 0, live: 0, broken: [], error: errorMessage(error) };
    }
    const config = options.getConfig();
    return {
      id: space.id,
      sessionsDir: space.sessionsDir,
      memoryDir: space.memoryDir,
      format: space.format,
      inspection,
      gates: evaluateGates({ inspection, gates: config.gates, now: options.now(), force: false }),
      currentJob: await currentJob(space.id),
    };
  };

  /** The most recent finished job of a space among the last 200 finished jobs. */
  const lastRun = async (spaceId: string): Promise<unknown> => {
    const latest = (await jobs.finished(200)).find((job) => job.spaceId === spaceId);
    if (latest === undefined) return null;
    return {
      jobId: latest.id,
      trigger: latest.trigger,
      finishedAt: latest.finishedAt,
      outcome: latest.state === 'failed' ? 'failed' : 'completed',
      failedReason: latest.failedReason,
      summary: latest.summary,
    };
  };

  app.get('/healthz', async (_request, reply) => {
    const report = await options.health();
    await reply.code(report.ok ? 200 : 503).send(report);
  });

  // Who this daemon is, so a CLI uses it only for the spaces (and directories) it really serves. Without a token
  // any local user can ask, so the directories and the config path are given only as a fingerprint the CLI
  // compares with its own; behind a token they are given in full.
  app.get('/daemon', async () => {
    const config = options.getConfig();
    return {
      service: 'dreamd',
      pid: process.pid,
      queue: jobs.kind,
      ...(requireToken ? { configSource: config.source ?? null } : {}),
      spaces: config.spaces.map(({ id, sessionsDir, memoryDir }) => ({
        id,
        directories: directoriesFingerprint(sessionsDir, memoryDir),
        ...(requireToken ? { sessionsDir, memoryDir } : {}),
      })),
    };
  });

  app.get('/metrics', async (_request, reply) => {
    const { contentType, body } = await metrics.render();
    await reply.header('content-type', contentType).send(body);
  });

  app.get('/spaces', async () => {
    const spaces: SpaceView[] = [];
    for (const space of options.getConfig().spaces) spaces.push(await describeSpace(space));
    return { spaces };
  });

  app.get<{ Params: { id: string } }>('/spaces/:id', async (request, reply) => {
    const space = findSpace(request.params.id);
    if (space === undefined) return reply.code(404).send({ error: `no space "${request.params.id}"` });
    return { ...(await describeSpace(space)), lastRun: await lastRun(space.id) };
  });

  app.post<{ Params: { id: string } }>('/spaces/:id/consolidate', async (request, reply) => {
    const space = findSpace(request.params.id);
    if (space === undefined) return reply.code(404).send({ error: `no space "${request.params.id}"` });
    const body = ConsolidateBody.safeParse(request.body ?? {});
    if (!body.success) {
      return reply.code(400).send({
        error: 'invalid body; expected {"force"?: boolean, "dryRun"?: boolean}',
        issues: body.error.issues,
      });
    }
    const result = await jobs.enqueue(
      space.id,
      { force: body.data.force, dryRun: body.data.dryRun, trigger: 'api' },
      { workers: options.getConfig().workers, now: options.now() },
    );
    if (result.status === 'duplicate') {
      const state = (await jobs.getJob(result.jobId))?.state;
      return reply.code(409).send({
        error: `space "${space.id}" already has a run ${state === 'active' ? 'running' : 'queued'} (job ${result.jobId})`,
        jobId: result.jobId,
        state,
      });
    }
    return reply.code(202).send({ jobId: result.jobId, spaceId: space.id, status: 'queued' });
  });
}

/** /queue and /jobs/:id. */
export function registerQueueRoutes(app: FastifyInstance, jobs: JobQueue): void {
  app.get('/queue', async () => {
    const [counts, failed] = await Promise.all([jobs.counts(), jobs.failed(20)]);
    return {
      queue: jobs.kind,
      counts,
      recentFailures: failed.map((job) => ({
        jobId: job.id,
        spaceId: job.spaceId,
        failedReason: job.failedReason,
        attemptsMade: job.attemptsMade,
        finishedAt: job.finishedAt,
      })),
    };
  });

  app.get<{ Params: { id: string } }>('/jobs/:id', async (request, reply) => {
    const job = await jobs.getJob(request.params.id);
    if (job === undefined)
      return reply
        .code(404)
        .send({ error: `no job "${request.params.id}" (finished jobs are kept for a bounded time)` });
    return {
      jobId: job.id,
      spaceId: job.spaceId,
      state: job.state,
      progress: job.progress,
      attemptsMade: job.attemptsMade,
      failedReason: job.failedReason,
      summary: job.summary,
    };
  });
}

/** The Bull Board dashboard at /queues over BullMQ; with the embedded queue, a 404 that says why. */
export async function registerDashboard(
  app: FastifyInstance,
  dashboardQueue: ConsolidationQueue | undefined,
): Promise<void> {
  if (dashboardQueue !== undefined) {
    const dashboard = new FastifyAdapter();
    createBullBoard({ queues: [new BullMQAdapter(dashboardQueue)], serverAdapter: dashboard });
    dashboard.setBasePath('/queues');
    await app.register(dashboard.registerPlugin(), { prefix: '/queues' });
  } else {
    // The embedded queue has no Bull Board: say so instead of a bare 404.
    const noDashboard = async (_request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      await reply.code(404).send({
        error:
          'no dashboard: this daemon runs the embedded queue (no Redis), and the Bull Board dashboard shows ' +
          'BullMQ queues. GET /queue lists its jobs; set REDIS_URL (or "redisUrl" in the config) for the dashboard.',
      });
    };
    app.get('/queues', noDashboard);
    app.get('/queues/*', noDashboard);
  }
}
