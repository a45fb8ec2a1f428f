import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * dreamd's version, from its package.json: the nearest one above this file (src/cli/ in a checkout,
 * dist/src/cli/ in the installed package), read once when `--version` asks.
 */
export function packageVersion(from: string = fileURLToPath(import.meta.url)): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (parsed.name === 'dreamd' && typeof parsed.version === 'string') return parsed.version;
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}
