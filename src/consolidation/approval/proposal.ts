/**
 * Approval mode (`"approve": true` in a space's config): a run stops before its commit point and stages its
 * proposal (space/proposals.ts); a person accepts all or part of it, or rejects it.
 *
 * - `proposeRun` stores what the run planned: the facts added, updated and superseded, each file's bytes before
 *   and after, the hash of every file the plan read, and the ledger entries.
 * - `acceptProposal` takes the space's locks, reads memory again and refuses a proposal memory has moved past
 *   (ProposalStaleError: the proposal is dropped, the next run proposes again from memory as it is). Else it
 *   commits through the same staged transaction as a run: all of it (the exact bytes shown), or, with `only`,
 *   the write planned again from the chosen facts alone (plan-write.ts `planResultWrite`), never file bytes cut
 *   apart. Facts left out are remembered as rejected. The ledger advances: the sessions are consolidated.
 * - `rejectProposal` remembers the facts (`.dreamd/rejected.json`) so later sessions do not propose them
 *   again. When nothing of the proposal is left to decide, it is dropped and the ledger advances as an accept
 *   would: its sessions are done and never sent to the model again (a rejection is not paid for twice); its
 *   record carries what the proposal's model calls cost, as an accept's does. Part (`only`): the rest of the
 *   proposal waits. Both record the decision (`summary.decision`), which the review page says after a reload.
 */
import type { Config, Space } from '../../config/schema.js';
import { HistoryConfig, layoutOfSpace } from '../../config/schema.js';
import { DreamdError } from '../../errors.js';
import type { DecidedChange, RunSummary } from '../../core/run.js';
import { diffFiles } from '../../memory/diff.js';
import { sha256 } from '../../memory/hash.js';
import type { Fact } from '../../memory/types.js';
import {
  LEDGER_FILE,
  REJECTED_FILE,
  commitMemoryChanges,
  hashFiles,
  listProposals,
  loadMemory,
  newRunId,
  nextLedgerContent,
  readLedger,
  readProposal,
  readRejected,
  readTextIfExists,
  lockOwner,
  removeProposal,
  runRecordPath,
  saveProposal,
  serializeRejected,
  staleReasons,
  withRejected,
  withSpaceLocks,
  ProposalNotFoundError,
  type LoadedMemory,
  type RunRecord,
  type StoredProposal,
  maintenanceSummary,
} from '../../space/index.js';
import type { BatchSegment } from '../../digest/types.js';
import type { Gathered } from '../gather/gather.js';
import { createProvenance, wordsOf } from '../../screen/provenance.js';
import { planResultWrite, type WritePlan } from '../write/plan-write.js';
import { factFingerprint } from './rejected-match.js';
import { QUOTE_CHARS } from './tunables.js';
import type { ReconcileResult } from '../reconcile/reconcile.js';
import path from 'node:path';

const DEFAULT_HISTORY = HistoryConfig.parse({});

/** What a proposal keeps of the consolidation to plan its write again from part of its facts. */
export interface ProposalPlan {
  readonly result: ReconcileResult;
  /** Reads of memory in the run's sessions (fact use). */
  readonly reads: Gathered['reads'];
  readonly today: string;
  /** The run's clock, ISO. */
  readonly now: string;
  /** The line of its sessions each fact rests on, by fact id (see {@link quotesOf}); absent in older proposals. */
  readonly quotes?: Readonly<Record<string, Quote>>;
}

/** The words a fact rests on: the line of one of its sessions that holds the most of its words. */
export interface Quote {
  readonly session: string;
  readonly text: string;
}

/**
 * For each fact, the digest line of its sessions that holds the most of its words (the user's line first among
 * equals), cut at {@link QUOTE_CHARS}: what a reviewer reads to judge it. Facts whose words no line holds get none.
 */
export function quotesOf(facts: readonly Fact[], segments: readonly BatchSegment[]): Record<string, Quote> {
  // The digest lines as the screen reads them: labels off, the user's told apart, words counted the same way.
  const { linesOf } = createProvenance(segments);
  const quotes: Record<string, Quote> = {};
  for (const fact of facts) {
    const words = wordsOf(fact.body);
    if (words.size === 0) continue;
    let best: { session: string; text: string; score: number } | undefined;
    for (const session of fact.sources) {
      for (const line of linesOf(session)) {
        let held = 0;
        for (const word of words) if (line.words.has(word)) held += 1;
        const score = held / words.size + (line.kind === 'user' ? 0.01 : 0);
        if (held > 0 && score > (best?.score ?? 0)) best = { session, text: line.text, score };
      }
    }
    if (best !== undefined) {
      const text = best.text.length > QUOTE_CHARS ? `${best.text.slice(0, QUOTE_CHARS - 1)}…` : best.text;
      quotes[fact.id] = { session: best.session, text };
    }
  }
  return quotes;
}

/** One change a person can accept or reject, named by the id of the fact it adds, updates or supersedes with. */
export interface ProposalChange {
  readonly id: string;
  readonly kind: 'add' | 'update' | 'supersede';
  readonly fact: Fact;
  /** The fact before an update. */
  readonly before?: Fact;
  /** Facts the change supersedes. */
  readonly supersedes: readonly Fact[];
  /** Rejected already (`reject --only`): an accept leaves it out. */
  readonly rejected: boolean;
  /** The words of its sessions it rests on, when the proposal kept them. */
  readonly quote?: Quote | undefined;
}

/** A proposal as commands and the page show it. */
export interface ProposalView {
  readonly runId: string;
  readonly spaceId: string;
  readonly createdAt: string;
  readonly sessions: readonly string[];
  readonly costUsd: number | undefined;
  readonly changes: readonly ProposalChange[];
  readonly files: readonly string[];
  /** Unified diff of every file the proposal writes, as accepting all of it would write them. */
  readonly diff: string;
}

/** The proposal is stale: memory moved past it. It was dropped; the next run proposes again. */
export class ProposalStaleError extends DreamdError {
  override readonly name = 'ProposalStaleError';
  constructor(
    readonly runId: string,
    readonly spaceId: string,
    readonly reasons: readonly string[],
  ) {
    super(
      `space ${spaceId}: proposal ${runId} is stale and was dropped: ${reasons.join('; ')}. ` +
        'Nothing was written; the next run proposes again from memory as it is now (`dreamd consolidate` to run it now)',
    );
  }
}

/** `--only` named ids the proposal does not hold. */
export class UnknownChangeError extends DreamdError {
  override readonly name = 'UnknownChangeError';
  override readonly exitCode = 2;
  constructor(runId: string, unknown: readonly string[], known: readonly string[]) {
    super(
      `proposal ${runId} has no change ${unknown.join(', ')}; its changes are ${known.join(', ') || 'none'} ` +
        '(`dreamd proposals` lists them)',
    );
  }
}

/** Every change an accept named was rejected already: there is nothing to write. */
export class NothingToAcceptError extends DreamdError {
  override readonly name = 'NothingToAcceptError';
  override readonly exitCode = 2;
  constructor(runId: string, spaceId: string) {
    super(
      `space ${spaceId}: proposal ${runId} has nothing left to accept (the changes named were rejected already); ` +
        `\`dreamd reject ${runId}\` drops it`,
    );
  }
}

function planOf(proposal: StoredProposal): ProposalPlan {
  return proposal.plan as ProposalPlan;
}

/** The changes of a proposal, in the order of its facts. */
export function proposalChanges(proposal: StoredProposal): ProposalChange[] {
  const { result, quotes } = planOf(proposal);
  return [...changesOf(proposal, result).values()].map((change) =>
    quotes?.[change.id] === undefined ? change : { ...change, quote: quotes[change.id] },
  );
}

function changesOf(proposal: StoredProposal, result: ReconcileResult): Map<string, ProposalChange> {
  const rejected = new Set(proposal.rejected);
  const changes = new Map<string, ProposalChange>();
  for (const fact of result.added)
    changes.set(fact.id, { id: fact.id, kind: 'add', fact, supersedes: [], rejected: rejected.has(fact.id) });
  for (const { before, after } of result.updated) {
    if (changes.has(after.id)) continue;
    changes.set(after.id, {
      id: after.id,
      kind: 'update',
      fact: after,
      before,
      supersedes: [],
      rejected: rejected.has(after.id),
    });
  }
  for (const { fact, by } of result.superseded) {
    const change = changes.get(by.id) ?? {
      id: by.id,
      kind: 'supersede' as const,
      fact: by,
      supersedes: [],
      rejected: rejected.has(by.id),
    };
    changes.set(by.id, { ...change, supersedes: [...change.supersedes, fact] });
  }
  return changes;
}

export function viewProposal(proposal: StoredProposal): ProposalView {
  return {
    runId: proposal.runId,
    spaceId: proposal.spaceId,
    createdAt: proposal.createdAt,
    sessions: proposal.summary.sessions,
    costUsd: proposal.summary.costUsd,
    changes: proposalChanges(proposal),
    files: proposal.files.map((file) => file.path),
    diff: diffFiles(
      new Map(proposal.files.map((file) => [file.path, file.before])),
      new Map(proposal.files.map((file) => [file.path, file.after])),
    ),
  };
}

/**
 * The reconcile result with only the chosen changes: facts of changes left out keep what memory holds (an
 * existing fact) or are not added (a new one).
 */
export function chooseChanges(
  existing: readonly Fact[],
  result: ReconcileResult,
  chosen: ReadonlySet<string>,
): ReconcileResult {
  const before = new Map(existing.map((fact) => [fact.id, fact]));
  const supersededBy = new Map(result.superseded.map(({ fact, by }) => [fact.id, by.id]));
  const updated = new Set(result.updated.map(({ after }) => after.id));
  const isChosen = (fact: Fact): boolean =>
    chosen.has(fact.id) || (supersededBy.has(fact.id) && chosen.has(supersededBy.get(fact.id) ?? ''));
  const facts = result.facts.flatMap((fact): Fact[] => {
    const old = before.get(fact.id);
    if (old === undefined) return isChosen(fact) ? [fact] : [];
    if (!updated.has(fact.id) && !supersededBy.has(fact.id)) return [fact];
    return [isChosen(fact) ? fact : old];
  });
  return {
    ...result,
    facts,
    added: result.added.filter((fact) => chosen.has(fact.id)),
    updated: result.updated.filter(({ after }) => chosen.has(after.id)),
    superseded: result.superseded.filter(({ by }) => chosen.has(by.id)),
    linked: result.linked.filter(({ fact }) => chosen.has(fact.id)),
  };
}

/** The facts a proposal adds, updates, or supersedes others with. */
function proposedFacts(result: ReconcileResult): Fact[] {
  return [
    ...result.added,
    ...result.updated.map(({ after }) => after),
    ...result.superseded.map(({ by }) => by),
  ];
}

/**
 * Stage a run's plan as a proposal instead of committing it. `read` gets the hash of every file the plan was
 * built from (the memory read, the files it writes, the ledger), so an accept can tell memory moved past it.
 */
export async function proposeRun(
  space: Space,
  options: {
    readonly plan: WritePlan;
    readonly memory: LoadedMemory;
    readonly summary: RunSummary;
    readonly reads: Gathered['reads'];
    readonly today: string;
    readonly now: Date;
    readonly ledgerEntries: StoredProposal['ledgerEntries'];
    /** The digest of the run's sessions, for the words each fact rests on. */
    readonly segments?: readonly BatchSegment[];
  },
): Promise<StoredProposal> {
  const { plan, memory } = options;
  const read: Record<string, string | null> = {};
  for (const [file, text] of memory.originals) read[file] = sha256(text);
  for (const [file, text] of plan.basis) read[file] = text === null ? null : sha256(text);
  Object.assign(read, await hashFiles(space.memoryDir, [LEDGER_FILE]));
  const proposal: StoredProposal = {
    version: 1,
    runId: options.summary.runId,
    spaceId: space.id,
    createdAt: options.now.toISOString(),
    read,
    files: [...plan.files].map(([file, after]) => ({
      path: file,
      before: plan.basis.get(file) ?? null,
      after,
    })),
    ledgerEntries: options.ledgerEntries,
    summary: options.summary,
    plan: {
      result: plan.result,
      reads: options.reads,
      today: options.today,
      now: options.now.toISOString(),
      quotes: quotesOf(proposedFacts(plan.result), options.segments ?? []),
    } satisfies ProposalPlan,
    rejected: [],
  };
  await saveProposal(space.memoryDir, proposal);
  return proposal;
}

/**
 * The first proposal of the space that still fits memory, or undefined; proposals memory moved past are
 * dropped (returned in `dropped` with why). A run of an approval space waits while one fits.
 */
export async function firstOpenProposal(
  space: Space,
  memory: LoadedMemory,
): Promise<{ pending: StoredProposal | undefined; dropped: string[] }> {
  const dropped: string[] = [];
  for (const proposal of await listProposals(space.memoryDir, space.id)) {
    const reasons = await staleReasons(space.memoryDir, proposal.read, new Set(memory.originals.keys()));
    if (reasons.length === 0) return { pending: proposal, dropped };
    await removeProposal(space.memoryDir, proposal.runId);
    dropped.push(`proposal ${proposal.runId} was stale and dropped (${reasons.join('; ')})`);
  }
  return { pending: undefined, dropped };
}

interface DecideOptions {
  readonly config: Config;
  /** Ids of the changes to accept (or reject); absent: all. Ids may be comma-separated. */
  readonly only?: readonly string[] | undefined;
  readonly now?: () => Date;
  /** Who decides, for the lock's owner (e.g. "accept", "page"). */
  readonly command?: string;
}

/** Runs `action` holding the space's lock and Claude Code's, after finishing an interrupted commit. */
async function withLocks<T>(
  space: Space,
  options: DecideOptions,
  action: (assertHeld: () => Promise<void>, consolidated: () => void) => Promise<T>,
): Promise<T> {
  const command = options.command ?? 'accept';
  const now = options.now ?? (() => new Date());
  const staleMs = options.config.limits.lockStaleMinutes * 60_000;
  return withSpaceLocks(
    space,
    { owner: lockOwner(command), staleMs, now, claudeCode: { command } },
    (locks) =>
      action(
        () => locks.lock.assertHeld(),
        () => locks.claudeCodeLock?.consolidated(now()),
      ),
  );
}

/** The ids named by `only` (comma or space separated), checked against the proposal's changes. */
function chosenIds(proposal: StoredProposal, only: readonly string[] | undefined): Set<string> {
  const known = proposalChanges(proposal).map((change) => change.id);
  if (only === undefined) return new Set(known);
  const named = only.flatMap((item) => item.split(/[\s,]+/)).filter((item) => item !== '');
  const unknown = named.filter((id) => !known.includes(id));
  if (unknown.length > 0 || named.length === 0) throw new UnknownChangeError(proposal.runId, unknown, known);
  return new Set(named);
}

/** The proposal, unless its run was committed already (then it is dropped: a crash after an accept). */
async function loadProposal(space: Space, runId: string): Promise<StoredProposal> {
  const proposal = await readProposal(space.memoryDir, runId, space.id);
  if ((await readTextIfExists(path.join(space.memoryDir, runRecordPath(runId)))) !== null) {
    await removeProposal(space.memoryDir, runId);
    throw new ProposalNotFoundError(runId, space.id);
  }
  return proposal;
}

export interface AcceptOutcome {
  readonly record: RunRecord;
  readonly accepted: readonly string[];
  /** Changes left out (by `only` or an earlier reject), remembered as rejected. */
  readonly leftOut: readonly string[];
}

function decidedChange(change: ProposalChange): DecidedChange {
  return { id: change.id, title: change.fact.title };
}

/** Accept all of a proposal, or the changes `only` names, as one transaction (see the header). */
export async function acceptProposal(
  space: Space,
  runId: string,
  options: DecideOptions,
): Promise<AcceptOutcome> {
  const now = options.now ?? (() => new Date());
  return withLocks(space, { ...options, command: options.command ?? 'accept' }, async (assertHeld, done) => {
    const proposal = await loadProposal(space, runId);
    const chosen = chosenIds(proposal, options.only);
    for (const id of proposal.rejected) chosen.delete(id);
    if (chosen.size === 0) throw new NothingToAcceptError(runId, space.id);
    const memory = await loadMemory(space.memoryDir, {
      layout: layoutOfSpace(space),
      agentsMd: space.agentsMd,
    });
    const reasons = await staleReasons(space.memoryDir, proposal.read, new Set(memory.originals.keys()));
    if (reasons.length > 0) {
      await removeProposal(space.memoryDir, runId);
      throw new ProposalStaleError(runId, space.id, reasons);
    }
    const plan = planOf(proposal);
    const changes = proposalChanges(proposal);
    const leftOut = changes.filter((change) => !chosen.has(change.id));
    let files: Map<string, string | null>;
    let basis: Map<string, string | null>;
    let summary: RunSummary = {
      ...proposal.summary,
      status: 'completed',
      decision: {
        proposal: runId,
        action: 'accept',
        decided: changes.filter((change) => chosen.has(change.id)).map(decidedChange),
        rest: leftOut.map(decidedChange),
      },
    };
    if (leftOut.length === 0) {
      // All of it: the exact bytes the person saw.
      files = new Map(proposal.files.map((file) => [file.path, file.after]));
      basis = new Map(proposal.files.map((file) => [file.path, file.before]));
    } else {
      const result = chooseChanges(memory.facts, plan.result, chosen);
      const replanned = await planResultWrite({
        memoryDir: space.memoryDir,
        memory,
        result,
        reads: plan.reads,
        runId,
        today: plan.today,
        now: new Date(plan.now),
        ...(space.agentsMd === undefined
          ? {}
          : { agents: { file: space.agentsMd, budget: space.agentsMdBudget } }),
      });
      files = replanned.files;
      basis = new Map(replanned.basis);
      const rejected = await readRejected(space.memoryDir);
      const next = withRejected(
        rejected,
        leftOut.map((change) => change.fact),
        runId,
        now().toISOString().slice(0, 10),
        factFingerprint,
      );
      if (next !== rejected) files.set(REJECTED_FILE, serializeRejected(next));
      summary = {
        ...summary,
        added: result.added.length,
        updated: result.updated.length,
        superseded: result.superseded.length,
        diff: replanned.diff,
        notes: [
          ...(summary.notes ?? []),
          `accepted ${chosen.size} of ${changes.length} proposed change(s); left out: ${leftOut.map((change) => change.id).join(', ')}`,
        ],
      };
    }
    const ledger = await readLedger(space.memoryDir);
    const record = await commitMemoryChanges(space.memoryDir, {
      runId,
      files,
      basis,
      ledger: nextLedgerContent(ledger, proposal.ledgerEntries),
      runRecord: { summary },
      now,
      keepRuns: (options.config.history ?? DEFAULT_HISTORY).keepRuns,
      beforeCommit: assertHeld,
    });
    done();
    await removeProposal(space.memoryDir, runId);
    return { record, accepted: [...chosen], leftOut: leftOut.map((change) => change.id) };
  });
}

export interface RejectOutcome {
  readonly rejected: readonly string[];
  /** True when nothing of the proposal is left to accept: it was dropped. */
  readonly dropped: boolean;
}

/** Reject all of a proposal, or the changes `only` names (see the header). */
export async function rejectProposal(
  space: Space,
  runId: string,
  options: DecideOptions,
): Promise<RejectOutcome> {
  const now = options.now ?? (() => new Date());
  return withLocks(space, { ...options, command: options.command ?? 'reject' }, async (assertHeld) => {
    const proposal = await loadProposal(space, runId);
    const named = chosenIds(proposal, options.only);
    const changes = proposalChanges(proposal);
    const rejectedIds = new Set([...proposal.rejected, ...named]);
    const facts = changes.filter((change) => named.has(change.id)).map((change) => change.fact);
    const before = await readRejected(space.memoryDir);
    const next = withRejected(before, facts, runId, now().toISOString().slice(0, 10), factFingerprint);
    const dropped = changes.every((change) => rejectedIds.has(change.id));
    const recordId = newRunId(now(), 'reject');
    // The model calls that made the proposal are paid for once, on the record that ends it: an accept's (the
    // proposal's own summary), or the reject that drops it. A partial reject's record carries none.
    const summary = proposal.summary;
    const paid: Partial<RunSummary> = dropped
      ? {
          calls: summary.calls,
          usage: summary.usage,
          retries: summary.retries,
          outputTokensPerCall: summary.outputTokensPerCall,
          costUsd: summary.costUsd,
          batch: summary.batch,
          curation: summary.curation,
        }
      : { outputTokensPerCall: undefined, costUsd: undefined, batch: undefined, curation: undefined };
    // Decided in full: its sessions are done, as after an accept (their facts are remembered as rejected).
    const ledger = dropped
      ? { ledger: nextLedgerContent(await readLedger(space.memoryDir), proposal.ledgerEntries) }
      : {};
    await commitMemoryChanges(space.memoryDir, {
      runId: recordId,
      files: new Map([[REJECTED_FILE, serializeRejected(next)]]),
      ...ledger,
      runRecord: {
        kind: 'reject',
        // The proposal's own fields (its sessions, model, notes) under those of a run that called no model.
        summary: {
          ...proposal.summary,
          ...maintenanceSummary({
            runId: recordId,
            spaceId: proposal.summary.spaceId,
            reason: `rejected ${[...named].join(', ')} of proposal ${runId}${dropped ? '; the proposal is dropped' : ''}`,
            diff: '',
            durationMs: proposal.summary.durationMs,
          }),
          sessions: proposal.summary.sessions,
          model: proposal.summary.model,
          ...paid,
          decision: {
            proposal: runId,
            action: 'reject',
            decided: changes.filter((change) => named.has(change.id)).map(decidedChange),
            rest: changes.filter((change) => !rejectedIds.has(change.id)).map(decidedChange),
          },
        },
      },
      now,
      keepRuns: (options.config.history ?? DEFAULT_HISTORY).keepRuns,
      beforeCommit: assertHeld,
    });
    if (dropped) await removeProposal(space.memoryDir, runId);
    else await saveProposal(space.memoryDir, { ...proposal, rejected: [...rejectedIds] });
    return { rejected: [...named], dropped };
  });
}

/** Pending proposals of the given spaces, as views (an unreadable one is reported in `problems`). */
export async function listProposalViews(
  spaces: readonly Space[],
): Promise<{ proposals: ProposalView[]; problems: { file: string; reason: string }[] }> {
  const problems: { file: string; reason: string }[] = [];
  const proposals: ProposalView[] = [];
  for (const space of spaces) {
    for (const proposal of await listProposals(space.memoryDir, space.id, problems))
      proposals.push(viewProposal(proposal));
  }
  return { proposals, problems };
}
