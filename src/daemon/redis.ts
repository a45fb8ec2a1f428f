import type { Config } from '../config/schema.js';

/**
 * The Redis a daemon shares its jobs through: REDIS_URL, else `config.redisUrl`, else none. With none, `dreamd
 * start` runs the embedded in-process queue (scheduler, workers and API in one process, nothing but Node);
 * `dreamd worker` and `dreamd scheduler` run apart and so need Redis.
 */
export function redisUrlFor(
  config: Config,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  const fromEnv = env.REDIS_URL;
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : config.redisUrl;
}
