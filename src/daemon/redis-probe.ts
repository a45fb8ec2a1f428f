import { Redis } from 'ioredis';
import { errorMessage } from '../errors.js';

export type RedisProbeResult =
  | {
      readonly up: true;
      /** Changes when Redis restarts: how a full restart is told from a dropped socket. */ readonly runId: string;
    }
  | { readonly up: false; readonly error: string };

/** A small connection that answers "is Redis there, and is it the same process as before?". */
export interface RedisProbe {
  check(): Promise<RedisProbeResult>;
  close(): Promise<void>;
}

/**
 * A probe on its own ioredis connection. `enableOfflineQueue: false` and a 1 s `commandTimeout` make a check fail
 * fast while Redis is down instead of queueing until it is back; reconnects back off to at most 1 s.
 */
export function createRedisProbe(url: string): RedisProbe {
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
      try {
        const info = await client.info('server');
        const runId = /run_id:(\w+)/.exec(info)?.[1];
        if (runId === undefined) return { up: false, error: 'INFO server returned no run_id' };
        return { up: true, runId };
      } catch (error) {
        return { up: false, error: errorMessage(error) };
      }
    },
    async close() {
      client.disconnect();
    },
  };
}
