/**
 * Approval mode's state: proposals awaiting a person's decision, and the facts a person rejected.
 *
 * A proposal (`.dreamd/proposals/<run>/proposal.json`) is a run stopped before its commit point: the exact
 * bytes of every file it would write and the bytes they replace, the hash of every file the plan was built
 * from (`read`), the ledger entries it would advance, its summary, and the consolidation's own plan (`plan`:
 * the facts, opaque here; `consolidation/approval/proposal.ts` reads it). Nothing of it is in the memory folder until
 * a person accepts it; it is then committed through the same transaction as any run (transaction.ts).
 * Memory that moved past it (a hand edit, another commit, a rollback) makes it stale: `staleReasons` names the
 * files.
 *
 * Rejected facts (`.dreamd/rejected.json`): id, title, a hash of the normalized text, and the sessions the
 * fact came from. A candidate from one of those sessions with the same title or text is not proposed again.
 * (Not `.dreamd/review.md`, which lists files of others that a newer fact contradicts: review.ts.)
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import writeFileAtomic from 'write-file-atomic';
import { escapeInvisibleControls } from '../memory/visible-text.js';
import path from 'node:path';
import { z } from 'zod';
import { DreamdError, MemoryFormatError, errorMessage } from '../errors.js';
import type { LedgerEntry } from '../core/ledger.js';
import type { RunSummary } from '../core/run.js';
import { normalizedTextHash, sha256 } from '../memory/hash.js';
import type { Fact } from '../memory/types.js';
import { PROPOSALS_DIR, REJECTED_FILE, assertRunId, readTextIfExists, spaceFilePath } from './paths.js';
import type { MemoryProblem } from './memory-dir.js';

const PROPOSAL_FILE = 'proposal.json';

/** One file a proposal would write: the bytes it replaces (null: none) and its new bytes (null: deleted). */
export interface ProposedFile {
  readonly path: string;
  readonly before: string | null;
  readonly after: string | null;
}

export interface StoredProposal {
  readonly version: 1;
  readonly runId: string;
  readonly spaceId: string;
  readonly createdAt: string;
  /** sha256 of every file the plan was built from when the run read it (null: no file), by path. */
  readonly read: Readonly<Record<string, string | null>>;
  readonly files: readonly ProposedFile[];
  /** Ledger entries an accept advances (the sessions this run read). */
  readonly ledgerEntries: readonly LedgerEntry[];
  /** The run's summary, as a commit records it (status `proposed`). */
  readonly summary: RunSummary;
  /** The consolidation's plan (facts added, updated, superseded …): read by consolidation/approval/proposal.ts. */
  readonly plan: unknown;
  /** Ids of the proposal's changes rejected so far (`reject --only`); an accept leaves them out. */
  readonly rejected: readonly string[];
}

const StoredProposalSchema = z
  .object({
    version: z.literal(1),
    runId: z.string(),
    spaceId: z.string(),
    createdAt: z.string(),
    read: z.record(z.string(), z.string().nullable()),
    files: z.array(
      z.object({ path: z.string(), before: z.string().nullable(), after: z.string().nullable() }),
    ),
    ledgerEntries: z.array(z.object({ sessionId: z.string() }).passthrough()),
    summary: z.object({ runId: z.string(), status: z.string() }).passthrough(),
    plan: z.unknown(),
    rejected: z.array(z.string()),
  })
  .passthrough();

/** No proposal of that run in the space (decided already, or never made). */
export class ProposalNotFoundError extends DreamdError {
  override readonly name = 'ProposalNotFoundError';
  constructor(
    readonly runId: string,
    readonly spaceId: string,
  ) {
    super(
      `space ${spaceId}: no proposal ${runId} awaits a decision (accepted, rejected or dropped as stale already?); ` +
        '`dreamd proposals` lists those that wait',
    );
  }
}

/** Relative path of a run's proposal file. */
export function proposalPath(runId: string): string {
  assertRunId(runId);
  return `${PROPOSALS_DIR}/${runId}/${PROPOSAL_FILE}`;
}

/** sha256 of a file's bytes now (null: no file), by its path in the space's transaction. */
export async function hashFiles(
  memoryDir: string,
  paths: Iterable<string>,
): Promise<Record<string, string | null>> {
  const entries = await Promise.all(
    [...new Set(paths)].sort().map(async (file) => {
      const text = await readTextIfExists(spaceFilePath(memoryDir, file));
      return [file, text === null ? null : sha256(text)] as const;
    }),
  );
  return Object.fromEntries(entries);
}

/**
 * Why a proposal is stale: one line per file that no longer holds what the run read (a hand edit, another
 * commit, a rollback), or that appeared since. Empty: memory is as the proposal read it.
 */
export async function staleReasons(
  memoryDir: string,
  read: Readonly<Record<string, string | null>>,
  readNow: ReadonlySet<string> = new Set(),
): Promise<string[]> {
  const now = await hashFiles(memoryDir, Object.keys(read));
  const reasons: string[] = [];
  for (const [file, hash] of Object.entries(read)) {
    const current = now[file] ?? null;
    if (current === hash) continue;
    reasons.push(
      hash === null
        ? `${file} was created since the run read memory`
        : current === null
          ? `${file} was deleted since the run read memory`
          : `${file} changed since the run read memory`,
    );
  }
  for (const file of [...readNow].sort())
    if (!(file in read)) reasons.push(`${file} was created since the run read memory`);
  return reasons;
}

/** Write a proposal: a temp file flushed to disk, then renamed (never half written, not lost to a crash). */
export async function saveProposal(memoryDir: string, proposal: StoredProposal): Promise<void> {
  const target = path.join(memoryDir, proposalPath(proposal.runId));
  await mkdir(path.dirname(target), { recursive: true });
  // Escaped, as every JSON file dreamd writes: the same strings, no hidden character raw in the file.
  await writeFileAtomic(target, `${escapeInvisibleControls(JSON.stringify(proposal, null, 2))}\n`);
}

/** A run's proposal; ProposalNotFoundError when none waits, MemoryFormatError naming the file when unreadable. */
export async function readProposal(
  memoryDir: string,
  runId: string,
  spaceId: string,
): Promise<StoredProposal> {
  const relative = proposalPath(runId);
  const text = await readTextIfExists(path.join(memoryDir, relative));
  if (text === null) throw new ProposalNotFoundError(runId, spaceId);
  return parseProposal(text, relative, spaceId);
}

function parseProposal(text: string, relative: string, spaceId: string): StoredProposal {
  try {
    return StoredProposalSchema.parse(JSON.parse(text)) as unknown as StoredProposal;
  } catch (error) {
    throw new MemoryFormatError(
      `space ${spaceId}: ${relative} is unreadable (${errorMessage(error).split('\n')[0] ?? ''}); ` +
        `delete its folder to drop the proposal (the next run proposes again)`,
      relative,
      { cause: error },
    );
  }
}

/** Proposals awaiting a decision, oldest first; an unreadable one is a problem naming its file. */
export async function listProposals(
  memoryDir: string,
  spaceId: string,
  problems: MemoryProblem[] = [],
): Promise<StoredProposal[]> {
  let names: string[];
  try {
    names = await readdir(path.join(memoryDir, PROPOSALS_DIR));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const proposals: StoredProposal[] = [];
  for (const name of names.sort()) {
    const relative = `${PROPOSALS_DIR}/${name}/${PROPOSAL_FILE}`;
    const text = await readTextIfExists(path.join(memoryDir, relative)).catch(() => null);
    if (text === null) continue;
    try {
      proposals.push(parseProposal(text, relative, spaceId));
    } catch (error) {
      problems.push({ file: relative, reason: errorMessage(error) });
    }
  }
  return proposals.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
}

/** Drop a proposal's folder (decided, or stale). */
export async function removeProposal(memoryDir: string, runId: string): Promise<void> {
  assertRunId(runId);
  await rm(path.join(memoryDir, PROPOSALS_DIR, runId), { recursive: true, force: true });
}

const RejectedFact = z.object({
  id: z.string(),
  title: z.string(),
  /** `normalizedTextHash` of the fact's body. */
  textHash: z.string(),
  /** Sessions the fact was proposed from: a candidate from one of them is not proposed again. */
  sessions: z.array(z.string()),
  /**
   * Short hashes of the content words and word pairs of the fact's title and body, to know the fact said in
   * other words (consolidation's `factFingerprint`); absent in entries written before they were kept.
   */
  fingerprint: z.array(z.string()).optional(),
  runId: z.string(),
  rejectedOn: z.string(),
});
export type RejectedFact = z.infer<typeof RejectedFact>;
const RejectedListSchema = z.object({ version: z.literal(1), facts: z.array(RejectedFact) });
export type RejectedList = z.infer<typeof RejectedListSchema>;

export async function readRejected(memoryDir: string): Promise<RejectedList> {
  const text = await readTextIfExists(path.join(memoryDir, REJECTED_FILE));
  if (text === null) return { version: 1, facts: [] };
  try {
    return RejectedListSchema.parse(JSON.parse(text));
  } catch (error) {
    throw new MemoryFormatError(
      `${REJECTED_FILE}: unreadable (${errorMessage(error).split('\n')[0] ?? ''}); fix the JSON or delete the file (rejected facts may then be proposed again)`,
      REJECTED_FILE,
      { cause: error },
    );
  }
}

/** The list with these facts added (each id once), each with its `fingerprint`. */
export function withRejected(
  list: RejectedList,
  facts: readonly Fact[],
  runId: string,
  today: string,
  fingerprint: (fact: Fact) => string[],
): RejectedList {
  const known = new Set(list.facts.map((entry) => entry.id));
  const added = facts
    .filter((fact) => !known.has(fact.id))
    .map((fact) => ({
      id: fact.id,
      title: fact.title,
      textHash: normalizedTextHash(fact.body),
      sessions: [...fact.sources],
      fingerprint: fingerprint(fact),
      runId,
      rejectedOn: today,
    }));
  return added.length === 0 ? list : { version: 1, facts: [...list.facts, ...added] };
}

export function serializeRejected(list: RejectedList): string {
  return `${JSON.stringify(list, null, 2)}\n`;
}
