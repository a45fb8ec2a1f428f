import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findFreePort } from '../../harness/redis-server.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { runCliCaptured } from '../support/cli.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { createTestSpace } from '../support/space.js';

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });
const SESSIONS = [
  '2026-11-02-lisbon-delivery.json',
  '2026-11-05-dinner-friday.json',
  '2026-11-09-coffee-usual.json',
];

interface Listed {
  proposals: { runId: string; changes: { id: string; fact: { title: string } }[]; diff: string }[];
}

/** A checkout whose config file turns approval on for its one space. */
async function approvalCheckout() {
  const test = createTestSpace({ modelUrl: fake.url, examples: SESSIONS });
  writeFileSync(
    join(test.root, 'dreamd.config.json'),
    JSON.stringify({ spaces: [{ id: 'home', sessions: './sessions', memory: './memory', approve: true }] }),
  );
  const env = {
    DREAMD_MODEL_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: 'sk-ant-test-key',
    // No daemon answers here: the run is in-process.
    DREAMD_PORT: String(await findFreePort()),
  };
  const cli = (...argv: string[]) => runCliCaptured(argv, { cwd: test.root, env });
  return { test, cli, memory: join(test.root, 'memory') };
}

describe('dreamd proposals, accept, reject', () => {
  it('proposes, lists the proposal with its diff, and accepts the part --only names', async () => {
    const { cli, memory } = await approvalCheckout();
    const run = await cli('consolidate', '--force');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/proposed in .*nothing written to memory until you decide/);
    expect(existsSync(join(memory, 'user.md'))).toBe(false);

    const listed = (await cli('proposals', '--json')).data<Listed>();
    expect(listed.proposals).toHaveLength(1);
    const proposal = listed.proposals[0]!;
    const home = proposal.changes.find((change) => change.fact.title === 'Home address')!;
    const text = await cli('proposals', 'home', '--diff');
    expect(text.stdout).toContain(`+ ${home.id} [user] Home address`);
    expect(text.stdout).toContain('+Lives in Lisbon, Rua das Flores 28.');

    const status = await cli('status', 'home');
    expect(status.stdout).toContain(`proposal   ${proposal.runId} (3 changes`);
    const [statusJson] = (await cli('status', 'home', '--json')).data<{ proposals: { runId: string }[] }[]>();
    expect(statusJson!.proposals.map((entry) => entry.runId)).toEqual([proposal.runId]);

    const accepted = await cli('accept', proposal.runId, '--only', home.id);
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toContain(`accepted 1 change of proposal ${proposal.runId} in space home`);
    const user = readFileSync(join(memory, 'user.md'), 'utf8');
    expect(user).toContain('Lives in Lisbon');
    expect(user).not.toContain('spicy');
    expect((await cli('proposals')).stdout).toContain('no proposal awaits a decision');
    expect((await cli('status', 'home', '--json')).data<{ proposals: unknown[] }[]>()[0]!.proposals).toEqual(
      [],
    );
    const history = (await cli('history', '--json')).data<{ runId: string }[]>();
    expect(history.map((row) => row.runId)).toEqual([proposal.runId]);
  });

  it('reject drops the proposal; a second decision on it names the command that lists what waits', async () => {
    const { cli, memory } = await approvalCheckout();
    await cli('consolidate', '--force');
    const [proposal] = (await cli('proposals', '--json')).data<Listed>().proposals;
    const rejected = await cli('reject', proposal!.runId, '--json');
    expect(rejected.code).toBe(0);
    expect(rejected.data()).toMatchObject({ space: 'home', dropped: true });
    expect(JSON.parse(readFileSync(join(memory, '.dreamd/rejected.json'), 'utf8')).facts).toHaveLength(3);

    const again = await cli('accept', proposal!.runId);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no proposal ${proposal!.runId} awaits a decision`);
    expect(again.stderr).toContain('`dreamd proposals`');
  });

  it("history shows a rejected proposal's model calls and cost, once: on the reject that drops it", async () => {
    const { cli } = await approvalCheckout();
    await cli('consolidate', '--force');
    const [proposal] = (await cli('proposals', '--json')).data<{
      proposals: (Listed['proposals'][number] & { costUsd: number })[];
    }>().proposals;
    expect(proposal!.costUsd).toBeGreaterThan(0);
    const [first, ...rest] = proposal!.changes.map((change) => change.id);
    expect((await cli('reject', proposal!.runId, '--only', first!)).code).toBe(0);
    expect((await cli('reject', proposal!.runId, '--only', rest.join(','))).code).toBe(0);

    const rows = (await cli('history', '--json')).data<
      { kind: string; calls: number; costUsd: number | null; usage: { inputTokens: number } }[]
    >();
    // Newest first: the reject that dropped the proposal, then the partial one.
    expect(rows.map((row) => row.kind)).toEqual(['reject', 'reject']);
    const [dropping, partial] = rows;
    expect(dropping!.costUsd).toBe(proposal!.costUsd);
    expect(dropping!.calls).toBeGreaterThan(0);
    expect(dropping!.usage.inputTokens).toBeGreaterThan(0);
    expect(partial).toMatchObject({ calls: 0, costUsd: null, usage: { inputTokens: 0 } });
    const text = (await cli('history')).stdout;
    expect(text).toContain(`$${proposal!.costUsd.toFixed(4)}`);
  });

  it('an id the proposal does not hold is a usage error listing its ids, and nothing is written', async () => {
    const { cli, memory } = await approvalCheckout();
    await cli('consolidate', '--force');
    const [proposal] = (await cli('proposals', '--json')).data<Listed>().proposals;
    const refused = await cli('accept', proposal!.runId, '--only', 'f-unknown00');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('has no change f-unknown00');
    expect(refused.stderr).toContain(proposal!.changes[0]!.id);
    expect(existsSync(join(memory, 'MEMORY.md'))).toBe(false);
  });
});
