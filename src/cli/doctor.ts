import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Redis } from 'ioredis';
import type { Config } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import { which } from '../util/which.js';
import { memoryHealth } from '../memory/memory-health.js';

export interface DoctorCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  /** What to do when the check fails. */
  readonly fix?: string;
}

export interface DoctorDependencies {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Pings a Redis URL; resolves true when it answers within the timeout. */
  readonly pingRedis?: (url: string) => Promise<boolean>;
}

/** PINGs Redis with a short timeout and no retries, so doctor answers quickly when it is down. */
export async function pingRedis(url: string, timeoutMs = 2_000): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

async function checkDirectory(label: string, path: string, create: boolean): Promise<DoctorCheck> {
  try {
    const info = await stat(path);
    if (!info.isDirectory()) {
      return {
        name: label,
        ok: false,
        detail: `${path} is not a directory`,
        fix: `point the space at a directory`,
      };
    }
    await access(path, create ? constants.R_OK | constants.W_OK : constants.R_OK);
    return { name: label, ok: true, detail: path };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      if (create) {
        try {
          await access(dirname(path), constants.W_OK);
          return { name: label, ok: true, detail: `${path} (created on first run)` };
        } catch {
          // fall through to the failure below
        }
        try {
          await mkdir(path, { recursive: true });
          return { name: label, ok: true, detail: `${path} (created)` };
        } catch (mkdirError) {
          return {
            name: label,
            ok: false,
            detail: `${path}: ${errorMessage(mkdirError)}`,
            fix: `create it or fix permissions`,
          };
        }
      }
      return {
        name: label,
        ok: false,
        detail: `${path} does not exist`,
        fix: `create it (mkdir -p ${path}) or fix the space's path`,
      };
    }
    return { name: label, ok: false, detail: `${path}: ${errorMessage(error)}`, fix: 'fix its permissions' };
  }
}

/** Checks what dreamd needs on this machine and says what to do about each missing piece. */
export async function runDoctor(config: Config, dependencies: DoctorDependencies): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [
    {
      name: 'config',
      ok: true,
      detail:
        config.source !== undefined
          ? config.source
          : 'no config file: the default space (./sessions → ./memory)',
    },
  ];
  for (const space of config.spaces) {
    checks.push(await checkDirectory(`space ${space.id}: sessions`, space.sessionsDir, false));
    checks.push(await checkDirectory(`space ${space.id}: memory`, space.memoryDir, true));
    const health = await memoryHealth(space.memoryDir);
    checks.push({
      name: `space ${space.id}: memory files`,
      ok: health.ok,
      detail:
        health.problems.length === 0
          ? 'every memory file reads and can be written'
          : health.problems.map((problem) => `${problem.file}: ${problem.reason}`).join('; '),
      ...(health.ok
        ? {}
        : {
            fix: 'fix the files named above; facts meant for them wait in .dreamd/pending.json and land on the next run',
          }),
    });
  }

  const ping = dependencies.pingRedis ?? pingRedis;
  if (config.redisUrl !== undefined) {
    const reachable = await ping(config.redisUrl);
    checks.push({
      name: 'redis',
      ok: reachable,
      detail: reachable ? `${config.redisUrl} answers` : `${config.redisUrl} does not answer`,
      ...(reachable
        ? {}
        : { fix: 'start Redis there, or unset REDIS_URL to let dreamd start a private redis-server' }),
    });
  } else {
    const server = which('redis-server', dependencies.env.PATH);
    checks.push({
      name: 'redis',
      ok: server !== undefined,
      detail:
        server !== undefined
          ? `no REDIS_URL; dreamd start will run ${server}`
          : 'no REDIS_URL and no redis-server on the PATH',
      ...(server !== undefined
        ? {}
        : {
            fix: 'set REDIS_URL, install redis-server (apt-get install redis-server / brew install redis), or run `docker compose up`',
          }),
    });
  }

  if (config.model.provider === 'anthropic') {
    const hasKey = config.model.apiKey !== undefined;
    const custom = config.model.baseUrl !== undefined;
    checks.push({
      name: 'model',
      ok: hasKey,
      detail: hasKey
        ? `anthropic ${config.model.name}${custom ? ` at ${config.model.baseUrl}` : ''}, key set`
        : `anthropic ${config.model.name}: no API key`,
      ...(hasKey
        ? {}
        : {
            fix: 'export ANTHROPIC_API_KEY=… (or DREAMD_MODEL_API_KEY), or use a local model: model.provider "openai-compatible" with model.baseUrl',
          }),
    });
  } else {
    checks.push({
      name: 'model',
      ok: true,
      detail: `openai-compatible ${config.model.name} at ${config.model.baseUrl ?? '(no baseUrl)'}`,
    });
  }
  return checks;
}
