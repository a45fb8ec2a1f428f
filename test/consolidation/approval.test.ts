import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  acceptProposal,
  chooseChanges,
  listProposalViews,
  NothingToAcceptError,
  ProposalStaleError,
  proposalChanges,
  rejectProposal,
  UnknownChangeError,
} from '../../src/consolidation/approval/proposal.js';
import type { Space } from '../../src/config/schema.js';
import {
  listProposals,
  listRuns,
  loadMemory,
  readLedger,
  readProposal,
  readRejected,
  REJECTED_FILE,
} from '../../src/space/index.js';
import { EXAMPLE_FACTS, scriptedExtractor } from '../../harness/scripted-extractor.js';
import { copyExampleSessions, useFakeAnthropic } from '../support/fixtures.js';
import { createTestSpace, snapshotDirectory, type TestSpace } from '../support/space.js';
import type { Fact } from '../../src/memory/types.js';
import { fact as memoryFact } from '../memory/helpers.js';
import { activeTitles, EXAMPLE_SESSION_FILES, addExampleSession, forcedRunAt } from './helpers.js';

const SESSIONS = EXAMPLE_SESSION_FILES.slice(0, 3);

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });

function approving(test: TestSpace): Space {
  return { ...test.space, approve: true };
}

function consolidate(test: TestSpace, space: Space = approving(test)) {
  return forcedRunAt(test, space);
}

/** The memory folder without dreamd's own state: what people and agents read. */
function memoryFiles(test: TestSpace): Map<string, string> {
  const files = snapshotDirectory(test.space.memoryDir);
  for (const name of [...files.keys()]) if (name.startsWith('.dreamd/')) files.delete(name);
  return files;
}

async function onlyProposal(test: TestSpace) {
  const proposals = await listProposals(test.space.memoryDir, test.space.id);
  expect(proposals).toHaveLength(1);
  return proposals[0]!;
}

/** The ledger removed (a person starting the space's learning over): the next run reads every session again. */
function forgetLedger(test: TestSpace): void {
  rmSync(join(test.space.memoryDir, '.dreamd', 'ledger.json'));
}

/** A test space of SESSIONS, and the approving run over it: it proposes their three facts. */
async function proposedRun(): Promise<{ test: TestSpace; run: Awaited<ReturnType<typeof consolidate>> }> {
  const test = createTestSpace({ modelUrl: fake.url, examples: SESSIONS });
  return { test, run: await consolidate(test) };
}

/** The change of the space's only proposal whose fact is titled `title`. */
async function changeTitled(test: TestSpace, title: string) {
  const change = proposalChanges(await onlyProposal(test)).find((entry) => entry.fact.title === title);
  if (change === undefined) throw new Error(`the proposal holds no change titled ${title}`);
  return change;
}

describe('approval mode', () => {
  it('writes nothing in the memory folder; the run stages a proposal and the next run waits for it', async () => {
    const { test, run } = await proposedRun();
    expect(run.status).toBe('proposed');
    expect(run.added).toBe(3);
    expect(memoryFiles(test)).toEqual(new Map());
    expect(await readLedger(test.space.memoryDir)).toEqual({ version: 1, sessions: {} });
    expect(await listRuns(test.space.memoryDir)).toEqual([]);

    const proposal = await onlyProposal(test);
    expect(proposal.runId).toBe(run.runId);
    expect(proposalChanges(proposal).map((change) => [change.kind, change.fact.title])).toEqual([
      ['add', 'Home address'],
      ['add', "Doesn't eat spicy food"],
      ['add', 'Usual coffee order'],
    ]);
    const { proposals } = await listProposalViews([test.space]);
    expect(proposals[0]?.diff).toContain('+Lives in Lisbon, Rua das Flores 28.');

    const again = await consolidate(test);
    expect(again.status).toBe('skipped');
    expect(again.reason).toEqual(expect.stringMatching(`proposal ${run.runId} awaits a decision`));
    expect(fake.server.requests).toHaveLength(1);
  });

  it('accepting all of a proposal writes exactly the bytes it showed, and advances the ledger', async () => {
    const { test, run } = await proposedRun();
    const proposal = await onlyProposal(test);
    const outcome = await acceptProposal(test.space, run.runId, { config: test.config });
    expect(outcome.leftOut).toEqual([]);
    const written = memoryFiles(test);
    for (const file of proposal.files.filter((entry) => !entry.path.startsWith('.dreamd/')))
      expect(written.get(file.path)).toBe(file.after);
    expect(await activeTitles(test)).toEqual([
      "Doesn't eat spicy food",
      'Home address',
      'Usual coffee order',
    ]);
    expect(Object.keys((await readLedger(test.space.memoryDir)).sessions)).toHaveLength(3);
    const [record] = await listRuns(test.space.memoryDir);
    expect(record).toMatchObject({ runId: run.runId, kind: 'consolidation' });
    expect(record?.summary.status).toBe('completed');
    expect(await listProposals(test.space.memoryDir, test.space.id)).toEqual([]);
    // Decided: the next run has nothing new.
    expect((await consolidate(test)).status).toBe('skipped');
  });

  it('accepting a fact that supersedes another moves the old one to the archive, as a run would', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: ['2026-11-02-lisbon-delivery.json'] });
    const first = await consolidate(test);
    await acceptProposal(test.space, first.runId, { config: test.config });
    copyExampleSessions(join(test.space.sessionsDir, '..'), ['2026-11-26-moved-to-porto.json']);
    const run = await consolidate(test);
    expect(run.status).toBe('proposed');
    const [porto] = proposalChanges(await onlyProposal(test));
    expect(porto?.fact.body).toContain('Porto');
    expect(porto?.supersedes.map((old) => old.body)).toEqual([expect.stringContaining('Lisbon')]);

    await acceptProposal(test.space, run.runId, { config: test.config, only: [porto!.id] });

    const loaded = await loadMemory(test.space.memoryDir);
    expect(loaded.facts.map((fact) => fact.body)).toEqual([expect.stringContaining('Porto')]);
    expect(loaded.archived.map((entry) => [entry.fact.body, entry.reason])).toEqual([
      [expect.stringContaining('Lisbon'), 'superseded'],
    ]);
    expect([...memoryFiles(test).values()].join('\n')).not.toContain('Lisbon');
  });

  it('accept --only writes exactly that part, planned again from the chosen facts', async () => {
    const { test, run } = await proposedRun();
    const coffee = await changeTitled(test, 'Usual coffee order');
    const outcome = await acceptProposal(test.space, run.runId, { config: test.config, only: [coffee.id] });
    expect(outcome.accepted).toEqual([coffee.id]);
    expect(outcome.leftOut).toHaveLength(2);

    const loaded = await loadMemory(test.space.memoryDir);
    expect(loaded.facts.map((fact) => [fact.id, fact.title, fact.body])).toEqual([
      [coffee.id, 'Usual coffee order', 'The usual at Fábrica is an oat flat white.'],
    ]);
    const text = [...memoryFiles(test).values()].join('\n');
    expect(text).not.toContain('Lisbon');
    expect(text).not.toContain('spicy');
    expect(memoryFiles(test).get('MEMORY.md')).toContain('Usual coffee order');
    expect(memoryFiles(test).get('MEMORY.md')).not.toContain('Home address');
    // The rest is remembered as rejected; the run record says what was left out.
    expect((await readRejected(test.space.memoryDir)).facts.map((fact) => fact.title).sort()).toEqual([
      "Doesn't eat spicy food",
      'Home address',
    ]);
    const [record] = await listRuns(test.space.memoryDir);
    expect(record?.summary.added).toBe(1);
    expect(Object.keys(record?.files ?? {})).toContain(REJECTED_FILE);
    expect(record?.summary.diff).not.toContain('Lisbon');
  });

  it('reject in full: its sessions are done (never sent again), and the facts are remembered as rejected', async () => {
    const { test, run } = await proposedRun();
    const outcome = await rejectProposal(test.space, run.runId, { config: test.config });
    expect(outcome.dropped).toBe(true);
    expect(await listProposals(test.space.memoryDir, test.space.id)).toEqual([]);
    expect(memoryFiles(test)).toEqual(new Map());
    expect((await readRejected(test.space.memoryDir)).facts).toHaveLength(3);
    expect((await listRuns(test.space.memoryDir)).map((record) => record.kind)).toEqual(['reject']);
    expect(Object.keys((await readLedger(test.space.memoryDir)).sessions)).toHaveLength(3);

    // The next run has nothing new: the rejected sessions are not paid for twice.
    const next = await consolidate(test);
    expect(next.status).toBe('skipped');
    expect(fake.server.requests).toHaveLength(1);

    // Read again (the ledger started over), the sessions do not bring their rejected facts back.
    forgetLedger(test);
    const again = await consolidate(test);
    expect(fake.server.requests).toHaveLength(2);
    expect(again.status).toBe('completed');
    expect(again.added).toBe(0);
    expect(again.notes).toContain('3 fact(s) rejected earlier from the same sessions left out');
    expect(memoryFiles(test)).toEqual(new Map());
    expect(await listProposals(test.space.memoryDir, test.space.id)).toEqual([]);
  });

  it('reject remembers the facts in any words: the model rewording them next run does not bring them back', async () => {
    const { test, run } = await proposedRun();
    await rejectProposal(test.space, run.runId, { config: test.config });
    const rejected = JSON.stringify(await readRejected(test.space.memoryDir));
    // The list keeps each fact's title and a fingerprint of its text, not the text.
    expect(rejected).not.toMatch(/Rua das Flores|heartburn|oat flat white/);
    const reworded = new Map([
      ['Home address', ['Lisbon home address', 'The user lives in Lisbon, at Rua das Flores 28.']],
      [
        "Doesn't eat spicy food",
        ['No spicy food', 'The user does not eat spicy food: chilli gives them heartburn.'],
      ],
      ['Usual coffee order', ['Coffee at Fábrica', 'The usual order at Fábrica is an oat flat white.']],
    ]);
    fake.server.setDefault(
      scriptedExtractor(
        EXAMPLE_FACTS.map((fact) => {
          const [title, body] = reworded.get(fact.title) ?? [fact.title, fact.body];
          return { ...fact, title: title!, body: body! };
        }),
      ),
    );

    forgetLedger(test);
    const next = await consolidate(test);

    expect(next.status).toBe('completed');
    expect(next.added).toBe(0);
    expect(next.notes).toContain('3 fact(s) rejected earlier from the same sessions left out');
    expect(await listProposals(test.space.memoryDir, test.space.id)).toEqual([]);
  });

  it('reject --only keeps the rest waiting; accepting it then writes the rest', async () => {
    const { test, run } = await proposedRun();
    const spicy = await changeTitled(test, "Doesn't eat spicy food");
    const outcome = await rejectProposal(test.space, run.runId, { config: test.config, only: [spicy.id] });
    expect(outcome).toEqual({ rejected: [spicy.id], dropped: false });
    expect(memoryFiles(test)).toEqual(new Map());
    const waiting = await readProposal(test.space.memoryDir, run.runId, test.space.id);
    expect(proposalChanges(waiting).find((change) => change.id === spicy.id)?.rejected).toBe(true);

    // Accepting only what was rejected writes nothing.
    await expect(
      acceptProposal(test.space, run.runId, { config: test.config, only: [spicy.id] }),
    ).rejects.toThrow(NothingToAcceptError);
    expect(memoryFiles(test)).toEqual(new Map());

    await acceptProposal(test.space, run.runId, { config: test.config });
    expect(await activeTitles(test)).toEqual(['Home address', 'Usual coffee order']);
  });

  it('refuses a stale proposal with the reason, drops it, and the next run proposes again', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: SESSIONS.slice(0, 1) });
    // Memory exists first, written without approval.
    expect((await consolidate(test, test.space)).status).toBe('completed');
    addExampleSession(test, SESSIONS[1]!);
    const run = await consolidate(test);
    expect(run.status).toBe('proposed');
    // A person edits memory by hand after the proposal was made.
    const userFile = join(test.space.memoryDir, 'user.md');
    const edited = `${readFileSync(userFile, 'utf8')}\nA line a person added.\n`;
    writeFileSync(userFile, edited);
    const before = snapshotDirectory(test.space.memoryDir);

    const refused = acceptProposal(test.space, run.runId, { config: test.config });
    await expect(refused).rejects.toThrow(ProposalStaleError);
    await expect(refused).rejects.toThrow(/user\.md changed since the run read memory/);
    expect(readFileSync(userFile, 'utf8')).toBe(edited);
    const after = snapshotDirectory(test.space.memoryDir);
    for (const [file, text] of before) if (!file.startsWith('.dreamd/')) expect(after.get(file)).toBe(text);
    expect(await listProposals(test.space.memoryDir, test.space.id)).toEqual([]);

    const again = await consolidate(test);
    expect(again.status).toBe('proposed');
    expect((await onlyProposal(test)).runId).toBe(again.runId);
  });

  it('a run drops a proposal that memory moved past and proposes again', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: SESSIONS.slice(0, 1) });
    expect((await consolidate(test, test.space)).status).toBe('completed');
    addExampleSession(test, SESSIONS[2]!);
    const first = await consolidate(test);
    writeFileSync(join(test.space.memoryDir, 'notes-by-hand.md'), '# Mine\n');
    const second = await consolidate(test);
    expect(second.status).toBe('proposed');
    expect(second.notes).toContainEqual(
      expect.stringMatching(`proposal ${first.runId} was stale and dropped .*notes-by-hand.md was created`),
    );
    expect((await onlyProposal(test)).runId).toBe(second.runId);
  });

  it('names the changes a proposal holds when --only names one it does not', async () => {
    const { test, run } = await proposedRun();
    const ids = proposalChanges(await onlyProposal(test)).map((change) => change.id);
    const refused = acceptProposal(test.space, run.runId, { config: test.config, only: ['f-nothere'] });
    await expect(refused).rejects.toThrow(UnknownChangeError);
    await expect(refused).rejects.toThrow(ids[0]!);
    expect(memoryFiles(test)).toEqual(new Map());
  });
});

describe('chooseChanges', () => {
  it('keeps what memory holds for an update or supersede left out, and adds only chosen new facts', () => {
    const fact = (id: string, title: string, extra: Partial<Fact> = {}) =>
      memoryFact({
        id,
        title,
        body: title,
        observed: '2026-11-01',
        updated: '2026-11-01',
        sources: ['s'],
        ...extra,
      });
    const old = fact('f-old', 'Home');
    const newer = fact('f-new', 'Home again');
    const oldSuperseded = { ...old, status: 'superseded' as const, supersededBy: 'f-new' };
    const kept = fact('f-kept', 'Kept');
    const added = fact('f-add', 'Added');
    const result = {
      facts: [oldSuperseded, kept, newer, added],
      added: [newer, added],
      updated: [],
      superseded: [{ fact: oldSuperseded, by: newer }],
      linked: [],
      quarantined: [],
      dropped: [],
    };
    const onlyAdded = chooseChanges([old, kept], result, new Set(['f-add']));
    expect(onlyAdded.facts).toEqual([old, kept, added]);
    expect(onlyAdded.superseded).toEqual([]);
    const onlyNewer = chooseChanges([old, kept], result, new Set(['f-new']));
    expect(onlyNewer.facts).toEqual([oldSuperseded, kept, newer]);
    expect(onlyNewer.added).toEqual([newer]);
  });
});
