/**
 * Reconcile and plan the write: the next facts, the bytes of every memory file that changes, the quarantine,
 * and the ledger entries. Nothing is written here; the run commits the plan in one staged transaction.
 */
import { MAX_WRITABLE_FILE_BYTES } from '../../memory/read-memory-file.js';
import { countFactReads, summarizeFactUse } from '../../space/fact-use.js';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { isAgentFact, isTeamFact, renderAgentsFile, type Sharing } from '../../memory/agents-block.js';
import { containsSecret, redactSecrets } from '../../digest/index.js';
import { diffFiles, INDEX_FILE } from '../../memory/index.js';
import {
  ARCHIVE_FILE,
  archivable,
  type ArchiveContext,
  nextArchive,
  serializeArchive,
  createIsForgotten,
  loadMemory,
  QUARANTINE_FILE,
  readTextIfExists,
  renderReview,
  REVIEW_FILE,
  type ReviewEntry,
  planMemoryFiles,
  parseQuarantine,
  renderQuarantine,
  type ForgottenList,
  type LoadedMemory,
  type MemoryProblem,
  type QuarantineEntry,
} from '../../space/index.js';
import { TOPIC_FILES, type Fact, type LedgerEntry } from '../../memory/types.js';
import type { ExtractedFact } from '../extraction/extraction.js';
import type { Gathered } from '../gather/gather.js';
import { createProvenance } from '../../screen/provenance.js';
import { reconcile, type ReconcileResult } from '../reconcile/reconcile.js';
import {
  absorbRepeats,
  applyCuration,
  type AcceptedResult,
  type UnappliedResult,
} from '../curation/curate.js';
import { createRunIds, type RunIds } from '../facts/fact-ids.js';
import { createTaughtAfterSaved } from './taught-after-saved.js';
import { HAND_EDIT_RETRIES } from './tunables.js';

export interface WritePlan {
  readonly result: ReconcileResult;
  /** New content per relative path (memory files and quarantine); only files whose bytes change. */
  readonly files: Map<string, string | null>;
  readonly ledgerEntries: readonly LedgerEntry[];
  /** Unified diff of `files` against what is on disk. */
  readonly diff: string;
  /**
   * The bytes each file of `files` was rendered from (null: no file). The commit compares the files with them
   * around each rename and merges what a person wrote since, so no line written during the commit is lost.
   */
  readonly basis: ReadonlyMap<string, string | null>;
  /**
   * What a person should know about memory after this write, with path and fix: files that cannot be parsed
   * or written, facts held back for them (and where), why the index is smaller than it could be.
   */
  readonly problems: readonly MemoryProblem[];
  /** Active facts after this write that agents have read, and those never read (space/fact-use.ts). */
  readonly factsRead: { readonly used: number; readonly neverUsed: number };
  /** The memory the plan was built on (read again when a person edited it during the run). */
  readonly memory?: LoadedMemory;
  /** Facts curation merged, each with the fact that replaced it. */
  readonly merged: readonly { readonly fact: Fact; readonly by: Fact }[];
  /** Facts this write moves from the active files to `.dreamd/archive.json`. */
  readonly archived: readonly Fact[];
  /** Accepted curation results this plan could not apply, each with why (their facts stay as they are). */
  readonly unapplied: readonly UnappliedResult[];
}

/** Whether a topic file, one of dreamd's per-fact files or the index differs on disk from what `loaded` read. */
async function changedSince(memoryDir: string, loaded: LoadedMemory): Promise<boolean> {
  const files = [
    ...Object.values(TOPIC_FILES),
    ...[...loaded.factFiles.values()].map((read) => read.file),
    INDEX_FILE,
  ];
  const changed = await Promise.all(
    files.map(async (file) => {
      // An unreadable file was reported by loadMemory and is not rewritten: not a change.
      const before = loaded.originals.get(file) ?? null;
      const onDisk = await readTextIfExists(join(memoryDir, file)).catch(() => before);
      return onDisk !== before;
    }),
  );
  return changed.includes(true);
}

interface AgentsRead {
  readonly file: string;
  readonly budget: number | undefined;
  /** The file's bytes as read (null: none). */
  readonly text: string | null;
  /** Why dreamd must not write it (a symlink, unreadable); undefined: writable. */
  readonly problem?: string;
}

/** Read the space's `AGENTS.md` once per run: the block is planned from these bytes, and the commit compares with them. */
async function readAgentsFile(agents: {
  readonly file: string;
  readonly budget?: number | undefined;
}): Promise<AgentsRead> {
  const { file, budget } = agents;
  try {
    const stat = await lstat(file).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    });
    if (stat?.isSymbolicLink() === true)
      return {
        file,
        budget,
        text: null,
        problem: `${file} is a symlink; dreamd does not write its block into it. Point agentsMd at the file itself.`,
      };
    if (stat !== undefined && !stat.isFile())
      return {
        file,
        budget,
        text: null,
        problem: `${file} is not a file; dreamd writes its block only into a file. Point agentsMd at an AGENTS.md file.`,
      };
    // Not read at all past the size dreamd writes: a 40 MB file cost a run 29 s and 834 MB, for a block of 2 KB.
    if (stat !== undefined && stat.size > MAX_WRITABLE_FILE_BYTES)
      return {
        file,
        budget,
        text: null,
        problem: `${file} is ${(stat.size / 1024 / 1024).toFixed(1)} MB, past the ${MAX_WRITABLE_FILE_BYTES / 1024 / 1024} MB dreamd edits; it is left as it is, unread. Shorten it (or point agentsMd elsewhere) and the next run writes the block.`,
      };
    return { file, budget, text: await readTextIfExists(file) };
  } catch (error) {
    return {
      file,
      budget,
      text: null,
      problem: `${file} cannot be read (${(error as Error).message}); dreamd leaves it as it is. Fix its permissions and the next run writes the block.`,
    };
  }
}

/**
 * dreamd's block of the space's `AGENTS.md`, from the same facts as the memory files (one set of facts behind
 * both): added to `files` when its bytes change, so it commits in the same transaction. Returns the problems.
 */
function planAgentsFile(
  agents: AgentsRead,
  facts: readonly Fact[],
  use: Readonly<Record<string, { readonly reads: number }>>,
  files: Map<string, string | null>,
  team: {
    readonly keptLines: ReadonlyMap<string, string>;
    readonly sharing: Sharing;
    readonly archived: readonly Fact[];
  },
): MemoryProblem[] {
  if (agents.problem !== undefined) return [{ file: agents.file, reason: agents.problem }];
  // Each shared fact's line names the shared facts it replaced, so a teammate's run supersedes them too.
  const replaced = new Map<string, string[]>();
  for (const old of [...facts, ...team.archived]) {
    if (old.supersededBy === undefined) continue;
    if (!isTeamFact(old) && !isAgentFact({ ...old, status: 'active' }, team.sharing)) continue;
    replaced.set(old.supersededBy, [...(replaced.get(old.supersededBy) ?? []), old.id]);
  }
  const block = renderAgentsFile(facts, {
    existing: agents.text,
    file: agents.file,
    use,
    keptLines: team.keptLines,
    replaced,
    sharing: team.sharing,
    ...(agents.budget === undefined ? {} : { budget: agents.budget }),
  });
  if (block.text !== null && block.text !== agents.text) files.set(agents.file, block.text);
  return block.problems.map((reason) => ({ file: agents.file, reason }));
}

/** What planning the files from a set of facts needs besides the memory read. */
interface FilesContext {
  readonly reads: Gathered['reads'];
  readonly today: string;
  readonly now: Date;
  readonly runId: string;
  readonly agents: AgentsRead | undefined;
}

/**
 * The files that change when memory goes from `loaded` to the facts of `result` (review, archive and AGENTS.md
 * included). `merged` are the facts curation merged (archived as `merged`, the others as `superseded`).
 */
function planFilesFor(
  loaded: LoadedMemory,
  result: ReconcileResult,
  context: FilesContext,
  merged: readonly { readonly fact: Fact; readonly by: Fact }[] = [],
  unapplied: readonly UnappliedResult[] = [],
) {
  const loadedIds = new Set(loaded.facts.map((fact) => fact.id));
  const archivedOnly = new Set(loaded.archived.map((entry) => entry.fact.id));
  const stillArchived = result.facts.filter((fact) => archivedOnly.has(fact.id) && !loadedIds.has(fact.id));
  const live = result.facts.filter((fact) => !archivedOnly.has(fact.id) || loadedIds.has(fact.id));
  // A file of someone else's that a newer fact contradicts is kept as it is and listed for review.
  const review: ReviewEntry[] = [
    ...result.linked.map(({ fact, handEdited }) => ({ old: handEdited, newer: fact })),
    ...result.superseded.map(({ fact, by }) => ({ old: fact, newer: by })),
  ].flatMap(({ old, newer }) =>
    old.owner === 'other' && old.file !== undefined && !isTeamFact(old)
      ? [{ file: old.file, fact: old, newer }]
      : [],
  );
  // Reads of memory in this run's transcripts, counted once per message (see space/fact-use.ts).
  const factUse = countFactReads(loaded.factUse, context.reads, {
    facts: loaded.facts,
    day: context.today,
  });
  const memoryOptions = { factUse, now: context.now, underReview: review.map((entry) => entry.file) };
  // Superseded facts leave the active files for the archive. Those superseded by an earlier write and still in
  // a file move only from files this write rewrites anyway: only when there are such facts are the files
  // rendered first with every fact, to see which ones change; otherwise they are rendered once.
  const supersededBefore = new Set(
    loaded.facts.filter((fact) => fact.status === 'superseded').map((fact) => fact.id),
  );
  const archiveContext = (rewritten: ReadonlySet<string>): ArchiveContext => ({
    loadedIds,
    supersededBefore,
    pendingIds: loaded.pendingIds,
    broken: new Set(loaded.broken),
    fileOf: (fact) => loaded.factFiles.get(fact.id)?.file ?? fact.file ?? TOPIC_FILES[fact.type],
    rewritten,
  });
  const none = archiveContext(new Set());
  const every = archiveContext(new Set(live.map((fact) => none.fileOf(fact) ?? '')));
  const lingering =
    loaded.archiveReadable && live.some((fact) => !archivable(fact, none) && archivable(fact, every));
  const whole = lingering ? planMemoryFiles(loaded, live, memoryOptions) : undefined;
  const moving = whole === undefined ? none : archiveContext(new Set(whole.files.keys()));
  const moved = loaded.archiveReadable ? live.filter((fact) => archivable(fact, moving)) : [];
  const movedIds = new Set(moved.map((fact) => fact.id));
  const active = live.filter((fact) => !movedIds.has(fact.id));
  const memoryPlan =
    whole !== undefined && moved.length === 0
      ? whole
      : planMemoryFiles(loaded, active, {
          ...memoryOptions,
          remove: moved.filter((fact) => loadedIds.has(fact.id)).map((fact) => fact.id),
        });
  if (loaded.archiveReadable && (moved.length > 0 || stillArchived.length > 0)) {
    const mergedIds = new Set(merged.map((entry) => entry.fact.id));
    const archiveText = serializeArchive(
      nextArchive(loaded.archived, [...stillArchived, ...moved], {
        today: context.today,
        runId: context.runId,
        reasonOf: (fact) => (mergedIds.has(fact.id) ? 'merged' : 'superseded'),
      }),
    );
    if (archiveText !== (loaded.originals.get(ARCHIVE_FILE) ?? null))
      memoryPlan.files.set(ARCHIVE_FILE, archiveText);
  }
  const reviewProblems: MemoryProblem[] = review.map((entry) => ({
    file: entry.file,
    reason: `${entry.file}: newer fact ${entry.newer.id} ("${entry.newer.title}") contradicts it; the file is kept as it is, left out of dreamd's index lines, and listed in ${REVIEW_FILE} for you to decide.`,
  }));
  const agents = context.agents;
  const agentsProblems =
    agents === undefined
      ? []
      : planAgentsFile(agents, active, factUse.facts, memoryPlan.files, {
          keptLines: loaded.keptAgentsLines,
          sharing: loaded.sharing,
          archived: [...loaded.archived.map((entry) => entry.fact), ...moved],
        });
  const reviewBefore = loaded.originals.get(REVIEW_FILE) ?? null;
  const reviewText = renderReview(reviewBefore, review);
  if (reviewText !== reviewBefore) memoryPlan.files.set(REVIEW_FILE, reviewText);
  return {
    result,
    files: memoryPlan.files,
    problems: [...loaded.problems, ...memoryPlan.problems, ...reviewProblems, ...agentsProblems],
    factsRead: summarizeFactUse(active, factUse),
    merged,
    archived: moved,
    unapplied,
  };
}

/**
 * The quarantine, the basis and the diff of planned files: what every plan adds once its facts are settled.
 */
async function completePlan(
  memoryDir: string,
  current: LoadedMemory,
  planned: ReturnType<typeof planFilesFor>,
  options: {
    readonly runId: string;
    readonly agents: AgentsRead | undefined;
    readonly ledgerEntries: readonly LedgerEntry[];
  },
): Promise<WritePlan> {
  const { result, files, problems, factsRead, merged, archived, unapplied } = planned;
  const { runId, agents } = options;
  // The quarantine is plain text on disk: a secret the model put in a fact is redacted there too.
  const quarantine: QuarantineEntry[] = result.quarantined.map(({ candidate, reason }) => ({
    title: redactSecrets(candidate.title).text,
    text: redactSecrets(candidate.body).text,
    reason,
    session: candidate.sources.join(', '),
    date: candidate.observed,
    runId,
  }));
  const quarantineBefore =
    quarantine.length > 0 ? await readTextIfExists(join(memoryDir, QUARANTINE_FILE)) : null;
  if (quarantine.length > 0) files.set(QUARANTINE_FILE, renderQuarantine(quarantineBefore, quarantine));
  const before = new Map<string, string | null>(
    [...files.keys()].map((path) => [
      path,
      path === QUARANTINE_FILE
        ? quarantineBefore
        : path === agents?.file
          ? agents.text
          : (current.originals.get(path) ?? null),
    ]),
  );
  return {
    result,
    files,
    ledgerEntries: options.ledgerEntries,
    diff: diffFiles(before, files),
    problems,
    basis: before,
    factsRead,
    merged,
    archived,
    unapplied,
  };
}

/**
 * Plan the write of facts already reconciled (an accepted proposal, or part of one): the same files, review,
 * `AGENTS.md` block and quarantine a run plans from them, rendered on the memory read now. No ledger entries:
 * the caller advances the ledger.
 */
export async function planResultWrite(options: {
  memoryDir: string;
  memory: LoadedMemory;
  result: ReconcileResult;
  reads: Gathered['reads'];
  runId: string;
  today: string;
  now: Date;
  agents?: { readonly file: string; readonly budget?: number | undefined } | undefined;
}): Promise<WritePlan> {
  const agents = options.agents === undefined ? undefined : await readAgentsFile(options.agents);
  const planned = planFilesFor(options.memory, options.result, {
    reads: options.reads,
    today: options.today,
    now: options.now,
    runId: options.runId,
    agents,
  });
  return completePlan(options.memoryDir, options.memory, planned, {
    runId: options.runId,
    agents,
    ledgerEntries: [],
  });
}

/** What a run's write is planned from. */
export interface WriteOptions {
  memoryDir: string;
  memory: LoadedMemory;
  candidates: readonly ExtractedFact[];
  forgotten: ForgottenList;
  gathered: Gathered;
  runId: string;
  today: string;
  now: Date;
  /** Results of the curation phase the code accepted (`curate.ts`), applied after reconcile. */
  curation?: readonly AcceptedResult[] | undefined;
  /**
   * The run's fact ids (`fact-ids.ts`): a fact learned in the run keeps its id from the draft to the plan, so
   * it has the id curation saw. Default: one for this write (its draft, plan and re-plans after a hand edit
   * share it).
   */
  ids?: RunIds | undefined;
  /** The repository's `AGENTS.md` the space also writes (absolute path), and its block's byte budget. */
  agents?: { readonly file: string; readonly budget?: number | undefined } | undefined;
  /**
   * When the ledger recorded a session consolidated (ISO timestamp; undefined: not yet): a fact is saved by the
   * run of its first source, and a session started after that which says it again taught it again. Omitted:
   * nothing is counted as taught again.
   */
  consolidatedAt?: ((sessionId: string) => string | undefined) | undefined;
}

/**
 * A write whose facts are reconciled but whose files are not yet rendered: what curation and the update check
 * look at before the run plans its write, once.
 */
export interface WriteDraft {
  /** Memory after the candidates are reconciled with it (repeats of merged facts absorbed), before curation. */
  readonly result: ReconcileResult;
  /**
   * Plans the write: the accepted curation results applied to the draft's facts, and the files rendered once.
   * `candidates` other than the draft's (the update check set what some of them replace) are reconciled
   * again first; so is memory a person edited since it was read (up to {@link HAND_EDIT_RETRIES} times).
   */
  finish(options?: {
    readonly candidates?: readonly ExtractedFact[];
    readonly curation?: readonly AcceptedResult[];
  }): Promise<WritePlan>;
}

/**
 * Reconciles the candidates with memory (read again first if a person edited it since the run read it), and
 * returns the draft a run curates and then finishes into its one write plan.
 */
export async function draftWrite(options: WriteOptions): Promise<WriteDraft> {
  const { memoryDir, runId, now } = options;
  const ids = options.ids ?? createRunIds();
  const isForgotten = createIsForgotten(options.forgotten);
  // Provenance is read from the digest the model was given, not from the model's own `evidence` label.
  const provenance = createProvenance(options.gathered.batches.flatMap(({ batch }) => batch.segments));
  const agents = options.agents === undefined ? undefined : await readAgentsFile(options.agents);
  const context: FilesContext = { reads: options.gathered.reads, today: options.today, now, runId, agents };
  // What earlier runs held back: a fact said again in other words is held back with it. An unreadable file
  // holds nothing back here.
  const held = parseQuarantine(
    await readTextIfExists(join(memoryDir, QUARANTINE_FILE)).catch(() => null),
  ).map((entry) => ({ title: entry.title, body: entry.text, reason: entry.reason }));
  const taughtAfterSaved =
    options.consolidatedAt === undefined
      ? undefined
      : createTaughtAfterSaved(options.gathered.sessionStarts ?? new Map(), options.consolidatedAt);
  /** Memory's next facts from `loaded` and the candidates, before curation. */
  const settle = (loaded: LoadedMemory, candidates: readonly ExtractedFact[]): ReconcileResult => {
    // Archived facts take part in reconcile (a `replaces` naming one follows it to its successor, an old value
    // seen again joins its trace) but never go back to a file.
    const reconciled = reconcile({
      existing: [...loaded.facts, ...loaded.archived.map((entry) => entry.fact)],
      candidates,
      today: options.today,
      newId: ids,
      isForgotten,
      containsSecret,
      provenance,
      held,
      taughtAfterSaved,
    });
    // A fact learned again after curation merged it: its sources join the merged fact, no second copy.
    const repeats = absorbRepeats(
      reconciled.facts,
      reconciled.added,
      new Set(loaded.archived.filter((entry) => entry.reason === 'merged').map((entry) => entry.fact.id)),
      taughtAfterSaved === undefined
        ? undefined
        : { saved: new Map(loaded.facts.map((fact) => [fact.id, fact])), taughtAfterSaved },
    );
    return {
      ...reconciled,
      facts: repeats.facts,
      added: reconciled.added.filter((fact) => !repeats.absorbed.has(fact.id)),
    };
  };
  /** The files of the settled facts with the accepted curation results applied. */
  const render = (loaded: LoadedMemory, settled: ReconcileResult, curation: readonly AcceptedResult[]) => {
    const curated = applyCuration(settled.facts, curation, { today: options.today, newId: ids });
    return planFilesFor(
      loaded,
      { ...settled, facts: curated.facts },
      context,
      curated.merged,
      curated.unapplied,
    );
  };
  const reload = (loaded: LoadedMemory) =>
    loadMemory(memoryDir, { layout: loaded.layout, agentsMd: context.agents?.file });

  // People edit memory files without the lock: memory edited since the run read it is read again, so the draft
  // (and what curation sees of it) holds the edit. A run with no candidates has nothing to reconcile with it.
  let drafted = options.memory;
  for (
    let attempt = 0;
    options.candidates.length > 0 && attempt < HAND_EDIT_RETRIES && (await changedSince(memoryDir, drafted));
    attempt++
  )
    drafted = await reload(drafted);
  const draft = settle(drafted, options.candidates);

  const finish: WriteDraft['finish'] = async (finishing = {}) => {
    const candidates = finishing.candidates ?? options.candidates;
    const curation = finishing.curation ?? [];
    let current = drafted;
    let settled = candidates === options.candidates ? draft : settle(current, candidates);
    let planned = render(current, settled, curation);
    // A file edited since the draft is read again and the facts reconciled on what is there now, so the edit
    // is kept. With no candidates and nothing to write, no edit can be overwritten and no candidate lost, so
    // there is nothing to check (a run that found nothing new).
    const nothingToCheck = candidates.length === 0 && planned.files.size === 0;
    for (
      let attempt = 0;
      !nothingToCheck && attempt < HAND_EDIT_RETRIES && (await changedSince(memoryDir, current));
      attempt++
    ) {
      current = await reload(current);
      settled = settle(current, candidates);
      planned = render(current, settled, curation);
    }

    const consolidatedAt = now.toISOString();
    const ledgerEntries: LedgerEntry[] = options.gathered.records.map((record) => ({
      sessionId: record.sessionId,
      file: record.file,
      messageCount: record.messageCount,
      size: record.size,
      mtimeMs: record.mtimeMs,
      runId,
      consolidatedAt,
    }));
    const complete = await completePlan(memoryDir, current, planned, { runId, agents, ledgerEntries });
    return { ...complete, memory: current };
  };
  return { result: draft, finish };
}

/** Plans a write in one go: the draft finished at once with the given curation results. */
export async function planWrite(options: WriteOptions): Promise<WritePlan> {
  const draft = await draftWrite(options);
  return draft.finish({ curation: options.curation ?? [] });
}
