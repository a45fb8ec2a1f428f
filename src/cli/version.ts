import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of dreamd's package.json nearest above `from`, and its version; undefined when there is none. */
function findPackage(from: string): { root: string; version: string } | undefined {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (parsed.name === 'dreamd' && typeof parsed.version === 'string')
        return { root: dir, version: parsed.version };
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * dreamd's version, from its package.json: the nearest one above this file (src/cli/ in a checkout,
 * dist/src/cli/ in the installed package, .cache/dreamd-cli/… when a checkout runs its compiled source), read
 * once when `--version` asks.
 */
export function packageVersion(from: string = fileURLToPath(import.meta.url)): string {
  return findPackage(from)?.version ?? 'unknown';
}

/** The folder of dreamd's package (the checkout or the installed package), found as `packageVersion` finds it. */
export function packageRoot(from: string = fileURLToPath(import.meta.url)): string {
  const found = findPackage(from);
  if (found === undefined) throw new Error(`no package.json of dreamd above ${from}`);
  return found.root;
}
