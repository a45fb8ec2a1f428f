/**
 * A topic file (`user.md`, `feedback.md`, `project.md`, `reference.md`): frontmatter, an optional preamble
 * a person wrote, one `## ` entry per active fact, and a `## Superseded` section with the facts newer ones
 * replaced (never deleted). Pure functions: `parseTopicFile` then `renderTopicFile` with the same facts
 * gives back the same bytes, because untouched parts keep their raw text.
 */
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { MemoryFormatError } from '../errors.js';
import { FACT_TYPES, MEMORY_TYPES, TOPIC_FILES, typeOfTopicFile, type Fact, type FactType } from './types.js';
import { derivedFactId } from './fact-id.js';
import {
  parseEntry,
  renderEntry,
  type EntrySection,
  type LocateFact,
  type TopicEntry,
} from './topic-entry.js';

export const TopicFrontmatter = z.looseObject({
  name: z.string().min(1),
  description: z.string(),
  type: z.enum(FACT_TYPES),
});
export type TopicFrontmatter = z.infer<typeof TopicFrontmatter>;

export type TopicBlock =
  | { readonly kind: 'entry'; readonly entry: TopicEntry }
  | { readonly kind: 'superseded'; readonly headRaw: string; readonly entries: readonly TopicEntry[] };

export interface ParsedTopic {
  readonly fileName: string;
  readonly type: FactType;
  /** The frontmatter block with both `---` lines; empty when the file has none (one is added on rewrite). */
  readonly frontmatterRaw: string;
  readonly frontmatter: TopicFrontmatter | undefined;
  /** Text between the frontmatter and the first `## ` heading, as written. */
  readonly preamble: string;
  readonly blocks: readonly TopicBlock[];
  /** Entries kept but worth telling a person about (unreadable metadata, duplicate ids). */
  readonly warnings: readonly string[];
}

/** Heading of the section that holds superseded facts. */
export const SUPERSEDED_HEADING = 'Superseded';

function frontmatterText(type: FactType): string {
  const { name, description } = MEMORY_TYPES[type];
  // Through the YAML writer, so a description with ': ' or quotes stays valid.
  return `---\n${stringifyYaml({ name, description, type }, { lineWidth: 0 })}---\n`;
}

/** A topic file that does not exist yet. */
export function createEmptyTopic(type: FactType): ParsedTopic {
  const { name, description } = MEMORY_TYPES[type];
  return {
    fileName: TOPIC_FILES[type],
    type,
    frontmatterRaw: frontmatterText(type),
    frontmatter: { name, description, type },
    preamble: '\n',
    blocks: [],
    warnings: [],
  };
}

function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

function isFence(line: string): boolean {
  return /^\s*(```|~~~)/.test(line);
}

function formatError(fileName: string, problem: string, cause?: unknown): MemoryFormatError {
  return new MemoryFormatError(
    `${fileName}: ${problem}. Fix the frontmatter between the two '---' lines at the top of ${fileName} ` +
      `(it needs name, description and type); dreamd will not rewrite ${fileName} until it parses.`,
    fileName,
    cause === undefined ? undefined : { cause },
  );
}

function parseFrontmatter(
  lines: readonly string[],
  fileName: string,
): { raw: string; data: TopicFrontmatter; end: number } {
  const close = lines.findIndex(
    (line, index) => index > 0 && /^(---|\.\.\.)\s*$/.test(line.replace(/\r?\n$/, '')),
  );
  if (close < 0) throw formatError(fileName, "frontmatter starts with '---' but never ends");
  const yamlText = lines.slice(1, close).join('');
  let value: unknown;
  try {
    value = parseYaml(yamlText);
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw formatError(fileName, `frontmatter is not valid YAML (${detail})`, error);
  }
  const parsed = TopicFrontmatter.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `field "${issue.path.join('.')}"` : 'frontmatter';
    throw formatError(fileName, `${where}: ${issue?.message ?? 'invalid'}`);
  }
  const expected = typeOfTopicFile(fileName);
  if (expected !== undefined && parsed.data.type !== expected) {
    throw formatError(
      fileName,
      `frontmatter says type "${parsed.data.type}" but ${fileName} holds "${expected}" facts`,
    );
  }
  return { raw: lines.slice(0, close + 1).join(''), data: parsed.data, end: close + 1 };
}

/** Split lines into groups that each start with a heading matched by `isHeading` (outside code fences). */
function splitAtHeadings(
  lines: readonly string[],
  isHeading: (line: string) => boolean,
): { lead: string[]; groups: string[][] } {
  const lead: string[] = [];
  const groups: string[][] = [];
  let inFence = false;
  for (const line of lines) {
    if (!inFence && isHeading(line)) groups.push([line]);
    else (groups.at(-1) ?? lead).push(line);
    if (isFence(line)) inFence = !inFence;
  }
  return { lead, groups };
}

const H2 = (line: string): boolean => /^## (?!#)/.test(line);
const H3 = (line: string): boolean => /^### (?!#)/.test(line);

function isSupersededHeading(line: string): boolean {
  return line.replace(/^##\s*/, '').trim() === SUPERSEDED_HEADING;
}

export interface ParseTopicOptions {
  /** Date given to entries a person wrote without metadata, `YYYY-MM-DD`. Default: today (UTC). */
  readonly today?: string;
}

/**
 * Parse a topic file. Throws MemoryFormatError (naming the file and the fix) when the frontmatter is
 * broken; the caller must then leave the file alone. Hand-written entries without an anchor get an id
 * derived from the file name and heading, so every load agrees on it.
 */
export function parseTopicFile(text: string, fileName: string, options: ParseTopicOptions = {}): ParsedTopic {
  const today = options.today ?? new Date().toISOString().slice(0, 10);
  const lines = splitLines(text);
  let frontmatterRaw = '';
  let frontmatter: TopicFrontmatter | undefined;
  let bodyStart = 0;
  if (/^---\s*$/.test((lines[0] ?? '').replace(/\r?\n$/, ''))) {
    const parsed = parseFrontmatter(lines, fileName);
    frontmatterRaw = parsed.raw;
    frontmatter = parsed.data;
    bodyStart = parsed.end;
  }
  const type = typeOfTopicFile(fileName) ?? frontmatter?.type;
  if (type === undefined)
    throw formatError(fileName, 'no frontmatter type and the file name is not a topic file');

  const warnings: string[] = [];
  const seenIds = new Set<string>();
  const headingCounts = new Map<string, number>();
  const entryFrom = (entryLines: string[], section: EntrySection): TopicEntry => {
    const heading = (entryLines[0] ?? '').trim();
    const occurrence = headingCounts.get(heading) ?? 0;
    headingCounts.set(heading, occurrence + 1);
    const idSeed = `${fileName}\n${heading}\n${occurrence}`;
    const result = parseEntry(entryLines, { fileName, type, section, today, idSeed });
    warnings.push(...result.warnings);
    let entry = result.entry;
    if (seenIds.has(entry.fact.id)) {
      // A copied entry: the copy becomes a hand-written fact of its own.
      const id = derivedFactId(`${idSeed}\nduplicate`);
      warnings.push(
        `${fileName}: id ${entry.fact.id} appears twice; the entry "${entry.fact.title}" was given ${id}`,
      );
      entry = { ...entry, fact: { ...entry.fact, id, editedByHand: true } };
    }
    seenIds.add(entry.fact.id);
    return entry;
  };

  const { lead, groups } = splitAtHeadings(lines.slice(bodyStart), H2);
  const blocks: TopicBlock[] = groups.map((group): TopicBlock => {
    if (!isSupersededHeading(group[0] ?? '')) return { kind: 'entry', entry: entryFrom(group, 'active') };
    const inner = splitAtHeadings(group.slice(1), H3);
    return {
      kind: 'superseded',
      headRaw: (group[0] ?? '') + inner.lead.join(''),
      entries: inner.groups.map((entryLines) => entryFrom(entryLines, 'superseded')),
    };
  });
  return { fileName, type, frontmatterRaw, frontmatter, preamble: lead.join(''), blocks, warnings };
}

/** Every entry of a parsed topic, in file order. */
export function topicEntries(topic: ParsedTopic): TopicEntry[] {
  return topic.blocks.flatMap((block) => (block.kind === 'entry' ? [block.entry] : block.entries));
}

/** Facts of a parsed topic, in file order. */
export function topicFacts(topic: ParsedTopic): Fact[] {
  return topicEntries(topic).map((entry) => entry.fact);
}

export interface RenderTopicOptions {
  /** Entries by fact id from every topic file, so a fact that changes type keeps a person's text. */
  readonly previous?: ReadonlyMap<string, TopicEntry>;
  /** Where a newer fact lives, for the links in "Superseded by" notes. */
  readonly locate?: LocateFact;
  /** Give hand-written entries without an anchor their anchor and metadata (their text is untouched). */
  readonly adoptHandEntries?: boolean;
}

/** A fact's fields a rewrite may change in a person's entry (its text stays theirs). */
export const METADATA_FIELDS = [
  'observed',
  'updated',
  'status',
  'supersededBy',
  'supersededOn',
  'description',
] as const;
/** A fact's own words. */
export const TEXT_FIELDS = ['title', 'body', 'why', 'howToApply'] as const;

function sameFact(a: Fact, b: Fact, compareText: boolean): boolean {
  if (a.type !== b.type) return false;
  if (METADATA_FIELDS.some((field) => a[field] !== b[field])) return false;
  if (a.sources.length !== b.sources.length || a.sources.some((source, index) => source !== b.sources[index]))
    return false;
  return !compareText || TEXT_FIELDS.every((field) => a[field] === b[field]);
}

interface Chunk {
  readonly text: string;
  readonly generated: boolean;
}

/**
 * Join the chunks, a blank line around generated ones. Linear: the parts go into an array and only the last
 * two characters written are tracked (`endsWith` on a growing string would copy it every time: quadratic).
 */
function joinChunks(chunks: readonly Chunk[]): string {
  const parts: string[] = [];
  let tail = '';
  let written = false;
  let previousGenerated = false;
  const push = (text: string): void => {
    if (text === '') return;
    parts.push(text);
    tail = text.length >= 2 ? text.slice(-2) : (tail + text).slice(-2);
    written = true;
  };
  for (const chunk of chunks) {
    if (written && (chunk.generated || previousGenerated)) {
      if (!tail.endsWith('\n')) push('\n\n');
      else if (tail !== '\n\n') push('\n');
    } else if (written && !tail.endsWith('\n')) {
      push('\n');
    }
    push(chunk.text);
    previousGenerated = chunk.generated;
  }
  return parts.join('');
}

/**
 * Render a topic file holding exactly `facts` (those of other types are ignored). Entries whose fact did
 * not change keep their raw bytes; an entry a person wrote or edited keeps its text verbatim whatever the
 * fact says (only its metadata can change); new active facts go after the last active entry, superseded
 * ones into the `## Superseded` section.
 */
export function renderTopicFile(
  topic: ParsedTopic,
  facts: readonly Fact[],
  options: RenderTopicOptions = {},
): string {
  const wanted = new Map<string, Fact>();
  for (const fact of facts) if (fact.type === topic.type) wanted.set(fact.id, fact);
  const own = new Map(topicEntries(topic).map((entry) => [entry.fact.id, entry]));
  const emitted = new Set<string>();

  const chunkFor = (fact: Fact, section: EntrySection): Chunk => {
    emitted.add(fact.id);
    const previous = own.get(fact.id) ?? options.previous?.get(fact.id);
    const isOwn = own.get(fact.id) === previous && previous !== undefined;
    const keepText = previous !== undefined && previous.fact.editedByHand;
    const needsAdoption =
      keepText && options.adoptHandEntries === true && !(previous.hasAnchor && previous.hasMetadata);
    if (
      previous &&
      isOwn &&
      previous.section === section &&
      !needsAdoption &&
      sameFact(previous.fact, fact, !keepText)
    ) {
      return { text: previous.raw, generated: false };
    }
    return {
      text: renderEntry(fact, section, options.locate, keepText ? previous : undefined),
      generated: true,
    };
  };
  const sectionOf = (fact: Fact): EntrySection => (fact.status === 'superseded' ? 'superseded' : 'active');

  const newActive = facts.filter(
    (fact) =>
      wanted.get(fact.id) === fact && sectionOf(fact) === 'active' && !isPlacedAs(own, fact.id, 'active'),
  );
  const newSuperseded = facts.filter(
    (fact) =>
      wanted.get(fact.id) === fact &&
      sectionOf(fact) === 'superseded' &&
      !isPlacedAs(own, fact.id, 'superseded'),
  );

  const chunks: Chunk[] = [
    { text: topic.frontmatterRaw || frontmatterText(topic.type), generated: topic.frontmatterRaw === '' },
  ];
  if (topic.preamble !== '') chunks.push({ text: topic.preamble, generated: false });
  const appendNewActive = (): void => {
    for (const fact of newActive) if (!emitted.has(fact.id)) chunks.push(chunkFor(fact, 'active'));
  };
  let supersededSeen = false;
  for (const block of topic.blocks) {
    if (block.kind === 'entry') {
      const fact = wanted.get(block.entry.fact.id);
      if (fact && sectionOf(fact) === 'active') chunks.push(chunkFor(fact, 'active'));
      continue;
    }
    appendNewActive();
    supersededSeen = true;
    chunks.push({ text: block.headRaw, generated: false });
    for (const entry of block.entries) {
      const fact = wanted.get(entry.fact.id);
      if (fact && sectionOf(fact) === 'superseded') chunks.push(chunkFor(fact, 'superseded'));
    }
    for (const fact of newSuperseded) if (!emitted.has(fact.id)) chunks.push(chunkFor(fact, 'superseded'));
  }
  appendNewActive();
  const pendingSuperseded = newSuperseded.filter((fact) => !emitted.has(fact.id));
  if (!supersededSeen && pendingSuperseded.length > 0) {
    chunks.push({
      text: `## ${SUPERSEDED_HEADING}\n\nOlder facts that newer ones replaced, kept for the record. They are not in the index.\n`,
      generated: true,
    });
    for (const fact of pendingSuperseded) chunks.push(chunkFor(fact, 'superseded'));
  }
  return joinChunks(chunks);
}

function isPlacedAs(own: ReadonlyMap<string, TopicEntry>, id: string, section: EntrySection): boolean {
  return own.get(id)?.section === section;
}
