import { z } from 'zod';
import type { Config, Space } from '../config/schema.js';
import type { RunSummary } from '../core/run.js';
import { directoriesFingerprint } from '../core/daemon-identity.js';
import { DreamdError } from '../errors.js';

/**
 * The CLI's side of the daemon's HTTP API: is a daemon up, queue a run, follow a job. Used by
 * `dreamd consolidate` and `dreamd status` so that a manual run goes through the same queue (and the same
 * one-run-per-space rule) as scheduled ones, from any machine that reaches the API.
 */

const JobView = z.object({
  jobId: z.string(),
  spaceId: z.string(),
  state: z.string(),
  progress: z.unknown(),
  attemptsMade: z.number(),
  failedReason: z.string().optional(),
  summary: z.unknown().optional(),
});
export type JobView = z.infer<typeof JobView>;

/** What `GET /daemon` says: which process this is and which spaces (and directories) it serves. */
const DaemonIdentity = z.object({
  service: z.literal('dreamd'),
  pid: z.number(),
  queue: z.string(),
  /** Given only behind a token: without one, any local user may ask. */
  configSource: z.string().nullable().optional(),
  spaces: z.array(
    z.object({
      id: z.string(),
      /** A hash of the two folders (see `directoriesFingerprint`); the folders themselves only behind a token. */
      directories: z.string(),
      sessionsDir: z.string().optional(),
      memoryDir: z.string().optional(),
    }),
  ),
});
export type DaemonIdentity = z.infer<typeof DaemonIdentity>;

/** Whether the daemon at the configured address is the one to use for some spaces, and if not, why. */
export type DaemonMatch =
  | { readonly use: true; readonly identity: DaemonIdentity }
  | { readonly use: false; readonly why: string; readonly reachable: boolean };

const Enqueued = z.object({ jobId: z.string(), spaceId: z.string(), status: z.string() });
const Conflict = z.object({ error: z.string(), jobId: z.string(), state: z.string().optional() });

export interface DaemonClient {
  readonly baseUrl: string;
  /**
   * Whether the daemon at the configured address serves every one of these spaces with the same sessions and
   * memory directories. Any other answer (nothing listening, not dreamd, another project's daemon) means the
   * CLI must not use it; `why` says which.
   */
  serves(spaces: readonly Space[]): Promise<DaemonMatch>;
  /** Queues a run; `duplicate` when the space already has one queued or running (its job id is returned). */
  enqueue(
    spaceId: string,
    body: { force: boolean; dryRun: boolean },
  ): Promise<{ status: 'queued' | 'duplicate'; jobId: string }>;
  job(jobId: string): Promise<JobView | undefined>;
  /** Polls a job until it completes or fails; `onUpdate` sees each state. */
  follow(
    jobId: string,
    options: { intervalMs?: number; onUpdate?: (job: JobView) => void; signal?: AbortSignal },
  ): Promise<JobView>;
  /** GET any JSON path of the API (e.g. /spaces/shop). */
  get(path: string): Promise<unknown>;
}

export function createDaemonClient(config: Config, fetchImpl: typeof fetch = fetch): DaemonClient {
  const host =
    config.server.host === '0.0.0.0' || config.server.host === '::' ? '127.0.0.1' : config.server.host;
  const baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${config.server.port}`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (config.server.apiToken !== undefined) headers.authorization = `Bearer ${config.server.apiToken}`;

  const request = async (path: string, init: RequestInit = {}, timeoutMs = 10_000): Promise<Response> =>
    fetchImpl(`${baseUrl}${path}`, {
      ...init,
      headers,
      signal: init.signal ?? AbortSignal.timeout(timeoutMs),
    });

  const json = async (response: Response): Promise<unknown> => {
    const text = await response.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new DreamdError(
        `daemon at ${baseUrl} answered ${response.status} with non-JSON: ${text.slice(0, 200)}`,
      );
    }
  };

  const client: DaemonClient = {
    baseUrl,
    async serves(spaces) {
      let response: Response;
      try {
        response = await request('/daemon', {}, 1_500);
      } catch {
        return { use: false, reachable: false, why: `no daemon answers at ${baseUrl}` };
      }
      let body: unknown;
      try {
        body = await response.json();
      } catch {
        body = undefined;
      }
      if (response.status === 401) {
        return {
          use: false,
          reachable: true,
          why:
            `the daemon at ${baseUrl} refused the request without the right token; set DREAMD_API_TOKEN ` +
            '(or "server.apiToken") to the token it was started with',
        };
      }
      const identity = DaemonIdentity.safeParse(body);
      if (!response.ok || !identity.success) {
        return {
          use: false,
          reachable: true,
          why: `the server at ${baseUrl} is not a dreamd daemon this command can use (HTTP ${response.status})`,
        };
      }
      for (const space of spaces) {
        const served = identity.data.spaces.find((candidate) => candidate.id === space.id);
        if (
          served === undefined ||
          served.directories !== directoriesFingerprint(space.sessionsDir, space.memoryDir)
        ) {
          const { configSource } = identity.data;
          const which =
            configSource === undefined ? '' : `, config ${configSource ?? 'from the environment'}`;
          const where =
            served?.sessionsDir !== undefined && served.memoryDir !== undefined
              ? ` (${served.sessionsDir} → ${served.memoryDir})`
              : ' than this command (start the daemon with the same config, or pass --config)';
          return {
            use: false,
            reachable: true,
            why:
              `the daemon at ${baseUrl} (pid ${identity.data.pid}${which}) ` +
              (served === undefined
                ? `has no space "${space.id}"`
                : `serves space "${space.id}" from other directories${where}`),
          };
        }
      }
      return { use: true, identity: identity.data };
    },
    async enqueue(spaceId, body) {
      const response = await request(`/spaces/${encodeURIComponent(spaceId)}/consolidate`, {
        method: 'POST',
        body: JSON.stringify(body),
      });
      const payload = await json(response);
      if (response.status === 202) return { status: 'queued', jobId: Enqueued.parse(payload).jobId };
      if (response.status === 409) return { status: 'duplicate', jobId: Conflict.parse(payload).jobId };
      const message = (payload as { error?: unknown }).error;
      throw new DreamdError(
        `daemon at ${baseUrl} refused the run (${response.status}): ${typeof message === 'string' ? message : JSON.stringify(message ?? '')}`,
      );
    },
    async job(jobId) {
      const response = await request(`/jobs/${encodeURIComponent(jobId)}`);
      if (response.status === 404) return undefined;
      return JobView.parse(await json(response));
    },
    async follow(jobId, options) {
      const interval = options.intervalMs ?? 500;
      for (;;) {
        options.signal?.throwIfAborted();
        const view = await client.job(jobId);
        if (view === undefined)
          throw new DreamdError(`job ${jobId} is gone from the queue; see \`dreamd history\``);
        options.onUpdate?.(view);
        if (view.state === 'completed' || view.state === 'failed') return view;
        await new Promise((resolve) => setTimeout(resolve, interval));
      }
    },
    async get(path) {
      return json(await request(path));
    },
  };
  return client;
}

/** The run summary a completed job returned, if it looks like one. */
export function jobSummary(view: JobView): RunSummary | undefined {
  const summary = view.summary as Partial<RunSummary> | undefined;
  return summary !== undefined && typeof summary === 'object' && typeof summary.runId === 'string'
    ? (summary as RunSummary)
    : undefined;
}
