import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { machineLoadLine } from '../../harness/machine-load.js';

/** `npm test` prints the machine's load at its start and its end (test/global-setup.ts). */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the load line of a test run', () => {
  it('names the moment, the three load averages and the cores', () => {
    expect(machineLoadLine('start', [1.5, 3.25, 4], 2)).toBe(
      'dreamd tests, start: load average 1.50 3.25 4.00 on 2 cores\n',
    );
  });

  it('opens and closes the output of a vitest run', async () => {
    // A run of this file's first test alone (the filter keeps this one from running again inside it).
    const { stdout } = await promisify(execFile)(
      'npx',
      ['vitest', 'run', 'test/harness/machine-load.test.ts', '-t', 'names the moment'],
      { cwd: ROOT, env: { ...process.env, CI: '1', NO_COLOR: '1' } },
    );
    const lines = stdout.trim().split('\n');
    // Vitest's own header comes first; the load line before any test's, and again as the very last line.
    const start = lines.findIndex((line) => line.startsWith('dreamd tests, start: '));
    const firstTest = lines.findIndex((line) => line.includes('machine-load.test.ts'));
    expect(start).toBeGreaterThan(-1);
    expect(start).toBeLessThan(firstTest);
    expect(lines[start]).toMatch(/^dreamd tests, start: load average [\d.]+ [\d.]+ [\d.]+ on \d+ cores$/);
    expect(lines.at(-1)).toMatch(
      /^dreamd tests, end, after \d+ s: load average [\d.]+ [\d.]+ [\d.]+ on \d+ cores$/,
    );
  });
});
