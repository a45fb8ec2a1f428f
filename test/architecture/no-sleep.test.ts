/**
 * No test waits for time to pass on the wall clock: a test waits for a state (`test/support/eventually.ts`) or
 * moves a fake clock (`vi.useFakeTimers`, or a `now` it owns). A timer that only guards against a hung child
 * process (`setTimeout(() => child.kill(…))`) is not a wait.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const TEST = fileURLToPath(new URL('../', import.meta.url));
/** The one place that polls, for a state. */
const POLLER = 'support/eventually.ts';

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? entry.name === 'fixtures'
        ? []
        : files(join(dir, entry.name))
      : /\.ts$/.test(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );
}

const WAITS = [
  /\bsleep\s*\(/,
  /setTimeout\(\s*resolve\b/,
  /setTimeout\(\s*\(\)\s*=>\s*\w+\.resolve\(/,
  /from 'node:timers\/promises'/,
];

describe('the tests', () => {
  it('never sleep to let time pass', () => {
    const offenders: string[] = [];
    for (const file of files(TEST)) {
      const name = relative(TEST, file);
      if (name === POLLER || name === 'architecture/no-sleep.test.ts') continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          if (WAITS.some((pattern) => pattern.test(line)))
            offenders.push(`${name}:${index + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });
});
