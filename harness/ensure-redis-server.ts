import { findExecutable } from './redis-server.js';
import { isExecutable, mayInstallPackages, runCommand } from './system-package.js';

/**
 * Makes sure the integration tests (and the benchmarks) have a real `redis-server` to start, before any test
 * runs: `npm test` on a fresh machine needs nothing installed by hand.
 *
 * Order: `DREAMD_TEST_REDIS_SERVER` (a path, for a build of one's own) → `redis-server` on the PATH → Debian's
 * usual path → install it with the system's package manager when this process may (root with `apt-get`, as on a
 * fresh Debian or Ubuntu machine and in CI) → otherwise stop with the one command that fixes it. No test is
 * skipped instead: a suite that silently skipped its Redis tests would pass without proving anything.
 */

/** The variable that names a redis-server executable explicitly; also how the path reaches the test workers. */
export const REDIS_SERVER_VARIABLE = 'DREAMD_TEST_REDIS_SERVER';

const DEBIAN_PATH = '/usr/bin/redis-server';

export class RedisServerMissingError extends Error {
  override readonly name = 'RedisServerMissingError';
}

export interface EnsureRedisServerOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Prints what is being done (an install takes 10–60 s). Default: stderr. */
  readonly log?: (line: string) => void;
  /** Whether this process may install system packages. Default: running as root with apt-get on the PATH. */
  readonly canInstall?: boolean;
  /** Runs a command; injectable so the decision logic is testable without touching the system. */
  readonly run?: (command: string, args: readonly string[]) => { status: number | null; output: string };
  /** Checked after the PATH. Default: Debian's /usr/bin/redis-server. */
  readonly fallbackPath?: string;
}

/**
 * Finds redis-server without installing anything; undefined when there is none. `fallbackPath` is where Debian's
 * package puts it, for a PATH that lacks /usr/bin.
 */
export function findRedisServer(
  env: NodeJS.ProcessEnv = process.env,
  fallbackPath: string = DEBIAN_PATH,
): string | undefined {
  const named = env[REDIS_SERVER_VARIABLE];
  if (named !== undefined && named !== '') {
    if (!isExecutable(named)) {
      throw new RedisServerMissingError(
        `${REDIS_SERVER_VARIABLE}=${named} is not an executable file. Point it at a redis-server binary, or unset it to use the one on the PATH.`,
      );
    }
    return named;
  }
  return findExecutable('redis-server', env.PATH) ?? (isExecutable(fallbackPath) ? fallbackPath : undefined);
}

/** The one command that installs redis-server on this kind of machine, for the error message. */
export function installHint(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return 'brew install redis';
  return 'sudo apt-get install -y redis-server   (Debian/Ubuntu; other Linux: your package manager’s "redis")';
}

/**
 * Returns the path of a redis-server executable, installing one with apt-get when it is missing and this process
 * runs as root. Throws {@link RedisServerMissingError} with the command to run otherwise.
 */
export function ensureRedisServer(options: EnsureRedisServerOptions = {}): string {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const fallbackPath = options.fallbackPath ?? DEBIAN_PATH;
  const found = findRedisServer(env, fallbackPath);
  if (found !== undefined) return found;

  if (!(options.canInstall ?? mayInstallPackages(env))) {
    throw new RedisServerMissingError(
      `redis-server is not installed, and the integration tests start real ones (the daemon itself does not need it).\n` +
        `Install it, then run the tests again:\n\n    ${installHint()}\n\n` +
        `or set ${REDIS_SERVER_VARIABLE}=/path/to/redis-server.`,
    );
  }

  const run = options.run ?? runCommand;
  log('tests: redis-server is missing; installing it with apt-get (once per machine, 10–60 s)');
  // The package lists of a fresh machine are often empty or stale: update first, then install.
  const steps: (readonly string[])[] = [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', 'redis-server'],
  ];
  for (const args of steps) {
    const result = run('apt-get', args);
    if (result.status !== 0) {
      throw new RedisServerMissingError(
        `apt-get ${args.join(' ')} failed (exit ${String(result.status)}):\n${result.output}\n\n` +
          `Install redis-server by hand, then run the tests again:\n\n    ${installHint()}`,
      );
    }
  }
  const installed = findRedisServer(env, fallbackPath);
  if (installed === undefined) {
    throw new RedisServerMissingError(
      `apt-get installed redis-server but no redis-server executable is on the PATH (${env.PATH ?? ''}). ` +
        `Set ${REDIS_SERVER_VARIABLE}=/path/to/redis-server.`,
    );
  }
  log(`tests: installed ${installed}`);
  return installed;
}
