import { describe, expect, it } from 'vitest';
import { faults } from '../../harness/fake-anthropic-server.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { drawProgressBar } from '../support/cli.js';
import { cliAt, exampleWorkspace, useFakeAnthropic } from '../support/fixtures.js';

/**
 * A model call retried during `dreamd consolidate` is told to a person as one readable line, where the progress
 * bar is drawn; `--json` keeps pino's JSON lines for programs.
 */

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });

/** One run of the example sessions whose first call is answered 429 (retry at once), then as usual. */
async function consolidateWithRetry(extra: readonly string[]) {
  fake.server.enqueue(faults.rateLimited(0));
  const root = exampleWorkspace(['2026-11-05-dinner-friday'], 'cli-warnings');
  return cliAt(root, fake.url, ['consolidate', '--force', ...extra], { DREAMD_MODEL_MAX_RETRIES: '2' });
}

describe('consolidate warnings', () => {
  it('prints a retry as one readable line, never a JSON log line', async () => {
    const run = await consolidateWithRetry([]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/run \S+ completed/);
    expect(run.stderr).toMatch(/^WARN: model call failed, retrying in 0 ms: .*429/m);
    expect(run.stderr).not.toMatch(/^\{/m);
    expect(run.stdout).toMatch(/1 retried/);
  });

  it('keeps the JSON log line under --json', async () => {
    const run = await consolidateWithRetry(['--json']);
    expect(run.code).toBe(0);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, attempt: 1, status: 429, delayMs: 0 });
  });

  it('prints a note above the bar and draws the bar again under it', () => {
    const drawn = drawProgressBar((bar) => bar.note('WARN: model call failed, retrying in 0 ms'));
    const note = drawn.indexOf('WARN: model call failed, retrying in 0 ms\n');
    expect(note).toBeGreaterThan(0);
    expect(drawn.slice(note)).toMatch(/\nshop \[█+░+\] \d+% \| extract 1\/2/);
  });
});
