/**
 * A memory directory as a whole: load the topic files and the index, and render the files a new set of
 * facts needs. `loadMemory` is the only IO here; `renderMemory` is pure.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { MemoryFormatError, errorMessage } from '../errors.js';
import { FACT_TYPES, TOPIC_FILES, type Fact, type FactType } from './types.js';
import { INDEX_FILE, buildIndex, handWrittenIndexLines } from './memory-index.js';
import { readTextIfExists } from './paths.js';
import {
  createEmptyTopic,
  parseTopicFile,
  renderTopicFile,
  topicEntries,
  type ParsedTopic,
} from './topic-file.js';
import type { TopicEntry } from './topic-entry.js';

export interface MemoryProblem {
  /** Path relative to the memory directory. */
  readonly file: string;
  readonly reason: string;
}

export interface LoadedMemory {
  readonly memoryDir: string;
  /** Every fact of the readable topic files (active and superseded), in file order. */
  readonly facts: readonly Fact[];
  /** Parsed topic files that exist and parse. */
  readonly topics: Partial<Record<FactType, ParsedTopic>>;
  /** Types whose topic file cannot be parsed: dreamd does not write them until a person fixes them. */
  readonly broken: readonly FactType[];
  /** `MEMORY.md` as it is, or null. */
  readonly indexText: string | null;
  /** Original text of every file read, by relative path (for "did it change" checks). */
  readonly originals: ReadonlyMap<string, string>;
  readonly problems: readonly MemoryProblem[];
}

/** What a topic file's read gave: its text and last modification day, null when absent, or the read error. */
type TopicRead = { readonly text: string; readonly modified: string } | null | { readonly error: unknown };

/** Names in the memory directory, or undefined when it cannot be listed (then every file is tried). */
async function listNames(memoryDir: string): Promise<ReadonlySet<string> | undefined> {
  try {
    return new Set(await readdir(memoryDir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Set();
    return undefined;
  }
}

async function readTopic(file: string): Promise<TopicRead> {
  try {
    const [text, info] = await Promise.all([readTextIfExists(file), stat(file).catch(() => undefined)]);
    if (text === null) return null;
    return { text, modified: (info?.mtime ?? new Date()).toISOString().slice(0, 10) };
  } catch (error) {
    return { error };
  }
}

/**
 * Read a memory directory. A missing directory is an empty memory. Never throws for a broken file.
 * The directory is listed once and only the files in it are read, all at once; they are then parsed in
 * the fixed order of the fact types (which decides which copy of a duplicated fact id is reported).
 */
export async function loadMemory(memoryDir: string): Promise<LoadedMemory> {
  const topics: Partial<Record<FactType, ParsedTopic>> = {};
  const broken: FactType[] = [];
  const problems: MemoryProblem[] = [];
  const originals = new Map<string, string>();
  const facts: Fact[] = [];
  const owner = new Map<string, string>();
  const names = await listNames(memoryDir);
  const present = (fileName: string): boolean => names === undefined || names.has(fileName);
  const [reads, indexText] = await Promise.all([
    Promise.all(
      FACT_TYPES.map((type) =>
        present(TOPIC_FILES[type])
          ? readTopic(path.join(memoryDir, TOPIC_FILES[type]))
          : Promise.resolve(null),
      ),
    ),
    present(INDEX_FILE) ? readTextIfExists(path.join(memoryDir, INDEX_FILE)) : Promise.resolve(null),
  ]);
  for (const [position, type] of FACT_TYPES.entries()) {
    const fileName = TOPIC_FILES[type];
    const read = reads[position] ?? null;
    if (read === null) continue;
    if ('error' in read) {
      problems.push({
        file: fileName,
        reason: `cannot be read (${errorMessage(read.error)}); not rewritten`,
      });
      broken.push(type);
      continue;
    }
    const { text } = read;
    originals.set(fileName, text);
    let topic: ParsedTopic;
    try {
      topic = parseTopicFile(text, fileName, { today: read.modified });
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
        reason: `${fileName}: fact id ${duplicate.id} also appears in ${owner.get(duplicate.id)}; remove one copy. ${fileName} is not rewritten until then.`,
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
  }
  if (indexText !== null) originals.set(INDEX_FILE, indexText);
  return { memoryDir, facts, topics, broken, indexText, originals, problems };
}

function topicFacts(topic: ParsedTopic): Fact[] {
  return topicEntries(topic).map((entry) => entry.fact);
}

export interface RenderMemoryOptions {
  /**
   * Ids of facts to remove from memory (forget). A loaded fact missing from `nextFacts` is otherwise kept
   * as it is: nothing leaves memory by omission.
   */
  readonly remove?: Iterable<string>;
  /** Reference time for the index ranking. Default: now. */
  readonly now?: Date;
}

/**
 * The files to write so the memory holds `nextFacts`: a map from relative path to new content, holding only
 * files whose bytes change (topic files and `MEMORY.md`).
 *
 * - Facts a person wrote or edited keep their text whatever `nextFacts` says; only metadata (status,
 *   superseded by/on, dates, sources) can change. Hand-written entries without an anchor get their anchor
 *   and metadata lines added, so the index can link to them.
 * - Facts of a broken type (see `loaded.broken`) are not written, and neither is their file; their lines
 *   already in `MEMORY.md` stay. Keep the sessions that produced them pending.
 */
export function renderMemory(
  loaded: LoadedMemory,
  nextFacts: readonly Fact[],
  options: RenderMemoryOptions = {},
): Map<string, string> {
  const remove = new Set(options.remove ?? []);
  const previous = new Map<string, TopicEntry>();
  for (const topic of Object.values(loaded.topics))
    for (const entry of topicEntries(topic)) previous.set(entry.fact.id, entry);

  const merged = new Map<string, Fact>();
  for (const fact of loaded.facts) if (!remove.has(fact.id)) merged.set(fact.id, fact);
  for (const fact of nextFacts) {
    if (remove.has(fact.id)) continue;
    const before = previous.get(fact.id)?.fact;
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
  const broken = new Set(loaded.broken);
  const writable = [...merged.values()].filter((fact) => !broken.has(fact.type));
  const locate = (id: string): { title: string; fileName: string } | undefined => {
    const fact = merged.get(id);
    return fact ? { title: fact.title, fileName: TOPIC_FILES[fact.type] } : undefined;
  };

  const out = new Map<string, string>();
  for (const type of FACT_TYPES) {
    if (broken.has(type)) continue;
    const ofType = writable.filter((fact) => fact.type === type);
    const existing = loaded.topics[type];
    if (!existing && ofType.length === 0) continue;
    const text = renderTopicFile(existing ?? createEmptyTopic(type), ofType, {
      previous,
      locate,
      adoptHandEntries: true,
    });
    if (loaded.originals.get(TOPIC_FILES[type]) !== text) out.set(TOPIC_FILES[type], text);
  }
  const extraLines = handWrittenIndexLines(
    loaded.indexText ?? '',
    loaded.broken.map((type) => TOPIC_FILES[type]),
  );
  if (loaded.indexText !== null || writable.length > 0 || extraLines.length > 0) {
    const index = buildIndex(writable, { now: options.now ?? new Date(), extraLines });
    if (index.text !== loaded.indexText) out.set(INDEX_FILE, index.text);
  }
  return out;
}
