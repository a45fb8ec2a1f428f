import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { findExecutable, spawnRedisServer, type RedisServerProcess } from './redis-server.js';

/** The Redis the daemon uses, and how to let go of it. */
export interface RedisHandle {
  readonly url: string;
  /** `external`: REDIS_URL / config.redisUrl; `private`: a redis-server this process started. */
  readonly kind: 'external' | 'private';
  /** Stops the private redis-server (flushing its append-only file); nothing for an external one. */
  stop(): Promise<void>;
}

export interface ConnectRedisOptions {
  /** Environment to read REDIS_URL from; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly logger?: Logger;
}

/**
 * Finds the Redis to use: REDIS_URL, else `config.redisUrl`, else a private `redis-server` from the PATH bound to
 * 127.0.0.1 on a free port, with its append-only file under `<stateDir>/redis`, stopped when the process exits.
 * With none of these, a ConfigError naming the three ways to get Redis.
 */
export async function connectRedis(
  config: Config,
  stateDir: string,
  options: ConnectRedisOptions = {},
): Promise<RedisHandle> {
  const env = options.env ?? process.env;
  const url = env.REDIS_URL !== undefined && env.REDIS_URL !== '' ? env.REDIS_URL : config.redisUrl;
  if (url !== undefined) return { url, kind: 'external', stop: async () => undefined };

  const executable = findExecutable('redis-server', env.PATH);
  if (executable === undefined) {
    throw new ConfigError(
      'dreamd needs Redis and found none. Either:\n' +
        '  1. set REDIS_URL (or "redisUrl" in dreamd.config.json) to a running Redis, e.g. redis://127.0.0.1:6379;\n' +
        '  2. install redis-server so dreamd can start a private one (e.g. `apt-get install redis-server`, ' +
        '`brew install redis`);\n' +
        '  3. run dreamd and Redis together with `docker compose up`.',
      'redisUrl',
    );
  }
  const dir = join(stateDir, 'redis');
  const server = await spawnRedisServer({ executable, dir });
  options.logger?.info({ url: server.url, dir, pid: server.pid }, 'started a private redis-server');
  return privateHandle(server);
}

function privateHandle(server: RedisServerProcess): RedisHandle {
  // If the process exits without stop() (an uncaught error, process.exit), take the server down with it. 'exit'
  // handlers must be synchronous: a signal is all there is time for; redis flushes its AOF on SIGTERM.
  const onExit = (): void => {
    if (server.pid !== undefined) {
      try {
        process.kill(server.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
  };
  process.once('exit', onExit);
  return {
    url: server.url,
    kind: 'private',
    async stop() {
      process.removeListener('exit', onExit);
      await server.stop();
    },
  };
}
