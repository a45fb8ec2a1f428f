/**
 * A memory directory as a whole: load the topic files and the index, and render the files a new set of
 * facts needs. `loadMemory` is the only IO here; `renderMemory` is pure.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { MemoryFormatError } from '../errors.js';
import type { MemoryLayout } from '../config/schema.js';
import { parseFactFile, type FactFileRead } from '../memory/fact-file.js';
import { parseMemoryFile } from '../memory/claude-code-file.js';
import { LAYOUTS } from '../memory/layouts.js';
import { FACT_TYPES, TOPIC_FILES, typeOfTopicFile, type Fact, type FactType } from '../memory/types.js';
import { INDEX_FILE, buildIndex, type MemoryIndex } from '../memory/memory-index.js';
import { outsideProblems, outsideText, splitIndexFile } from '../memory/index-block.js';
import { loadForeignFiles } from '../memory/foreign-files.js';
import { indexFileFacts } from '../memory/index-file-facts.js';
import { isTeamFact, type Sharing } from '../memory/agents-block.js';
import { readSharing, readTeamMemory, type TeamMemory } from './team-memory.js';
import { filesUnderReview } from './review.js';
import { parseDeferredFacts, serializeDeferredFacts, type DeferredFactsRead } from './deferred.js';
import { FACT_USE_FILE, parseFactUse, serializeFactUse, type FactUseFile } from './fact-use.js';
import { MAX_WRITABLE_FILE_BYTES, readMemoryFile, type MemoryFileRead } from '../memory/read-memory-file.js';
import { ARCHIVE_FILE, DEFERRED_FACTS_FILE, REVIEW_FILE, readTextIfExists } from './paths.js';
import { readArchive, type ArchiveEntry } from './archive.js';
import {
  METADATA_FIELDS,
  parseTopicFile,
  TEXT_FIELDS,
  topicEntries,
  type ParsedTopic,
} from '../memory/topic-file.js';
import type { TopicEntry } from '../memory/topic-entry.js';

export interface MemoryProblem {
  /** Path relative to the memory directory. */
  readonly file: string;
  readonly reason: string;
}

export interface LoadedMemory {
  readonly memoryDir: string;
  /**
   * How a write places dreamd's facts (`memory/layouts.ts`): the one asked for, else the one the folder
   * shows (dreamd's per-fact files and no topic file: `claude-code`; otherwise `topics`).
   */
  readonly layout: MemoryLayout;
  /** dreamd's per-fact files (the `claude-code` layout's), by fact id. */
  readonly factFiles: ReadonlyMap<string, FactFileRead>;
  /** Names in the folder's top level (empty when it could not be listed): a new file takes a free name. */
  readonly names: ReadonlySet<string>;
  /**
   * Every fact of memory (active and superseded): the readable topic files in file order, then the facts
   * held back in `.dreamd/pending.json` (which replace a file's copy of the same id: they are newer).
   */
  readonly facts: readonly Fact[];
  /** Parsed topic files that exist and parse. */
  readonly topics: Partial<Record<FactType, ParsedTopic>>;
  /**
   * Types whose topic file dreamd must not write this run: it does not parse, shares a fact id with another
   * file, or is read-only (symlink, CRLF, BOM, too big). Their new facts wait in the pending file.
   */
  readonly broken: readonly FactType[];
  /** Ids of the facts that come from the pending file. */
  readonly pendingIds: ReadonlySet<string>;
  /**
   * Facts that left the active files (`.dreamd/archive.json`): not in `facts`, never written back to a file,
   * still memory for history, search and recall of the past.
   */
  readonly archived: readonly ArchiveEntry[];
  /** False when the archive exists but cannot be read: nothing moves to it until a person restores it. */
  readonly archiveReadable: boolean;
  /** Reads of each fact counted from the transcripts so far (`.dreamd/fact-use.json`; empty when missing). */
  readonly factUse: FactUseFile;
  /** Files of other owners listed in `.dreamd/review.md` (contradicted): kept, not listed in the index. */
  readonly underReview: ReadonlySet<string>;
  /** `MEMORY.md` as it is, or null. */
  readonly indexText: string | null;
  /** False when `MEMORY.md` must not be written (a symlink, unreadable). */
  readonly indexWritable: boolean;
  /** Original text of every file read, by relative path (for "did it change" checks). */
  readonly originals: ReadonlyMap<string, string>;
  readonly problems: readonly MemoryProblem[];
  /** Lines of the `AGENTS.md` block written back as they are, by fact id (`team-memory.ts`); empty without one. */
  readonly keptAgentsLines: ReadonlyMap<string, string>;
  /** A person's moves between personal and shared memory (`.dreamd/sharing.json`). */
  readonly sharing: Sharing;
}

/** Names in the memory directory, or undefined when it cannot be listed (then every file is tried). */
async function listNames(memoryDir: string): Promise<ReadonlySet<string> | undefined> {
  try {
    return new Set(await readdir(memoryDir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Set();
    return undefined;
  }
}

const ABSENT: MemoryFileRead = { kind: 'absent' };

export interface LoadMemoryOptions {
  /** The layout the next write uses (a space's configured one). Default: the one the folder shows. */
  readonly layout?: MemoryLayout;
  /** The repository's `AGENTS.md` the space writes (`agentsMd`): its team facts are memory too. */
  readonly agentsMd?: string | undefined;
}

/** What reading the files gathers beside the facts: the problems found and every file's original text, in read order. */
interface ReadNotes {
  readonly problems: MemoryProblem[];
  readonly originals: Map<string, string>;
}

/** The topic files, parsed in the fixed order of the fact types; a file that fails or shares an id is broken. */
function readTopicFiles(
  reads: readonly MemoryFileRead[],
  notes: ReadNotes,
): { topics: Partial<Record<FactType, ParsedTopic>>; broken: FactType[]; facts: Fact[] } {
  const { problems, originals } = notes;
  const topics: Partial<Record<FactType, ParsedTopic>> = {};
  const broken: FactType[] = [];
  const facts: Fact[] = [];
  const owner = new Map<string, string>();
  for (const [position, type] of FACT_TYPES.entries()) {
    const fileName = TOPIC_FILES[type];
    const fileRead = reads[position] ?? ABSENT;
    if (fileRead.kind === 'absent') continue;
    if (fileRead.kind === 'skipped') {
      problems.push({ file: fileName, reason: fileRead.reason });
      broken.push(type);
      continue;
    }
    originals.set(fileName, fileRead.raw);
    for (const reason of fileRead.readOnly) problems.push({ file: fileName, reason });
    let topic: ParsedTopic;
    try {
      topic = parseTopicFile(fileRead.text, fileName, { today: fileRead.modified });
    } catch (error) {
      if (!(error instanceof MemoryFormatError)) throw error;
      problems.push({ file: fileName, reason: error.message });
      broken.push(type);
      continue;
    }
    const duplicate = topicFacts(topic).find((fact) => owner.has(fact.id));
    if (duplicate) {
      problems.push({
        file: fileName,
        reason: `${fileName}: fact id ${duplicate.id} also appears in ${owner.get(duplicate.id)}; remove one copy (with its <a id> line). ${fileName} is not rewritten until then.`,
      });
      broken.push(type);
      continue;
    }
    for (const warning of topic.warnings) problems.push({ file: fileName, reason: warning });
    for (const fact of topicFacts(topic)) {
      owner.set(fact.id, fileName);
      facts.push(fact);
    }
    topics[type] = topic;
    if (fileRead.readOnly.length > 0) broken.push(type);
  }
  return { topics, broken, facts };
}

/** dreamd's per-fact files by id; a second file with the same id is read as a file of its own (a copy). */
function readFactFiles(
  claimed: ReadonlyMap<string, string>,
  problems: MemoryProblem[],
): { factFiles: Map<string, FactFileRead>; copies: Fact[] } {
  const factFiles = new Map<string, FactFileRead>();
  const copies: Fact[] = [];
  const today = (): string => new Date().toISOString().slice(0, 10);
  for (const [relative, text] of claimed) {
    const read = parseFactFile(text, relative);
    if (read === undefined) continue;
    const other = factFiles.get(read.fact.id);
    if (other !== undefined) {
      problems.push({
        file: relative,
        reason: `${relative}: fact id ${read.fact.id} is also the id of ${other.file}; ${relative} is read as a file of its own that dreamd does not change. Delete one copy, or remove the id from its metadata.`,
      });
      copies.push(parseMemoryFile(text, { relative, modified: today(), owner: 'other' }).fact);
      continue;
    }
    factFiles.set(read.fact.id, read);
  }
  return { factFiles, copies };
}

/** The facts held back in the pending file, with a problem saying what waits there and for which file. */
function readPendingFacts(pendingText: string | null, notes: ReadNotes): DeferredFactsRead {
  const { problems, originals } = notes;
  const pending = parseDeferredFacts(pendingText);
  if (pendingText !== null) originals.set(DEFERRED_FACTS_FILE, pendingText);
  if (pending.problem !== undefined) problems.push({ file: DEFERRED_FACTS_FILE, reason: pending.problem });
  if (pending.facts.length > 0) {
    const waiting = [...new Set(pending.facts.map((fact) => TOPIC_FILES[fact.type]))].join(', ');
    problems.push({
      file: DEFERRED_FACTS_FILE,
      reason: `${pending.facts.length} fact(s) for ${waiting} wait in ${DEFERRED_FACTS_FILE} until that file can be written again; they land on the next run after it is fixed.`,
    });
  }
  return pending;
}

/** `MEMORY.md`: its text, whether dreamd may write its block, and the facts written as lines outside it. */
function readIndexFile(
  indexRead: MemoryFileRead,
  notes: ReadNotes,
): { indexText: string | null; indexWritable: boolean; lineFacts: Fact[] } {
  const { problems, originals } = notes;
  if (indexRead.kind === 'skipped') {
    problems.push({ file: INDEX_FILE, reason: indexRead.reason });
    return { indexText: null, indexWritable: false, lineFacts: [] };
  }
  if (indexRead.kind !== 'read') return { indexText: null, indexWritable: true, lineFacts: [] };
  let indexWritable = true;
  const indexText = indexRead.raw;
  originals.set(INDEX_FILE, indexRead.raw);
  // Only the symlink case stops dreamd writing its block: every byte outside the block is kept as it is anyway.
  if (indexRead.readOnly.some((reason) => reason.includes('symlink'))) {
    indexWritable = false;
    problems.push({
      file: INDEX_FILE,
      reason: `${INDEX_FILE} is a symlink; dreamd does not write its block into it. Replace the link with the file itself.`,
    });
  }
  const parts = splitIndexFile(indexText);
  for (const reason of outsideProblems(parts)) problems.push({ file: INDEX_FILE, reason });
  // Facts written as lines of MEMORY.md itself (outside dreamd's block): memory, like any file.
  const lineFacts = indexFileFacts(outsideText(parts), {
    modified: indexRead.modified,
    isReadFile: (file) => originals.has(file),
  });
  return { indexText, indexWritable, lineFacts };
}

/** The facts with the team's: a teammate's update supersedes this space's fact, and the team's facts follow. */
function withTeamFacts(merged: readonly Fact[], team: TeamMemory | undefined): readonly Fact[] {
  if (team === undefined) return merged;
  return [
    ...merged.map((fact) => {
      const by = team.superseded.get(fact.id);
      return by === undefined
        ? fact
        : { ...fact, status: 'superseded' as const, supersededBy: by.id, supersededOn: by.updated };
    }),
    ...team.facts,
  ];
}

/** Every file a load reads, all at once: the topic files, the index, dreamd's state files and the others' files. */
async function readMemoryFiles(memoryDir: string, names: ReadonlySet<string> | undefined) {
  const present = (fileName: string): boolean => names === undefined || names.has(fileName);
  const read = (fileName: string): Promise<MemoryFileRead> =>
    present(fileName) ? readMemoryFile(memoryDir, fileName) : Promise.resolve(ABSENT);
  const isOwn = (relative: string): boolean =>
    relative === INDEX_FILE || typeOfTopicFile(relative) !== undefined;
  const [reads, indexRead, pendingText, foreign, reviewText, factUseText, archive] = await Promise.all([
    Promise.all(FACT_TYPES.map((type) => read(TOPIC_FILES[type]))),
    read(INDEX_FILE),
    readTextIfExists(path.join(memoryDir, DEFERRED_FACTS_FILE)).catch(() => null),
    loadForeignFiles(memoryDir, isOwn, (relative, text) => parseFactFile(text, relative) !== undefined),
    readTextIfExists(path.join(memoryDir, REVIEW_FILE)).catch(() => null),
    readTextIfExists(path.join(memoryDir, FACT_USE_FILE)).catch(() => null),
    readArchive(() => readTextIfExists(path.join(memoryDir, ARCHIVE_FILE))),
  ]);
  return { reads, indexRead, pendingText, foreign, reviewText, factUseText, archive };
}

/**
 * Read a memory directory. A missing directory is an empty memory. Never throws for a broken file.
 * The directory is listed once and only the files in it are read, all at once; they are then parsed in
 * the fixed order of the fact types (which decides which copy of a duplicated fact id is reported).
 * Every layout's files are read whatever the layout: a fact in a file of its own is read from there first.
 */
export async function loadMemory(memoryDir: string, options: LoadMemoryOptions = {}): Promise<LoadedMemory> {
  const notes: ReadNotes = { problems: [], originals: new Map<string, string>() };
  const { problems, originals } = notes;
  const names = await listNames(memoryDir);
  const { reads, indexRead, pendingText, foreign, reviewText, factUseText, archive } = await readMemoryFiles(
    memoryDir,
    names,
  );
  const { topics, broken, facts } = readTopicFiles(reads, notes);
  const { factFiles, copies } = readFactFiles(foreign.claimed, problems);
  const pending = readPendingFacts(pendingText, notes);
  const pendingIds = new Set(pending.facts.map((fact) => fact.id));
  problems.push(...foreign.problems);
  for (const [file, text] of foreign.originals) originals.set(file, text);
  if (reviewText !== null) originals.set(REVIEW_FILE, reviewText);
  const { indexText, indexWritable, lineFacts } = readIndexFile(indexRead, notes);
  const ownFileFacts = [...factFiles.values()].map((read) => read.fact);
  const merged = [
    ...facts.filter((fact) => !pendingIds.has(fact.id) && !factFiles.has(fact.id)),
    ...ownFileFacts.filter((fact) => !pendingIds.has(fact.id)),
    ...foreign.facts,
    ...copies,
    ...lineFacts,
    ...pending.facts,
  ];
  // The team's facts of the repository's AGENTS.md: memory too; a teammate's update supersedes this space's fact.
  const team =
    options.agentsMd === undefined
      ? undefined
      : await readTeamMemory(
          options.agentsMd,
          merged,
          new Set(archive.entries.map((entry) => entry.fact.id)),
        );
  if (team?.problem !== undefined && options.agentsMd !== undefined)
    problems.push({ file: options.agentsMd, reason: team.problem });
  const withTeam = withTeamFacts(merged, team);
  const sharing = await readSharing(memoryDir);
  const underReview = filesUnderReview(reviewText);
  if (factUseText !== null) originals.set(FACT_USE_FILE, factUseText);
  if (archive.text !== null) originals.set(ARCHIVE_FILE, archive.text);
  if (archive.problem !== undefined) problems.push({ file: ARCHIVE_FILE, reason: archive.problem });
  // A fact found in an active file is active memory, whatever the archive says (a rollback of the archive alone).
  const inFiles = new Set(withTeam.map((fact) => fact.id));
  const topicFactCount = Object.values(topics).reduce((count, topic) => count + topicFacts(topic).length, 0);
  return {
    memoryDir,
    layout: options.layout ?? shownLayout(topicFactCount, factFiles.size, foreign.facts),
    factFiles,
    names: names ?? new Set(),
    factUse: parseFactUse(factUseText),
    facts: withTeam,
    topics,
    broken,
    pendingIds,
    archived: archive.entries.filter((entry) => !inFiles.has(entry.fact.id)),
    archiveReadable: archive.problem === undefined,
    underReview,
    indexText,
    indexWritable,
    originals,
    problems,
    keptAgentsLines: team?.keptLines ?? new Map(),
    sharing,
  };
}

/**
 * The layout a folder shows, for a write that names none (an agent's note, `memory forget`): topic files with
 * facts mean `topics`; dreamd's per-fact files, or Claude Code's own memories (`<type>_<slug>.md` with a
 * description) and no topic file, mean `claude-code`; any other folder means `topics`.
 */
/** A memory file named the way Claude Code names its own: `<type>_<slug>.md`, in the folder's top level. */
const CLAUDE_CODE_NAME = new RegExp(`^(?:${FACT_TYPES.join('|')})_[^/]+\\.md$`);

function shownLayout(topicFacts: number, ownFiles: number, foreign: readonly Fact[]): MemoryLayout {
  if (topicFacts > 0) return 'topics';
  if (ownFiles > 0) return 'claude-code';
  const claudeCodeFiles = foreign.filter(
    (fact) => fact.file !== undefined && CLAUDE_CODE_NAME.test(fact.file) && fact.description !== undefined,
  );
  return claudeCodeFiles.length > 0 ? 'claude-code' : 'topics';
}

function topicFacts(topic: ParsedTopic): Fact[] {
  return topicEntries(topic).map((entry) => entry.fact);
}

export interface RenderMemoryOptions {
  /** Reads counted up to this run: the index orders each type's facts by them, and the state file is written. */
  readonly factUse?: FactUseFile;
  /**
   * Ids of facts to remove from memory (forget). A loaded fact missing from `nextFacts` is otherwise kept
   * as it is: nothing leaves memory by omission.
   */
  readonly remove?: Iterable<string>;
  /** Reference time for the index ranking. Default: now. */
  readonly now?: Date;
  /** Files of other owners put under review by this write (added to `loaded.underReview`). */
  readonly underReview?: Iterable<string>;
}

/** What a write of the memory holds: the files that change, and what a person should know about it. */
export interface MemoryFilesPlan {
  /** New content per relative path (null deletes); only files whose bytes change. */
  readonly files: Map<string, string | null>;
  /** Facts that wait in the pending file because their topic file cannot be written. */
  readonly pending: readonly Fact[];
  /** Why facts wait, why the index is smaller than it could be: for the run summary. */
  readonly problems: readonly MemoryProblem[];
  /** The index as built (null when `MEMORY.md` is not written). */
  readonly index: MemoryIndex | null;
  /** The file a fact lives in after the write, relative to the memory folder (its index line's link, no anchor). */
  readonly fileOf: (fact: Fact) => string;
}

const FACT_FIELDS = ['type', ...TEXT_FIELDS, ...METADATA_FIELDS] as const;

function sameFact(a: Fact, b: Fact): boolean {
  return (
    FACT_FIELDS.every((field) => a[field] === b[field]) &&
    a.sources.length === b.sources.length &&
    a.sources.every((source, index) => source === b.sources[index])
  );
}

/**
 * The files to write so the memory holds `nextFacts`, holding only files whose bytes change (topic files,
 * `MEMORY.md`, the pending file).
 *
 * - Facts a person wrote or edited keep their text whatever `nextFacts` says; only metadata (status,
 *   superseded by/on, dates, sources) can change. Hand-written entries without an anchor get their anchor
 *   and metadata lines added, so the index can link to them.
 * - A broken type's file (see `loaded.broken`) is not written. Its facts that are not in the file as they
 *   are (new, or changed) go to the pending file, and land in the topic file on the first write after it is
 *   fixed. Nothing the caller passes is dropped.
 * - A topic file that would pass {@link MAX_WRITABLE_FILE_BYTES} is not written either (dreamd would not
 *   rewrite it afterwards): it is treated like a broken one for this write, its new facts wait in the
 *   pending file, and a problem says to move old entries out.
 */
export function planMemoryFiles(
  loaded: LoadedMemory,
  nextFacts: readonly Fact[],
  options: RenderMemoryOptions = {},
): MemoryFilesPlan {
  const plan = planMemoryFilesWithin(loaded, nextFacts, options, new Set());
  if (plan.overLimit.length === 0) return plan;
  // One more pass with those files held back: each topic file renders alone, so no other one grows by it.
  const held = new Set(plan.overLimit);
  const again = planMemoryFilesWithin(loaded, nextFacts, options, held);
  const problems: MemoryProblem[] = [...held].map((type) => ({
    file: TOPIC_FILES[type],
    reason: `${TOPIC_FILES[type]} would pass ${MAX_WRITABLE_FILE_BYTES / 1024 / 1024} MB, the most dreamd writes; it is kept as it is and its new facts wait in ${DEFERRED_FACTS_FILE}. Move old entries to another file and the next run writes them.`,
  }));
  return {
    files: again.files,
    pending: again.pending,
    problems: [...problems, ...again.problems],
    index: again.index,
    fileOf: again.fileOf,
  };
}

function planMemoryFilesWithin(
  loaded: LoadedMemory,
  nextFacts: readonly Fact[],
  options: RenderMemoryOptions,
  overLimit: ReadonlySet<FactType>,
): MemoryFilesPlan & { readonly overLimit: readonly FactType[] } {
  const remove = new Set(options.remove ?? []);
  const previous = new Map<string, TopicEntry>();
  for (const topic of Object.values(loaded.topics))
    for (const entry of topicEntries(topic)) previous.set(entry.fact.id, entry);

  const merged = new Map<string, Fact>();
  for (const fact of loaded.facts) if (!remove.has(fact.id)) merged.set(fact.id, fact);
  for (const fact of nextFacts) {
    if (remove.has(fact.id)) continue;
    const before = previous.get(fact.id)?.fact ?? loaded.factFiles.get(fact.id)?.fact;
    merged.set(
      fact.id,
      before?.editedByHand
        ? {
            ...fact,
            title: before.title,
            body: before.body,
            why: before.why,
            howToApply: before.howToApply,
            editedByHand: true,
          }
        : fact,
    );
  }
  const layout = LAYOUTS[loaded.layout];
  const broken = new Set([...loaded.broken, ...overLimit]);
  // A fact with a file of its own, or any fact in a layout of one file per fact, never waits for a topic file.
  const heldBack = (fact: Fact): boolean =>
    broken.has(fact.type) && layout.typeHoldsFacts && !loaded.factFiles.has(fact.id);
  const onDisk = (fact: Fact): boolean => {
    const entry = loaded.topics[fact.type] === undefined ? undefined : previous.get(fact.id);
    return entry !== undefined && entry.fact.type === fact.type && sameFact(entry.fact, fact);
  };
  const writable: Fact[] = [];
  const pending: Fact[] = [];
  const listable: Fact[] = [];
  const underReview = new Set([...loaded.underReview, ...(options.underReview ?? [])]);
  for (const fact of merged.values()) {
    if (fact.owner === 'other') {
      // Someone else's file: never written, never held back; listed unless a newer fact contradicts it, or
      // it is a line of MEMORY.md itself (already in the file, outside the block).
      if (fact.file === INDEX_FILE || isTeamFact(fact)) continue;
      if (fact.file === undefined || !underReview.has(fact.file)) listable.push(fact);
    } else if (!heldBack(fact)) {
      writable.push(fact);
      listable.push(fact);
    } else if (onDisk(fact)) {
      listable.push(fact);
    } else {
      pending.push(fact);
    }
  }
  // Compared without case: on a case-insensitive disk (macOS, Windows) `User_x.md` is `user_x.md`.
  const takenNames = new Set([...loaded.originals.keys(), ...loaded.names].map((name) => name.toLowerCase()));
  const rendered = layout.render(
    { topics: loaded.topics, factFiles: loaded.factFiles, originals: loaded.originals },
    { facts: writable, held: broken, taken: (name) => takenNames.has(name.toLowerCase()) },
  );
  const out = new Map<string, string | null>(rendered.files);
  const tooLarge = [...rendered.tooLarge];
  // The counts are written when reads were counted, or with the other files of a write; a run that changes
  // nothing else and found no read stays a run that changed nothing (its sessions are looked at again later,
  // and their messages hold no read anyway).
  const factUseText = options.factUse === undefined ? undefined : serializeFactUse(options.factUse);
  const factUseBefore = loaded.originals.get(FACT_USE_FILE) ?? null;
  const readsCounted =
    options.factUse !== undefined &&
    JSON.stringify(options.factUse.facts) !== JSON.stringify(loaded.factUse.facts);
  const pendingText = serializeDeferredFacts(pending);
  if (pendingText !== (loaded.originals.get(DEFERRED_FACTS_FILE) ?? null))
    out.set(DEFERRED_FACTS_FILE, pendingText);

  const problems: MemoryProblem[] = [...rendered.problems];
  if (pending.length > 0) {
    const files = [...new Set(pending.map((fact) => TOPIC_FILES[fact.type]))];
    problems.push({
      file: DEFERRED_FACTS_FILE,
      reason:
        `${pending.length} fact(s) for ${files.join(', ')} are held back in ${DEFERRED_FACTS_FILE}: ${files.join(', ')} cannot be written ` +
        '(see the problem reported for it). Fix it and the next run writes them there.',
    });
  }
  // Lines pointing into a topic file that was not read stay as they are: their facts cannot be re-listed.
  const unread = FACT_TYPES.filter((type) => broken.has(type) && loaded.topics[type] === undefined).map(
    (type) => TOPIC_FILES[type],
  );
  const keepLines = splitIndexFile(loaded.indexText).blockLines.filter((line) =>
    unread.some((file) => line.includes(`](${file}#`)),
  );
  let index: MemoryIndex | null = null;
  if (loaded.indexWritable && (loaded.indexText !== null || listable.length > 0)) {
    const outside = outsideText(splitIndexFile(loaded.indexText));
    // A file the lines outside the block already link to is listed there: not twice.
    const skip = (fact: Fact): boolean =>
      fact.file !== undefined && (outside.includes(`](${fact.file})`) || outside.includes(`](${fact.file}#`));
    index = buildIndex(listable, {
      linkOf: rendered.linkOf,
      whereOf: layout.whereOf,
      use: (options.factUse ?? loaded.factUse).facts,
      now: options.now ?? new Date(),
      existing: loaded.indexText,
      keepLines,
      skip,
    });
    for (const reason of index.problems) problems.push({ file: INDEX_FILE, reason });
    if (index.writable && index.text !== (loaded.indexText ?? '')) out.set(INDEX_FILE, index.text);
  }
  if (factUseText !== undefined && factUseText !== factUseBefore && (readsCounted || out.size > 0)) {
    out.set(FACT_USE_FILE, factUseText);
  }
  const fileOf = (fact: Fact): string => rendered.linkOf(fact).replace(/#.*$/, '');
  return { files: out, pending, problems, index, overLimit: tooLarge, fileOf };
}

/** The files to write so the memory holds `nextFacts` (see {@link planMemoryFiles}). */
export function renderMemory(
  loaded: LoadedMemory,
  nextFacts: readonly Fact[],
  options: RenderMemoryOptions = {},
): Map<string, string | null> {
  return planMemoryFiles(loaded, nextFacts, options).files;
}
