/**
 * The layouts of a memory folder (pure): how dreamd's facts map to files and back, how their index lines
 * link, which files are dreamd's. One table, {@link LAYOUTS}, `satisfies Record<MemoryLayout, Layout>`: a
 * layout named in `config/schema.ts` and missing here, or an entry missing a part, does not compile.
 *
 * Every layout reads the same files (what it reads is the folder, whoever wrote it): the topic files, dreamd's
 * per-fact files, the files of others. It decides only where dreamd's facts are written. `render` is a pure
 * function of the facts and of what the folder holds, so one set of facts can be written by more than one
 * layout.
 */
import type { MemoryLayout } from '../config/schema.js';
import { factFileName, renderFactFile, type FactFileRead } from './fact-file.js';
import { topicLink } from './memory-index.js';
import { MAX_WRITABLE_FILE_BYTES } from './read-memory-file.js';
import { createEmptyTopic, renderTopicFile, topicEntries, type ParsedTopic } from './topic-file.js';
import type { TopicEntry } from './topic-entry.js';
import { FACT_TYPES, TOPIC_FILES, type Fact, type FactType } from './types.js';

/** What the folder holds of dreamd's own files, as read. */
export interface LayoutFiles {
  /** The topic files that exist and parse. */
  readonly topics: Partial<Record<FactType, ParsedTopic>>;
  /** dreamd's per-fact files, by fact id. */
  readonly factFiles: ReadonlyMap<string, FactFileRead>;
  /** Bytes of every file read, by relative path: a file whose bytes would not change is not written. */
  readonly originals: ReadonlyMap<string, string>;
}

/** What a write asks of a layout. */
export interface LayoutWrite {
  /** dreamd's facts the folder holds after the write (active and superseded; hand edits already applied). */
  readonly facts: readonly Fact[];
  /** Topic files that must not be written this time (broken, read-only, too large). */
  readonly held: ReadonlySet<FactType>;
  /** Whether a file name is taken in the folder (by anyone's file). */
  readonly taken: (name: string) => boolean;
}

export interface LayoutRender {
  /** New content per relative path (null deletes); only files whose bytes change. */
  readonly files: Map<string, string | null>;
  /** Topic files that would pass {@link MAX_WRITABLE_FILE_BYTES}. */
  readonly tooLarge: readonly FactType[];
  /** What a person should know about the write (a fact cut to fit its file, a file kept for its text). */
  readonly problems: readonly { readonly file: string; readonly reason: string }[];
  /** The link target of each fact's index line. */
  readonly linkOf: (fact: Fact) => string;
}

export interface Layout {
  /** One line for the docs and `status`. */
  readonly summary: string;
  /**
   * True when a fact's type decides its file: then a topic file that cannot be written holds back the new
   * facts of its type (they wait in `.dreamd/pending.json`). False when each fact has a file of its own.
   */
  readonly typeHoldsFacts: boolean;
  /** Where the facts of a type live, for the index's "N more … in …" lines. */
  readonly whereOf: (type: FactType) => string;
  /** The files of dreamd's facts. */
  readonly render: (files: LayoutFiles, write: LayoutWrite) => LayoutRender;
}

/** Facts that have a per-fact file keep it (in every layout): their file is rendered again, or left as it is. */
function renderOwnFiles(
  files: LayoutFiles,
  facts: readonly Fact[],
  out: Map<string, string | null>,
  problems: { file: string; reason: string }[],
  options: { readonly dropSuperseded: boolean },
): Set<string> {
  const placed = new Set<string>();
  for (const fact of facts) {
    const read = files.factFiles.get(fact.id);
    if (read === undefined) continue;
    placed.add(fact.id);
    if (options.dropSuperseded && fact.status === 'superseded' && !read.fact.editedByHand) {
      // Superseded facts leave the active files: the run record keeps the bytes, rollback brings them back.
      out.set(read.file, null);
      continue;
    }
    const rendered = renderFactFile({ ...fact, file: read.file }, read.fact.editedByHand ? read : undefined);
    for (const part of rendered.cut)
      problems.push({ file: read.file, reason: `${read.file}: ${part} cut to keep the file under 4 KB` });
    if (files.originals.get(read.file) !== rendered.text) out.set(read.file, rendered.text);
  }
  // A fact file whose fact the write no longer holds was forgotten: its file goes (the run record keeps it).
  for (const [id, read] of files.factFiles) if (!placed.has(id)) out.set(read.file, null);
  return placed;
}

const TOPICS: Layout = {
  summary: 'one topic file per type (user.md, feedback.md, project.md, reference.md), each fact an entry',
  typeHoldsFacts: true,
  whereOf: (type) => TOPIC_FILES[type],
  render(files, write) {
    const out = new Map<string, string | null>();
    const problems: { file: string; reason: string }[] = [];
    const placed = renderOwnFiles(files, write.facts, out, problems, { dropSuperseded: false });
    const previous = new Map<string, TopicEntry>();
    for (const topic of Object.values(files.topics))
      for (const entry of topicEntries(topic)) previous.set(entry.fact.id, entry);
    const byId = new Map(write.facts.map((fact) => [fact.id, fact]));
    const fileOfFact = (fact: Fact): string | undefined => files.factFiles.get(fact.id)?.file;
    const locate = (id: string): { title: string; fileName: string } | undefined => {
      const fact = byId.get(id);
      return fact ? { title: fact.title, fileName: fileOfFact(fact) ?? TOPIC_FILES[fact.type] } : undefined;
    };
    const tooLarge: FactType[] = [];
    const ofTypes = new Map<FactType, Fact[]>(FACT_TYPES.map((type) => [type, []]));
    for (const fact of write.facts) if (!placed.has(fact.id)) ofTypes.get(fact.type)?.push(fact);
    for (const type of FACT_TYPES) {
      if (write.held.has(type)) continue;
      const ofType = ofTypes.get(type) ?? [];
      const existing = files.topics[type];
      if (!existing && ofType.length === 0) continue;
      const text = renderTopicFile(existing ?? createEmptyTopic(type), ofType, {
        previous,
        locate,
        adoptHandEntries: true,
      });
      if (files.originals.get(TOPIC_FILES[type]) === text) continue;
      if (Buffer.byteLength(text) > MAX_WRITABLE_FILE_BYTES) tooLarge.push(type);
      out.set(TOPIC_FILES[type], text);
    }
    const linkOf = (fact: Fact): string => fileOfFact(fact) ?? topicLink(fact);
    return { files: out, tooLarge, problems, linkOf };
  },
};

const CLAUDE_CODE: Layout = {
  summary:
    'one file per fact, as Claude Code writes its memories: <type>_<slug>.md with name, description and metadata.type',
  typeHoldsFacts: false,
  whereOf: (type) => `the ${type}_*.md files`,
  render(files, write) {
    const out = new Map<string, string | null>();
    const problems: { file: string; reason: string }[] = [];
    const placed = renderOwnFiles(files, write.facts, out, problems, { dropSuperseded: true });
    const named = new Map<string, string>();
    const used = new Set<string>();
    const taken = (name: string): boolean => used.has(name) || write.taken(name);
    for (const fact of write.facts) {
      if (placed.has(fact.id) || fact.status === 'superseded') continue;
      const name = factFileName(fact, taken);
      used.add(name);
      named.set(fact.id, name);
      const rendered = renderFactFile({ ...fact, file: name });
      for (const part of rendered.cut)
        problems.push({ file: name, reason: `${name}: ${part} cut to keep the file under 4 KB` });
      out.set(name, rendered.text);
    }
    // Topic files an earlier layout wrote: their facts now have files of their own. A topic file that cannot
    // be written stays as it is (its facts are read from their own files first); text a person wrote above the
    // entries stays in the file, without the entries.
    for (const type of FACT_TYPES) {
      const topic = files.topics[type];
      if (topic === undefined) continue;
      const fileName = TOPIC_FILES[type];
      if (write.held.has(type)) {
        problems.push({
          file: fileName,
          reason: `${fileName} cannot be rewritten, so its entries stay in it; their facts are also in their own files now. Remove ${fileName} once the problem reported for it is fixed.`,
        });
        continue;
      }
      out.set(fileName, topic.preamble.trim() === '' ? null : renderTopicFile(topic, []));
    }
    const linkOf = (fact: Fact): string =>
      named.get(fact.id) ?? files.factFiles.get(fact.id)?.file ?? topicLink(fact);
    return { files: out, tooLarge: [], problems, linkOf };
  },
};

/** The layouts, by the name a space's `layout` gives. Adding one: name it in `MemoryLayout`, then add it here. */
export const LAYOUTS = {
  topics: TOPICS,
  'claude-code': CLAUDE_CODE,
} as const satisfies Record<MemoryLayout, Layout>;
