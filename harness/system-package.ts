import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { findExecutable } from './redis-server.js';

/**
 * What the test set-up needs to find a system program or install its Debian package (redis-server for the
 * integration tests, chromium for the daemon page's browser test): see ensure-redis-server.ts and
 * ensure-chromium.ts.
 */

/** Whether `path` is an executable regular file. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Runs a command without a shell, as apt-get wants it (no prompts); its status and its output, both streams. */
export function runCommand(
  command: string,
  args: readonly string[],
): { status: number | null; output: string } {
  const result = spawnSync(command, args, {
    encoding: 'utf8',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}

/** Whether this process may install system packages: root on Linux with apt-get on the PATH. */
export function mayInstallPackages(env: NodeJS.ProcessEnv): boolean {
  return (
    process.platform === 'linux' &&
    process.getuid?.() === 0 &&
    findExecutable('apt-get', env.PATH) !== undefined
  );
}
