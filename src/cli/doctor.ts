import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Redis } from 'ioredis';
import type { Config, Space } from '../config/schema.js';
import { explainRefusedWrite } from '../daemon/redis-probe.js';
import { errorMessage } from '../errors.js';
import { resolveModelEndpoint } from '../model/endpoint.js';
import { providerKind } from '../model/providers.js';
import type { ModelProbe } from '../model/probe.js';
import { memoryHealth } from '../space/memory-health.js';
import { claudeCodeLockHolder, describeHolder, sharesClaudeCodeLock } from '../space/claude-code-hold.js';
import { stateProblems } from '../space/state-dir.js';

export interface DoctorCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  /** What to do when the check fails. */
  readonly fix?: string;
}

export interface DoctorDependencies {
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * Sends one cheap request (the models list) to the model endpoint. Undefined: no probe (`--no-probe`).
   */
  readonly probeModel?: (model: Config['model'], env: DoctorDependencies['env']) => Promise<ModelProbe>;
  /** Checks a Redis URL: does it answer, and does it take writes? */
  readonly checkRedis?: (url: string, prefix: string) => Promise<RedisCheck>;
}

export type RedisCheck =
  | { readonly state: 'up' }
  | { readonly state: 'down' }
  | { readonly state: 'refuses-writes'; readonly reason: string };

/**
 * Connects once with a short timeout and no retries (doctor answers quickly when Redis is down), then writes a
 * key with a 10 s expiry under the prefix: a Redis that answers but refuses writes (read-only replica, out of
 * memory, failed snapshot) cannot run one job.
 */
export async function checkRedis(url: string, prefix: string, timeoutMs = 2_000): Promise<RedisCheck> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    if ((await client.ping()) !== 'PONG') return { state: 'down' };
  } catch {
    client.disconnect();
    return { state: 'down' };
  }
  try {
    await client.set(`${prefix}:probe:doctor`, String(Date.now()), 'PX', 10_000);
    return { state: 'up' };
  } catch (error) {
    return { state: 'refuses-writes', reason: explainRefusedWrite(errorMessage(error)) };
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

/**
 * Claude Code's `.consolidate-lock` in a folder Claude Code also consolidates. Held is not a fault (it ends
 * with Claude Code's run, or goes stale after an hour), so the check passes and says who holds it and since when.
 */
async function claudeCodeLockCheck(space: Space): Promise<DoctorCheck> {
  const holder = await claudeCodeLockHolder(space.memoryDir);
  return {
    name: `space ${space.id}: Claude Code's lock`,
    ok: true,
    detail:
      holder === undefined
        ? '.consolidate-lock is free'
        : `held by Claude Code (.consolidate-lock, ${describeHolder(holder)}): runs, rollback and forget wait until it is free`,
  };
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
    if (await sharesClaudeCodeLock(space)) checks.push(await claudeCodeLockCheck(space));
    const state = await stateProblems(space.memoryDir);
    checks.push({
      name: `space ${space.id}: dreamd state`,
      ok: state.length === 0,
      detail:
        state.length === 0
          ? '.dreamd holds only what dreamd made'
          : `cannot run: ${state.map((problem) => problem.reason).join('; ')}`,
      ...(state.length === 0
        ? {}
        : { fix: 'remove or move away the paths named above; nothing else is needed' }),
    });
  }

  const check = dependencies.checkRedis ?? checkRedis;
  if (config.redisUrl !== undefined) {
    const redis = await check(config.redisUrl, config.redisPrefix);
    checks.push(
      redis.state === 'up'
        ? { name: 'redis', ok: true, detail: `${config.redisUrl} answers and takes writes` }
        : redis.state === 'down'
          ? {
              name: 'redis',
              ok: false,
              detail: `${config.redisUrl} does not answer`,
              fix: 'start Redis there, or unset REDIS_URL to run everything in one process without it',
            }
          : {
              name: 'redis',
              ok: false,
              detail: `${config.redisUrl} answers but refuses writes: no job can run`,
              fix: redis.reason,
            },
    );
  } else {
    // No Redis is fine: `dreamd start` runs the embedded queue in one process. Only `worker` and `scheduler`
    // on their own need one.
    checks.push({
      name: 'queue',
      ok: true,
      detail:
        'no REDIS_URL: dreamd start runs scheduler, workers and API in one process (embedded queue); ' +
        'set REDIS_URL to run workers on several processes or machines',
    });
  }

  checks.push(modelCheck(config, dependencies.env));
  if (dependencies.probeModel !== undefined && checks.at(-1)?.ok === true) {
    const probe = await dependencies.probeModel(config.model, dependencies.env);
    checks.push({
      name: 'model endpoint',
      ok: probe.ok,
      detail: probe.detail,
      ...(probe.fix === undefined ? {} : { fix: probe.fix }),
    });
  }
  return checks;
}

/** The model settings as every run will use them: provider, name, base URL and where it came from, key. */
function modelCheck(config: Config, env: DoctorDependencies['env']): DoctorCheck {
  const endpoint = resolveModelEndpoint(config.model, env);
  const { provider, name } = config.model;
  const at =
    endpoint.baseUrl === undefined
      ? '(no base URL)'
      : `${endpoint.baseUrl} (from ${baseUrlOrigin(config, env)})`;
  const kind = providerKind(provider);
  const missing = kind.missing(endpoint);
  return {
    name: 'model',
    ok: missing === undefined,
    detail: `${provider} ${name} at ${at}, ${kind.credential(endpoint)}`,
    ...(missing === undefined ? {} : { fix: missing.fix }),
  };
}

/**
 * Which setting gave the base URL. The loader has already put an SDK variable into model.baseUrl when
 * neither the file nor DREAMD_MODEL_BASE_URL set one, so the environment tells them apart.
 */
function baseUrlOrigin(config: Config, env: DoctorDependencies['env']): string {
  if (config.model.baseUrl === undefined) return 'the provider default';
  if (env.DREAMD_MODEL_BASE_URL !== undefined && env.DREAMD_MODEL_BASE_URL !== '')
    return 'DREAMD_MODEL_BASE_URL';
  const variable = providerKind(config.model.provider).baseUrlVariable;
  if (env[variable]?.trim() === config.model.baseUrl) return variable;
  return config.source !== undefined ? `model.baseUrl in ${config.source}` : 'model.baseUrl';
}
