import { createServer as createNetServer } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { isLoopback } from '../config/load.js';
import { ConfigError } from '../errors.js';
import type { InspectSpaceFunction } from '../core/inspection.js';
import type { HealthReport } from './daemon-health.js';
import type { DaemonMetrics } from './metrics.js';
import type { JobQueue } from './jobs.js';
import type { ConsolidationQueue } from './queue.js';
import { registerPage } from './page.js';
import { answerErrors, guardRequests } from './server-guards.js';
import { registerDashboard, registerQueueRoutes, registerSpaceRoutes } from './server-routes.js';

/** How long a stop lets requests in flight finish before it closes every connection (see `close`). */
const CLOSE_GRACE_MS = 2_000;

export type { HealthReport } from './daemon-health.js';
export { ConsolidateBody } from './server-routes.js';

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
  const { jobs, logger } = options;
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

  guardRequests(app, apiToken, requireToken);
  answerErrors(app);
  registerSpaceRoutes(app, options, requireToken);

  // The page to decide on proposals of approval-mode spaces, and its accept / reject routes (page.ts).
  registerPage(app, options.getConfig);
  registerQueueRoutes(app, jobs);
  await registerDashboard(app, options.dashboardQueue);

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
