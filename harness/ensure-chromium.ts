import { findExecutable } from './redis-server.js';
import { isExecutable, mayInstallPackages, runCommand } from './system-package.js';

/**
 * Makes sure the page's browser test has a real headless browser: Debian's `chromium`, driven by puppeteer-core
 * (which downloads no browser). Like `ensure-redis-server.ts`: `DREAMD_TEST_CHROMIUM` (a path) → `chromium` (or
 * `chromium-browser`, `google-chrome`) on the PATH → Debian's /usr/bin/chromium → installed with apt-get when
 * this process may (root with apt-get: a fresh Debian machine, CI) → otherwise a clear error naming the command.
 * No test is skipped instead.
 */

export const CHROMIUM_VARIABLE = 'DREAMD_TEST_CHROMIUM';

const NAMES = ['chromium', 'chromium-browser', 'google-chrome'];
const DEBIAN_PATH = '/usr/bin/chromium';

export class ChromiumMissingError extends Error {
  override readonly name = 'ChromiumMissingError';
}

export interface EnsureChromiumOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly log?: (line: string) => void;
  /** Whether this process may install system packages. Default: root with apt-get on the PATH. */
  readonly canInstall?: boolean;
  /** Runs a command; injectable so the decision logic is testable without touching the system. */
  readonly run?: (command: string, args: readonly string[]) => { status: number | null; output: string };
  readonly fallbackPath?: string;
}

/** A browser executable without installing anything; undefined when there is none. */
export function findChromium(
  env: NodeJS.ProcessEnv = process.env,
  fallbackPath: string = DEBIAN_PATH,
): string | undefined {
  const named = env[CHROMIUM_VARIABLE];
  if (named !== undefined && named !== '') {
    if (!isExecutable(named))
      throw new ChromiumMissingError(
        `${CHROMIUM_VARIABLE}=${named} is not an executable file. Point it at a chromium binary, or unset it to use the one on the PATH.`,
      );
    return named;
  }
  for (const name of NAMES) {
    const found = findExecutable(name, env.PATH);
    if (found !== undefined) return found;
  }
  return isExecutable(fallbackPath) ? fallbackPath : undefined;
}

const HINT = 'sudo apt-get install -y chromium   (Debian; Ubuntu: chromium-browser)';

/** The path of a chromium executable, installing Debian's package when it is missing and this process may. */
export function ensureChromium(options: EnsureChromiumOptions = {}): string {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const fallbackPath = options.fallbackPath ?? DEBIAN_PATH;
  const found = findChromium(env, fallbackPath);
  if (found !== undefined) return found;
  if (!(options.canInstall ?? mayInstallPackages(env))) {
    throw new ChromiumMissingError(
      `chromium is not installed, and the test of the daemon's page drives a real headless browser.\n` +
        `Install it, then run the tests again:\n\n    ${HINT}\n\nor set ${CHROMIUM_VARIABLE}=/path/to/chromium.`,
    );
  }
  const run = options.run ?? runCommand;
  log('tests: chromium is missing; installing it with apt-get (once per machine, 1–3 min)');
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', 'chromium'],
  ]) {
    const result = run('apt-get', args);
    if (result.status !== 0)
      throw new ChromiumMissingError(
        `apt-get ${args.join(' ')} failed (exit ${String(result.status)}):\n${result.output}\n\n` +
          `Install chromium by hand, then run the tests again:\n\n    ${HINT}`,
      );
  }
  const installed = findChromium(env, fallbackPath);
  if (installed === undefined)
    throw new ChromiumMissingError(
      `apt-get installed chromium but no chromium executable is on the PATH (${env.PATH ?? ''}). Set ${CHROMIUM_VARIABLE}=/path/to/chromium.`,
    );
  log(`tests: installed ${installed}`);
  return installed;
}
