/**
 * The archive (`.dreamd/archive.json`): facts that left the active files and `MEMORY.md` because a newer fact
 * superseded them or curation merged them into one. Each keeps its text, sources and dates, the id of its
 * successor (`fact.supersededBy`) and the run that moved it. The archive is written in the same staged
 * transaction as the run that moves facts into it, so `dreamd rollback` of that run brings them back into the
 * active files. `memory show --archived`, `memory search --archived` and `history` read it; recall can answer
 * from it ("where did I live before?").
 *
 * Which facts move (see {@link archivable}): only dreamd's own facts (never a person's file, never an entry a
 * person edited by hand) that are superseded, and only from a file the run rewrites anyway, so a `## Superseded`
 * section of an older space moves out on the first run that writes that file, never by a write of its own.
 */
import { isTeamFact } from '../memory/agents-block.js';
import { z } from 'zod';
import { DreamdError } from '../errors.js';
import type { Fact, FactType } from '../memory/types.js';
import { ARCHIVE_FILE } from './paths.js';
import { FactRecord } from './deferred.js';

export { ARCHIVE_FILE } from './paths.js';

/** Why a fact left the active files: a newer fact replaced it, or curation merged it into a broader fact. */
export const ARCHIVE_REASONS = ['superseded', 'merged'] as const;
export type ArchiveReason = (typeof ARCHIVE_REASONS)[number];

export interface ArchiveEntry {
  /** The fact as it last was (status `superseded`, `supersededBy` its successor). */
  readonly fact: Fact;
  readonly reason: ArchiveReason;
  /** The day it left the active files, `YYYY-MM-DD`. */
  readonly archivedOn: string;
  /** The run that moved it. */
  readonly runId: string;
}

const ArchiveRecord = z.object({
  fact: FactRecord,
  reason: z.enum(ARCHIVE_REASONS),
  archivedOn: z.string(),
  runId: z.string(),
});

const ArchiveFileSchema = z.object({ version: z.literal(1), entries: z.array(ArchiveRecord) });

export interface ArchiveRead {
  readonly entries: readonly ArchiveEntry[];
  /** Set when the file exists but cannot be read: nothing is archived until a person restores it. */
  readonly problem: string | undefined;
}

/** The archive's problem: the words `status`, a run and every command that reads the archive give. */
function unreadable(error: unknown): ArchiveRead {
  const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return {
    entries: [],
    problem:
      `${ARCHIVE_FILE}: unreadable (${detail}); superseded facts stay in the active files until it is fixed. ` +
      'Restore it from the last run that wrote it (`dreamd history`, `dreamd rollback`) or move it away.',
  };
}

/** Parse the archive's text (null: no file). Never throws. */
export function parseArchive(text: string | null): ArchiveRead {
  if (text === null) return { entries: [], problem: undefined };
  try {
    const entries = ArchiveFileSchema.parse(JSON.parse(text)).entries.map((entry) => ({
      ...entry,
      fact: entry.fact as Fact,
    }));
    return { entries, problem: undefined };
  } catch (error) {
    return unreadable(error);
  }
}

/**
 * The archive read from its file: `read` gives its text (null: no file). A file that exists and cannot be read
 * (permissions, a folder in its place) is unreadable like a corrupt one, never taken for no archive: a run
 * would write a new archive over the old one. Never throws.
 */
export async function readArchive(
  read: () => Promise<string | null>,
): Promise<ArchiveRead & { text: string | null }> {
  try {
    const text = await read();
    return { ...parseArchive(text), text };
  } catch (error) {
    return { ...unreadable(error), text: null };
  }
}

/**
 * The archive exists and cannot be read. A command that shows, searches or changes it stops with this (exit 1)
 * rather than showing an empty archive; `status` and a run list the same words as a problem.
 */
export class ArchiveUnreadableError extends DreamdError {
  override readonly name = 'ArchiveUnreadableError';
  constructor(
    readonly memoryDir: string,
    problem: string,
  ) {
    super(`${memoryDir}: ${problem}`);
  }
}

/** Throws {@link ArchiveUnreadableError} when the memory read found the archive unreadable. */
export function assertArchiveReadable(loaded: {
  readonly memoryDir: string;
  readonly archiveReadable: boolean;
  readonly problems: readonly { readonly file: string; readonly reason: string }[];
}): void {
  if (loaded.archiveReadable) return;
  const problem = loaded.problems.find((entry) => entry.file === ARCHIVE_FILE)?.reason;
  throw new ArchiveUnreadableError(loaded.memoryDir, problem ?? `${ARCHIVE_FILE}: unreadable`);
}

/** The archive for these entries, sorted by fact id so the same entries give the same bytes; null when none. */
export function serializeArchive(entries: readonly ArchiveEntry[]): string | null {
  if (entries.length === 0) return null;
  const records = [...entries]
    .sort((a, b) => (a.fact.id < b.fact.id ? -1 : a.fact.id > b.fact.id ? 1 : 0))
    .map((entry) => ({
      fact: FactRecord.parse(JSON.parse(JSON.stringify(entry.fact))),
      reason: entry.reason,
      archivedOn: entry.archivedOn,
      runId: entry.runId,
    }));
  return `${JSON.stringify({ version: 1, entries: records }, null, 2)}\n`;
}

/** Where a fact lives before the write, for the rule "only from a file the run rewrites anyway". */
export interface ArchiveContext {
  /** Ids of the facts loaded from the memory folder (active files, pending). */
  readonly loadedIds: ReadonlySet<string>;
  /** Ids whose status was `superseded` when loaded. */
  readonly supersededBefore: ReadonlySet<string>;
  /** Ids held in the pending file: they wait for their file and stay there. */
  readonly pendingIds: ReadonlySet<string>;
  /** Types whose topic file dreamd must not write this run. */
  readonly broken: ReadonlySet<FactType>;
  /** The file a loaded fact lives in (relative path). */
  readonly fileOf: (fact: Fact) => string | undefined;
  /** Files the run writes anyway (without archiving anything). */
  readonly rewritten: ReadonlySet<string>;
}

/**
 * Whether a fact leaves the active files for the archive in this write: a superseded fact of dreamd's (or an
 * agent's note), not edited by hand, not waiting in pending, whose file can be written; and either new to the
 * files (superseded this run, or recorded already superseded), or in a file the run rewrites anyway.
 */
export function archivable(fact: Fact, context: ArchiveContext): boolean {
  if (fact.status !== 'superseded' || fact.supersededBy === undefined) return false;
  // A teammate's fact lives in the block alone: superseded, it goes to this space's archive like dreamd's own.
  if ((fact.owner === 'other' && !isTeamFact(fact)) || fact.editedByHand) return false;
  if (context.pendingIds.has(fact.id) || context.broken.has(fact.type)) return false;
  if (!context.loadedIds.has(fact.id) || !context.supersededBefore.has(fact.id)) return true;
  const file = context.fileOf(fact);
  return file !== undefined && context.rewritten.has(file);
}

/**
 * The archive after this write: earlier entries (updated when reconcile changed their fact, e.g. added a
 * source) and the facts moved now. `reasonOf` says why each new one left (curation's merges say `merged`).
 */
export function nextArchive(
  earlier: readonly ArchiveEntry[],
  moved: readonly Fact[],
  options: {
    readonly today: string;
    readonly runId: string;
    readonly reasonOf: (fact: Fact) => ArchiveReason;
  },
): ArchiveEntry[] {
  const byId = new Map(earlier.map((entry) => [entry.fact.id, entry]));
  for (const fact of moved) {
    const before = byId.get(fact.id);
    byId.set(
      fact.id,
      before === undefined
        ? { fact, reason: options.reasonOf(fact), archivedOn: options.today, runId: options.runId }
        : { ...before, fact },
    );
  }
  return [...byId.values()];
}
