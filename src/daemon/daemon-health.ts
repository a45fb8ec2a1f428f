import type { EmbeddedQueue } from './embedded-queue.js';
import type { RedisProbe } from './redis-probe.js';
import type { Scheduler } from './scheduler.js';
import type { WorkerPool } from './worker-pool.js';

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

/** The parts of a daemon its health is read from; each absent until started. */
export interface HealthParts {
  readonly embedded?: EmbeddedQueue | undefined;
  readonly probe?: RedisProbe | undefined;
  readonly pool?: WorkerPool | undefined;
  readonly scheduler?: Scheduler | undefined;
}

/** What `/health` reports: the queue, Redis (checked now), the workers and the scheduler. */
export async function healthOf(parts: HealthParts): Promise<HealthReport> {
  const scheduler = parts.scheduler === undefined ? 'absent' : parts.scheduler.state;
  const embedded = parts.embedded;
  if (embedded !== undefined) {
    const workers = embedded.isRunning() ? 'running' : 'stopped';
    return { ok: workers === 'running', queue: 'embedded', redis: 'absent', workers, scheduler };
  }
  const checked = parts.probe === undefined ? undefined : await parts.probe.check();
  const workers = workersOf(parts.pool);
  if (checked === undefined || !checked.up) {
    const reason = checked === undefined ? 'not connected' : `Redis unreachable: ${checked.error}`;
    return { ok: false, queue: 'redis', redis: 'down', reason, workers, scheduler };
  }
  if (!checked.writable) {
    return { ok: false, queue: 'redis', redis: 'refuses-writes', reason: checked.reason, workers, scheduler };
  }
  return { ok: workers !== 'stopped', queue: 'redis', redis: 'up', workers, scheduler };
}

function workersOf(pool: WorkerPool | undefined): HealthReport['workers'] {
  if (pool === undefined) return 'absent';
  if (pool.state === 'closing') return 'stopping';
  return pool.isRunning() ? 'running' : 'stopped';
}
