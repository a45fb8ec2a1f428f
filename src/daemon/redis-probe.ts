import { Redis } from 'ioredis';
import { errorMessage } from '../errors.js';

export type RedisProbeResult =
  | {
      readonly up: true;
      /** Changes when Redis restarts: how a full restart is told from a dropped socket. */
      readonly runId: string;
      /** True when a write with an expiry went through: BullMQ can take and finish jobs. */
      readonly writable: true;
    }
  | {
      readonly up: true;
      readonly runId: string;
      readonly writable: false;
      /** Why Redis refuses writes, and what to do about it. */
      readonly reason: string;
    }
  | { readonly up: false; readonly error: string };

/** A small connection that answers "is Redis there, does it take writes, is it the same process as before?". */
export interface RedisProbe {
  check(): Promise<RedisProbeResult>;
  close(): Promise<void>;
}

export interface RedisProbeOptions {
  /**
   * The key the write check sets (with a 10 s expiry), under the daemon's prefix so it never touches other data.
   * Default `dreamd:probe`.
   */
  readonly key?: string;
}

/** What to do about a refused write, from Redis's own error. */
export function explainRefusedWrite(message: string): string {
  if (/^READONLY\b/.test(message)) {
    return `Redis is a read-only replica (${message}); point REDIS_URL at the primary`;
  }
  if (/^OOM\b/.test(message)) {
    return (
      `Redis is out of memory under maxmemory-policy noeviction (${message}); raise maxmemory, ` +
      'free memory, or trim old jobs (workers.keepCompleted / keepFailed)'
    );
  }
  if (/^MISCONF\b/.test(message)) {
    return `Redis cannot save its snapshot and refuses writes (${message}); fix its disk or its "dir"`;
  }
  if (/^LOADING\b/.test(message))
    return `Redis is loading its data set (${message}); it takes writes once loaded`;
  return `Redis refused a write: ${message}`;
}

/**
 * A probe on its own ioredis connection. `enableOfflineQueue: false` and a 1 s `commandTimeout` make a check fail
 * fast while Redis is down instead of queueing until it is back; reconnects back off to at most 1 s.
 *
 * A check reads (`INFO server`: the run id) and writes (`SET key PX 10000`): a Redis that answers reads but
 * refuses writes (a read-only replica, out of memory under `noeviction`, a failed snapshot) cannot run a single
 * job, and a health check that only read would call it healthy.
 */
export function createRedisProbe(url: string, options: RedisProbeOptions = {}): RedisProbe {
  const key = options.key ?? 'dreamd:probe';
  const client = new Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: (times: number) => Math.min(times * 100, 1_000),
    lazyConnect: false,
  });
  // Connection errors are expected while Redis is down; check() reports them.
  client.on('error', () => undefined);
  return {
    async check() {
      let runId: string;
      try {
        const info = await client.info('server');
        const found = /run_id:(\w+)/.exec(info)?.[1];
        if (found === undefined) return { up: false, error: 'INFO server returned no run_id' };
        runId = found;
      } catch (error) {
        return { up: false, error: errorMessage(error) };
      }
      try {
        await client.set(key, String(Date.now()), 'PX', 10_000);
        return { up: true, runId, writable: true };
      } catch (error) {
        const message = errorMessage(error);
        // A timeout or a dropped socket is Redis being away, not refusing.
        if (!/^(READONLY|OOM|MISCONF|LOADING|NOREPLICAS|ERR)\b/.test(message)) {
          return { up: false, error: message };
        }
        return { up: true, runId, writable: false, reason: explainRefusedWrite(message) };
      }
    },
    async close() {
      client.disconnect();
    },
  };
}
