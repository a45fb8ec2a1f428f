/**
 * One fact entry of a topic file, parsed and rendered (pure).
 *
 * An entry dreamd wrote looks like this:
 *
 *     ## Doesn't eat spicy food
 *     <a id="f-7k2m9q4x1z"></a>
 *     <!-- dreamd {"observed":"2026-11-20","updated":"2026-11-20","sources":["s1"],"hash":"3f0c…"} -->
 *     The user doesn't eat spicy food.
 *
 *     **Why:** …
 *     **How to apply:** …
 *
 * A superseded entry lives under `## Superseded` with a `### ~~Title~~` heading, its metadata carries
 * `status`, `supersededBy` and `supersededOn`, and a generated `> Superseded by …` note follows it.
 * `hash` covers the title and the text below the metadata: when they no longer match, a person edited the
 * entry, and dreamd keeps that text verbatim from then on.
 */
import { z } from 'zod';
import type { Fact, FactType } from './types.js';
import { derivedFactId } from './fact-id.js';
import { sha256 } from './hash.js';
import { TaughtAgainField } from './taught-again.js';

export const EntryMetadata = z.looseObject({
  observed: z.string(),
  updated: z.string(),
  sources: z.array(z.string()),
  status: z.enum(['active', 'superseded']).optional(),
  supersededBy: z.string().optional(),
  supersededOn: z.string().optional(),
  /** The line a memory selector picks the fact by, when the model wrote one. */
  description: z.string().optional(),
  /** Sessions after it was saved that taught it again (`taught-again.ts`). */
  taughtAgain: TaughtAgainField,
  /** A person owns the text: dreamd never rewrites it. */
  hand: z.boolean().optional(),
  hash: z.string(),
});
export type EntryMetadata = z.infer<typeof EntryMetadata>;

export type EntrySection = 'active' | 'superseded';

export interface TopicEntry {
  readonly fact: Fact;
  /** The whole entry as it stands in the file, heading to the next heading, trailing blank lines included. */
  readonly raw: string;
  /** The heading line with its line break. */
  readonly headingRaw: string;
  /** Text below the heading, anchor, metadata and note: the part a person writes. */
  readonly contentRaw: string;
  readonly section: EntrySection;
  readonly hasAnchor: boolean;
  readonly hasMetadata: boolean;
}

/** Accepts any `f-` + 10 lowercase letters or digits, so ids typed by hand are honoured too. */
const ANCHOR_LINE = /^<a id="(f-[a-z0-9]{10})"><\/a>\s*$/;
const METADATA_LINE = /^<!-- dreamd (\{.*\}) -->\s*$/;
const SUPERSEDED_NOTE = /^> Superseded by /;
const WHY_MARKER = '**Why:**';
const HOW_MARKER = '**How to apply:**';

function stripLineEnd(line: string): string {
  return line.replace(/\r?\n$/, '');
}

/** Title from a heading line: `## Title` or `### ~~Title~~`. */
export function titleFromHeading(line: string): string {
  const text = stripLineEnd(line)
    .replace(/^#+\s*/, '')
    .trim();
  const struck = /^~~(.*)~~$/.exec(text);
  return (struck?.[1] ?? text).trim();
}

/** Content hash written in the metadata: 16 hex characters of sha256 over title and normalized text. */
export function contentHash(title: string, content: string): string {
  const normalized = content
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
  return sha256(`${title.trim()}\n${normalized}`).slice(0, 16);
}

/** Body, Why and How to apply from an entry's text. */
export function splitContent(content: string): {
  body: string;
  why: string | undefined;
  howToApply: string | undefined;
} {
  const parts: Record<'body' | 'why' | 'how', string[]> = { body: [], why: [], how: [] };
  let current: 'body' | 'why' | 'how' = 'body';
  for (const rawLine of content.replace(/\r\n/g, '\n').split('\n')) {
    let line = rawLine;
    if (line.startsWith(WHY_MARKER)) {
      current = 'why';
      line = line.slice(WHY_MARKER.length);
    } else if (line.startsWith(HOW_MARKER)) {
      current = 'how';
      line = line.slice(HOW_MARKER.length);
    }
    parts[current].push(line);
  }
  const why = parts.why.join('\n').trim();
  const how = parts.how.join('\n').trim();
  return {
    body: parts.body.join('\n').trim(),
    why: parts.why.length > 0 ? why : undefined,
    howToApply: parts.how.length > 0 ? how : undefined,
  };
}

export interface ParseEntryContext {
  readonly fileName: string;
  readonly type: FactType;
  readonly section: EntrySection;
  /** Date used for entries without metadata, `YYYY-MM-DD`. */
  readonly today: string;
  /** Seed for a derived id when the entry has no anchor (unique within the file). */
  readonly idSeed: string;
}

/** Parse one entry from its lines (each with its line break). */
export function parseEntry(
  lines: readonly string[],
  context: ParseEntryContext,
): { entry: TopicEntry; warnings: string[] } {
  const warnings: string[] = [];
  const headingRaw = lines[0] ?? '';
  const title = titleFromHeading(headingRaw);
  let index = 1;
  let anchorId: string | undefined;
  let metadata: EntryMetadata | undefined;
  let metadataSeen = false;
  // The anchor and the metadata comment follow the heading directly, in either order.
  for (let step = 0; step < 2 && index < lines.length; step += 1) {
    const line = stripLineEnd(lines[index] ?? '');
    const anchor = ANCHOR_LINE.exec(line);
    const meta = METADATA_LINE.exec(line);
    if (anchor && anchorId === undefined) {
      anchorId = anchor[1];
    } else if (meta && !metadataSeen) {
      metadataSeen = true;
      metadata = parseMetadata(meta[1] ?? '');
      if (!metadata)
        warnings.push(
          `${context.fileName}: entry "${title}" has unreadable dreamd metadata; it is kept as written by hand`,
        );
    } else {
      break;
    }
    index += 1;
  }
  if (metadata?.status === 'superseded' && SUPERSEDED_NOTE.test(lines[index] ?? '')) {
    index += 1;
    if (stripLineEnd(lines[index] ?? '').trim() === '') index += 1;
  }
  const contentRaw = lines.slice(index).join('');
  const { body, why, howToApply } = splitContent(contentRaw);
  const id = anchorId ?? derivedFactId(context.idSeed);
  const editedByHand =
    metadata === undefined || metadata.hand === true || metadata.hash !== contentHash(title, contentRaw);
  const status = metadata?.status ?? context.section;
  const fact: Fact = {
    id,
    type: context.type,
    title,
    body,
    why,
    howToApply,
    observed: metadata?.observed ?? context.today,
    updated: metadata?.updated ?? context.today,
    sources: metadata?.sources ?? [],
    status,
    supersededBy: status === 'superseded' ? metadata?.supersededBy : undefined,
    supersededOn: status === 'superseded' ? metadata?.supersededOn : undefined,
    editedByHand,
    ...(metadata?.description === undefined ? {} : { description: metadata.description }),
    ...(metadata?.taughtAgain === undefined ? {} : { taughtAgain: metadata.taughtAgain }),
  };
  return {
    entry: {
      fact,
      raw: lines.join(''),
      headingRaw,
      contentRaw,
      section: context.section,
      hasAnchor: anchorId !== undefined,
      hasMetadata: metadata !== undefined,
    },
    warnings,
  };
}

function parseMetadata(json: string): EntryMetadata | undefined {
  try {
    const parsed = EntryMetadata.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** One line, no markdown heading syntax at the start. */
function cleanTitle(title: string): string {
  return title.replace(/\s+/g, ' ').trim() || 'Untitled';
}

/** Text lines that would read as a heading (and so split the entry on the next parse) are escaped. */
function escapeHeadings(text: string): string {
  return text
    .split('\n')
    .map((line) => (/^#{1,6}\s/.test(line) ? `\\${line}` : line))
    .join('\n');
}

/** The text of a fact as dreamd writes it: body, then `**Why:**` and `**How to apply:**` lines. */
export function renderContent(fact: Fact): string {
  let text = `${escapeHeadings(fact.body.trim())}\n`;
  const why = fact.why?.trim();
  const how = fact.howToApply?.trim();
  if (why || how) {
    text += '\n';
    if (why) text += `${WHY_MARKER} ${escapeHeadings(why)}\n`;
    if (how) text += `${HOW_MARKER} ${escapeHeadings(how)}\n`;
  }
  return text;
}

function metadataLine(fact: Fact, hash: string, hand: boolean): string {
  const metadata: EntryMetadata = {
    observed: fact.observed,
    updated: fact.updated,
    sources: [...fact.sources],
    ...(fact.status === 'superseded' ? { status: 'superseded' as const } : {}),
    ...(fact.status === 'superseded' && fact.supersededBy !== undefined
      ? { supersededBy: fact.supersededBy }
      : {}),
    ...(fact.status === 'superseded' && fact.supersededOn !== undefined
      ? { supersededOn: fact.supersededOn }
      : {}),
    ...(fact.description === undefined ? {} : { description: fact.description }),
    ...(fact.taughtAgain === undefined ? {} : { taughtAgain: fact.taughtAgain }),
    ...(hand ? { hand: true } : {}),
    hash,
  };
  // `--` may not appear inside an HTML comment; JSON keeps its meaning with the escape.
  return `<!-- dreamd ${JSON.stringify(metadata).replace(/--/g, '-\\u002d')} -->\n`;
}

/** Where a newer fact lives, for the "Superseded by" note. */
export type LocateFact = (id: string) => { readonly title: string; readonly fileName: string } | undefined;

function supersededNote(fact: Fact, locate: LocateFact | undefined): string {
  if (fact.supersededBy === undefined)
    return `> Superseded${fact.supersededOn ? ` on ${fact.supersededOn}` : ''}.\n\n`;
  const newer = locate?.(fact.supersededBy);
  const link = newer
    ? `[${cleanTitle(newer.title).replace(/[[\]]/g, '\\$&')}](${newer.fileName}#${fact.supersededBy})`
    : fact.supersededBy;
  return `> Superseded by ${link}${fact.supersededOn ? ` on ${fact.supersededOn}` : ''}.\n\n`;
}

function headingFor(title: string, section: EntrySection): string {
  return section === 'superseded' ? `### ~~${cleanTitle(title)}~~\n` : `## ${cleanTitle(title)}\n`;
}

/**
 * Render an entry. With `keep` (the entry a person wrote or edited), its heading (when the section is the
 * same) and its text stay byte for byte; only the anchor, metadata and note lines are dreamd's.
 */
export function renderEntry(
  fact: Fact,
  section: EntrySection,
  locate: LocateFact | undefined,
  keep?: TopicEntry,
): string {
  const note = section === 'superseded' ? supersededNote(fact, locate) : '';
  const anchor = `<a id="${fact.id}"></a>\n`;
  if (keep) {
    const heading = keep.section === section ? keep.headingRaw : headingFor(keep.fact.title, section);
    const hash = contentHash(keep.fact.title, keep.contentRaw);
    return `${heading.endsWith('\n') ? heading : `${heading}\n`}${anchor}${metadataLine(fact, hash, true)}${note}${keep.contentRaw}`;
  }
  const title = cleanTitle(fact.title);
  const content = renderContent(fact);
  return `${headingFor(title, section)}${anchor}${metadataLine(fact, contentHash(title, content), false)}${note}${content}`;
}
