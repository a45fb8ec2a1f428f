import { timingSafeEqual } from 'node:crypto';
import { createServer as createNetServer } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Config, Space } from '../config/schema.js';
import { isLoopback } from '../config/load.js';
import { ConfigError, errorMessage } from '../errors.js';
import { directoriesFingerprint } from '../core/daemon-identity.js';
import { evaluateGates, type GateDecision } from '../core/gates.js';
import type { InspectSpaceFunction, SpaceInspection } from '../core/inspection.js';
import type { DaemonMetrics } from './metrics.js';
import type { JobQueue } from './jobs.js';
import type { ConsolidationQueue } from './queue.js';
import { checkRequestOrigin } from './request-origin.js';
import { registerPage } from './page.js';
import { explainRefusedWrite } from './redis-probe.js';

/** How long a stop lets requests in flight finish before it closes every connection (see `close`). */
const CLOSE_GRACE_MS = 2_000;

/** An error of a Redis command that says Redis refuses writes or cannot be reached. */
function isRedisUnavailable(message: string): boolean {
  return /^(READONLY|OOM|MISCONF|LOADING)\b|ECONNREFUSED|Connection is closed|Stream isn't writeable|Command timed out/.test(
    message,
  );
}

/** What /healthz reports. `ok` is false (HTTP 503) when Redis is down or this process's workers stopped. */
export interface HealthReport {
  readonly ok: boolean;
  /** `redis`: BullMQ on Redis; `embedded`: the in-process queue (no Redis). */
  readonly queue: 'redis' | 'embedded';
  /**
   * `refuses-writes`: Redis answers but no job can be taken or finished (read-only replica, out of memory under
   * `noeviction`, a failed snapshot); `reason` says which and what to do. `absent` with the embedded queue.
   */
  readonly redis: 'up' | 'down' | 'refuses-writes' | 'absent';
  /** Why Redis is not `up`, when it is not. */
  readonly reason?: string;
  /**
   * `absent` when this process runs no workers (`dreamd scheduler`); `stopping` once a shutdown began: they take
   * no new job and finish the ones they run.
   */
  readonly workers: 'running' | 'stopping' | 'stopped' | 'absent';
  readonly scheduler: 'started' | 'stopped' | 'absent';
}

/** Body of `POST /spaces/:id/consolidate`. */
export const ConsolidateBody = z.strictObject({
  /** Skip the time and session-count gates (never the lock). */
  force: z.boolean().default(false),
  /** Compute the diff, write nothing. */
  dryRun: z.boolean().default(false),
});

export interface CreateServerOptions {
  /** The current config (it changes on reload). */
  readonly getConfig: () => Config;
  /** The jobs: BullMQ on Redis, or the embedded queue. */
  readonly jobs: JobQueue;
  /** The BullMQ queue behind `jobs`, for the Bull Board dashboard at /queues; none with the embedded queue. */
  readonly dashboardQueue?: ConsolidationQueue | undefined;
  readonly inspectSpace: InspectSpaceFunction;
  readonly metrics: DaemonMetrics;
  readonly health: () => Promise<HealthReport>;
  readonly now: () => Date;
  readonly logger: Logger;
}

export interface DaemonServer {
  readonly app: FastifyInstance;
  /** Listens on config.server host:port; resolves with the address. */
  listen(): Promise<string>;
  close(): Promise<void>;
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

/** A clear error for a port that cannot be bound, naming the setting to change; undefined for other errors. */
function explainListenError(error: unknown, host: string, port: number): ConfigError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE') {
    return new ConfigError(
      `port ${port} on ${host} is already in use (another dreamd, or another program): stop it, or give this ` +
        'daemon another port with DREAMD_PORT (or "server.port" in the config)',
      'server.port',
      { cause: error },
    );
  }
  if (code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    return new ConfigError(
      `cannot listen on ${host}:${port} (${String(code)}): choose a port above 1023 with DREAMD_PORT and a host ` +
        'this machine has with DREAMD_HOST (or "server.port" and "server.host" in the config)',
      'server.port',
      { cause: error },
    );
  }
  return undefined;
}

/**
 * Checks that the API's port can be bound before the daemon does anything else, so a busy port stops start-up
 * at once with the setting to change, not after a first consolidation has run. Port 0 (any free port) passes.
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createNetServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ host, port, exclusive: true }, () => resolve());
    });
  } catch (error) {
    throw explainListenError(error, host, port) ?? error;
  } finally {
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  }
}

/** The token of `Authorization: Bearer <token>`, or the password of `Authorization: Basic <user:token>`. */
function presentedToken(header: string): string | undefined {
  const bearer = /^Bearer (.+)$/.exec(header);
  if (bearer !== null) return bearer[1];
  const basic = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header);
  if (basic === null) return undefined;
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? undefined : decoded.slice(colon + 1);
}

function tokensMatch(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The daemon's HTTP API (fastify): /healthz, /metrics, /spaces, /spaces/:id, POST /spaces/:id/consolidate, the
 * page to decide on proposals at /page (with /proposals and POST /spaces/:id/proposals/:run/accept|reject) and the
 * Bull Board dashboard at /queues. With a token configured (server.apiToken, DREAMD_API_TOKEN), every route but
 * /healthz requires `Authorization: Bearer <token>`, or basic auth with the token as the password (any user
 * name), which is how a browser opens the dashboard; on every host, loopback included. A non-loopback host
 * requires a token; loopback without one is open to local clients. Without a token, a request whose `Host` is
 * not a loopback name is answered 421 (DNS rebinding); a state-changing request a browser sent from another
 * origin is answered 403, token or not (see `request-origin.ts`).
 */
export async function createServer(options: CreateServerOptions): Promise<DaemonServer> {
  const { jobs, metrics, logger } = options;
  const initial = options.getConfig();
  const apiToken = initial.server.apiToken;
  // A configured token guards the API on every host, loopback included: any local user, and any program of
  // theirs, reaches 127.0.0.1, so a token set for loopback that loopback did not ask for would protect nothing.
  const requireToken = apiToken !== undefined;
  if (!isLoopback(initial.server.host) && apiToken === undefined) {
    throw new ConfigError(
      `server.host ${initial.server.host} is not loopback; set DREAMD_API_TOKEN (16+ characters) to protect the API`,
      'server.apiToken',
    );
  }

  const app: FastifyInstance = Fastify({
    // Typed as fastify's base logger so the instance keeps fastify's default logger type.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
    loggerInstance: logger.child({ component: 'http' }) as FastifyBaseLogger,
    // Requests are not logged one by one: /metrics and /healthz are scraped every few seconds.
    logController: new LogController({ disableRequestLogging: true }),
  });

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const origin = checkRequestOrigin(request.method, request.headers, { tokenRequired: requireToken });
    if (!origin.allowed) {
      await reply.code(origin.status).send({ error: origin.error });
      return;
    }
    if (apiToken === undefined || request.url === '/healthz') return;
    const given = presentedToken(request.headers.authorization ?? '');
    if (given === undefined || !tokensMatch(given, apiToken)) {
      // A browser cannot send a bearer header: for the dashboard, ask for basic auth (any user name, the
      // token as the password), which the browser prompts for and then sends with every request.
      const dashboard =
        request.url === '/queues' ||
        request.url.startsWith('/queues/') ||
        ['/page', '/page.js', '/page.css'].includes(request.url);
      await reply
        .code(401)
        .header('www-authenticate', dashboard ? 'Basic realm="dreamd", charset="UTF-8"' : 'Bearer')
        .send({
          error:
            'missing or wrong token; send Authorization: Bearer <DREAMD_API_TOKEN> (a browser: any user name, the token as the password)',
        });
    }
  });

  app.setErrorHandler(async (error: unknown, request, reply) => {
    const status =
      typeof error === 'object' &&
      error !== null &&
      'statusCode' in error &&
      typeof error.statusCode === 'number'
        ? error.statusCode
        : 500;
    const message = errorMessage(error);
    // Redis answered but refused the write, or is away: the request may succeed later, so 503 with the reason
    // (the same words /healthz gives), not a 500 with Redis's raw error.
    if (status === 500 && isRedisUnavailable(message)) {
      const reason = /^(READONLY|OOM|MISCONF|LOADING)\b/.test(message)
        ? explainRefusedWrite(message)
        : `Redis unreachable: ${message}`;
      await reply
        .code(503)
        .header('retry-after', '30')
        .send({ error: `the queue cannot take jobs now: ${reason}` });
      return;
    }
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    await reply.code(status).send({ error: message });
  });

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

  // The page to decide on proposals of approval-mode spaces, and its accept / reject routes (page.ts).
  registerPage(app, options.getConfig);

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

  if (options.dashboardQueue !== undefined) {
    const dashboard = new FastifyAdapter();
    createBullBoard({ queues: [new BullMQAdapter(options.dashboardQueue)], serverAdapter: dashboard });
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

  return {
    app,
    async listen() {
      const { host, port } = options.getConfig().server;
      try {
        return await app.listen({ host, port });
      } catch (error) {
        throw explainListenError(error, host, port) ?? error;
      }
    },
    async close() {
      // A browser with the page open holds connections that carry no request (it opens them ahead): the HTTP
      // server's close would wait minutes for their timeouts. Requests in flight get CLOSE_GRACE_MS to finish,
      // then every connection is closed.
      const force = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
      force.unref();
      try {
        await app.close();
      } finally {
        clearTimeout(force);
      }
    },
  };
}
