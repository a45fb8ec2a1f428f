/**
 * One fact in a file of its own, as Claude Code writes its memories (pure): the file of the `claude-code`
 * layout. Named `<type>_<slug>.md` (`feedback_testing.md`), it reads:
 *
 *     ---
 *     name: Run the integration tests against a real Redis
 *     description: Testing rule — integration tests must hit a real Redis, never a mock (mocks hid a broken migration)
 *     metadata:
 *       type: feedback
 *       modified: 2026-11-20
 *       id: f-7k2m9q4x1z
 *       observed: 2026-11-20
 *       sources: [s1]
 *       hash: 3f0c…
 *     ---
 *
 *     Integration tests hit a real Redis, never a mock.
 *
 *     **Why:** a mocked queue hid a broken migration last quarter.
 *     **How to apply:** start redis-server in the test's global setup.
 *
 * Claude Code picks a memory from its file name and `description` alone and reads only the first 4,096 bytes
 * of what it picks, so each file holds one fact and stays under {@link MAX_FACT_FILE_BYTES}. `id`, `observed`,
 * `sources` and `hash` are dreamd's: the file is dreamd's while they are there. `hash` covers the name, the
 * description and the text; when they no longer match, a person edited the file and dreamd keeps its text
 * (name, description and body) byte for byte from then on, rewriting only the metadata.
 */
import { stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { readFrontmatter } from './claude-code-file.js';
import { hookOf } from './memory-index.js';
import { TaughtAgainField, taughtAgainNote, withoutTaughtAgainNote } from './taught-again.js';
import { contentHash, renderContent, splitContent } from './topic-entry.js';
import { FACT_OWNERS, FACT_TYPES, type Fact } from './types.js';

/** Largest file the layout writes: under the 4,096 bytes Claude Code reads of a memory file. */
export const MAX_FACT_FILE_BYTES = 4_000;
/** Longest slug of a file name (the part after `<type>_`). */
const MAX_SLUG_CHARS = 40;

const FactFileMetadata = z.looseObject({
  type: z.enum(FACT_TYPES),
  modified: z.string().optional(),
  /** Any `f-` + 10 lowercase letters or digits, as in a topic file's anchor (ids typed by hand are honoured). */
  id: z.string().regex(/^f-[a-z0-9]{10}$/),
  observed: z.string(),
  sources: z.array(z.string()),
  hash: z.string(),
  status: z.enum(['active', 'superseded']).optional(),
  supersededBy: z.string().optional(),
  supersededOn: z.string().optional(),
  owner: z.enum(FACT_OWNERS).optional(),
  /** Sessions after it was saved that taught it again (`taught-again.ts`). */
  taughtAgain: TaughtAgainField,
  /** A person owns the text: dreamd never rewrites it. */
  hand: z.boolean().optional(),
});

/** A file of the `claude-code` layout as read: the fact, and what a rewrite must keep of the person's text. */
export interface FactFileRead {
  readonly fact: Fact;
  /** File name, relative to the memory folder. */
  readonly file: string;
  /** The text after the frontmatter, as written (kept byte for byte once edited by hand). */
  readonly bodyRaw: string;
  /** The description as written, the repeated-correction note included (kept byte for byte once edited by hand). */
  readonly descriptionRaw: string;
}

function dateText(value: unknown): string | undefined {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString().slice(0, 10);
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value)) return value.slice(0, 10);
  return undefined;
}

function hashOf(name: string, description: string, content: string): string {
  return contentHash(name, `${description.trim()}\n${content}`);
}

/**
 * Read a file as one of dreamd's per-fact files, or undefined when it is not one (no dreamd metadata: a
 * person's or Claude Code's own memory, read elsewhere as theirs).
 */
export function parseFactFile(text: string, file: string): FactFileRead | undefined {
  const { data, body, hasFrontmatter } = readFrontmatter(text);
  if (!hasFrontmatter) return undefined;
  // The type as Claude Code writes it now (`metadata.type`), or as it used to (a top-level `type`).
  const declared = data.metadata?.type ?? data.type;
  const parsed = FactFileMetadata.safeParse(
    data.metadata === undefined ? undefined : { ...data.metadata, type: declared?.trim().toLowerCase() },
  );
  if (!parsed.success) return undefined;
  const metadata = parsed.data;
  const name = data.name?.trim() ?? '';
  const description = data.description?.trim() ?? '';
  const content = body.replace(/^\r?\n/, '');
  const { body: rule, why, howToApply } = splitContent(content);
  const updated = dateText(metadata.modified) ?? metadata.observed;
  const status = metadata.status ?? 'active';
  const fact: Fact = {
    id: metadata.id,
    type: metadata.type,
    title: name === '' ? metadata.id : name,
    body: rule,
    why,
    howToApply,
    observed: dateText(metadata.observed) ?? updated,
    updated,
    sources: metadata.sources,
    status,
    supersededBy: status === 'superseded' ? metadata.supersededBy : undefined,
    supersededOn: status === 'superseded' ? metadata.supersededOn : undefined,
    editedByHand: metadata.hand === true || metadata.hash !== hashOf(name, description, content),
    ...(metadata.owner === 'agent' ? { owner: 'agent' as const } : {}),
    file,
    // The note in front is written from the count (`descriptionOf`): the fact's own description is what follows it.
    ...(description === '' ? {} : { description: withoutTaughtAgainNote(description) }),
    ...(metadata.taughtAgain === undefined ? {} : { taughtAgain: metadata.taughtAgain }),
  };
  return { fact, file, bodyRaw: content, descriptionRaw: description };
}

/** Words of a title as a file name's slug: lowercase ASCII letters and digits joined by `_`, at most 40 characters. */
export function slugOf(title: string): string {
  const words = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '');
  let slug = '';
  for (const word of words) {
    const next = slug === '' ? word : `${slug}_${word}`;
    if (next.length > MAX_SLUG_CHARS) break;
    slug = next;
  }
  return slug === '' ? (words[0]?.slice(0, MAX_SLUG_CHARS) ?? '') : slug;
}

/**
 * The file name of a new fact, as Claude Code names its memories: `<type>_<slug>.md`. When the name is
 * taken (by any file of the folder, or another fact of this write), the fact id's first characters follow.
 */
export function factFileName(fact: Fact, taken: (name: string) => boolean): string {
  const slug = slugOf(fact.title);
  const base = slug === '' ? `${fact.type}_${fact.id.slice(2)}` : `${fact.type}_${slug}`;
  if (!taken(`${base}.md`)) return `${base}.md`;
  for (let length = 4; length <= 10; length += 2) {
    const name = `${base}_${fact.id.slice(2, 2 + length)}.md`;
    if (!taken(name)) return name;
  }
  return `${fact.type}_${fact.id.slice(2)}.md`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * The description a fact's file carries: the one the model wrote for Claude Code's selector, else the fact's
 * first line (the index line's hook either way, so a file read back lists the same line); a fact taught again
 * after it was saved says so first ("Repeated correction (taught again 3×): …"), so the selector picks it.
 */
export function descriptionOf(fact: Fact): string {
  return `${taughtAgainNote(fact)}${hookOf(fact) || oneLine(fact.title)}`;
}

function frontmatter(fact: Fact, name: string, description: string, hash: string, hand: boolean): string {
  const metadata = {
    type: fact.type,
    modified: fact.updated,
    id: fact.id,
    observed: fact.observed,
    sources: [...fact.sources],
    hash,
    ...(fact.status === 'superseded' ? { status: 'superseded' } : {}),
    ...(fact.status === 'superseded' && fact.supersededBy !== undefined
      ? { supersededBy: fact.supersededBy }
      : {}),
    ...(fact.status === 'superseded' && fact.supersededOn !== undefined
      ? { supersededOn: fact.supersededOn }
      : {}),
    ...(fact.owner === 'agent' ? { owner: 'agent' } : {}),
    ...(fact.taughtAgain === undefined ? {} : { taughtAgain: fact.taughtAgain }),
    ...(hand ? { hand: true } : {}),
  };
  return `---\n${stringifyYaml({ name, description, metadata }, { lineWidth: 0, flowCollectionPadding: false })}---\n\n`;
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Cut to at most `bytes` UTF-8 bytes, at a code point, ending with "…" when cut. */
function cutToBytes(text: string, bytes: number): string {
  if (byteLength(text) <= bytes) return text;
  let out = '';
  for (const char of text) {
    if (byteLength(out + char) > bytes - 3) break;
    out += char;
  }
  return `${out.trimEnd()}…`;
}

export interface RenderedFactFile {
  readonly text: string;
  /** What was cut to keep the file under {@link MAX_FACT_FILE_BYTES}, for the run summary (empty: nothing). */
  readonly cut: readonly string[];
}

/**
 * The file of one fact. With `keep` (a file a person edited), its name, description and text stay byte for
 * byte and only the metadata is dreamd's. A fact dreamd wrote is kept under {@link MAX_FACT_FILE_BYTES}:
 * the oldest sources past the last five are left out of the file first, then the text is shortened.
 */
export function renderFactFile(fact: Fact, keep?: FactFileRead): RenderedFactFile {
  if (keep !== undefined) {
    const name = keep.fact.title;
    const description = keep.descriptionRaw;
    return {
      text: `${frontmatter(fact, name, description, hashOf(name, description, keep.bodyRaw), true)}${keep.bodyRaw}`,
      cut: [],
    };
  }
  const name = oneLine(fact.title) || fact.id;
  const cut: string[] = [];
  let description = descriptionOf(fact);
  let current = fact;
  const render = (): string => {
    const content = renderContent(current);
    return `${frontmatter(current, name, description, hashOf(name, description, content), false)}${content}`;
  };
  let text = render();
  if (byteLength(text) <= MAX_FACT_FILE_BYTES) return { text, cut };
  if (current.sources.length > 5) {
    current = { ...current, sources: current.sources.slice(-5) };
    cut.push(`${fact.sources.length - 5} older source(s)`);
    text = render();
  }
  if (byteLength(text) > MAX_FACT_FILE_BYTES && byteLength(description) > 300) {
    description = cutToBytes(description, 300);
    cut.push('the description');
    text = render();
  }
  for (const field of ['howToApply', 'why', 'body'] as const) {
    const over = byteLength(text) - MAX_FACT_FILE_BYTES;
    if (over <= 0) break;
    const value = current[field];
    if (value === undefined || value === '') continue;
    const room = Math.max(40, byteLength(value) - over - 8);
    current = { ...current, [field]: cutToBytes(value, room) };
    cut.push(field === 'howToApply' ? 'How to apply' : field === 'why' ? 'Why' : 'the text');
    text = render();
  }
  return { text, cut };
}
