import { appendFileSync, cpSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConsolidateOutcome } from '../../src/cli/consolidate-in-process.js';
import type { CliRun } from '../support/cli.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { snapshotDirectory, EXAMPLE_SESSIONS_DIR } from '../support/space.js';
import { cliAt, tempDirRemovedAfterTest, useFakeAnthropic } from '../support/fixtures.js';

/**
 * A refused `rollback --cascade` changes nothing: the whole chain is checked before the first write, so a hand
 * edit in a file only the older run changed refuses the cascade with every byte (state included) as it was.
 */

// The first four write user.md and feedback.md; the last three write user.md again, never feedback.md.
const FIRST_FOUR = ['lisbon-delivery', 'dinner-friday', 'coffee-usual', 'no-semicolons'];
const LAST_THREE = ['postgres-migration', 'grafana-dashboard', 'moved-to-porto'];

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });

function copySessions(root: string, names: readonly string[]): void {
  cpSync(EXAMPLE_SESSIONS_DIR, join(root, 'sessions'), {
    recursive: true,
    filter: (source) => !source.endsWith('.json') || names.some((name) => source.endsWith(`${name}.json`)),
  });
}

function cli(root: string, argv: readonly string[]): Promise<CliRun> {
  return cliAt(root, fake.url, argv);
}

async function consolidated(root: string): Promise<string> {
  const result = (await cli(root, ['consolidate', '--force', '--json'])).data<{
    results: ConsolidateOutcome[];
  }>().results[0];
  if (result === undefined || !result.ok) throw new Error('consolidation failed');
  return result.summary.runId;
}

describe('rollback --cascade', () => {
  it('refused by a hand edit in a file of the older run leaves every byte as it was, then goes through with --force', async () => {
    const root = tempDirRemovedAfterTest('cli-cascade');
    copySessions(root, FIRST_FOUR);
    const first = await consolidated(root);
    copySessions(root, LAST_THREE);
    const second = await consolidated(root);
    appendFileSync(join(root, 'memory', 'feedback.md'), '\nA note written by hand.\n');
    const before = snapshotDirectory(join(root, 'memory'));

    const refused = await cli(root, ['rollback', first, '--cascade']);

    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`run ${first}: feedback\\.md changed since the run`));
    expect(refused.stderr).toContain(`to go ahead: dreamd rollback ${first} --space default --force`);
    // The later run was not rolled back first: memory, ledger, history and every other byte are as they were.
    expect(snapshotDirectory(join(root, 'memory'))).toEqual(before);
    const history = await cli(root, ['history', '--json']);
    expect(
      history.data<{ runId: string; rolledBackBy: string | null }[]>().map((run) => run.rolledBackBy),
    ).toEqual([null, null]);

    const forced = await cli(root, ['rollback', first, '--cascade', '--force', '--json']);
    expect(forced.code).toBe(0);
    expect(forced.data<{ runs: { rollbackOf: string }[] }>().runs.map((run) => run.rollbackOf)).toEqual([
      second,
      first,
    ]);
  });
});
