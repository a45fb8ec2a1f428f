/**
 * `MEMORY.md`, the index the agent loads into its system prompt (pure).
 *
 * Limits (Claude Code reads only this much): at most 200 lines, 25,000 bytes of UTF-8, 150 characters
 * (code points) a line. The header and the "more facts" note count too.
 *
 * Ranking rule, which decides the order and, when the limits bite, which facts leave the index (they stay
 * in their topic files):
 *   1. by type: feedback, user, project, reference. Feedback first because saved corrections that are not
 *      applied later is the most common complaint about agent memory;
 *   2. within a type, most recently updated first (age in days relative to `now`; a future date counts as
 *      today);
 *   3. then more source sessions first (a fact seen in many sessions is better established);
 *   4. then id, so the output is deterministic.
 * Only active facts are listed. Lines are filled in that order; a line that would pass the byte limit is
 * skipped and the next, shorter ones are tried. Linear after one sort: 10,000 facts take a few ms.
 */
import { TOPIC_FILES, type Fact, type FactType } from './types.js';

export const INDEX_FILE = 'MEMORY.md';
export const INDEX_LIMITS = { maxLines: 200, maxBytes: 25_000, maxLineChars: 150 } as const;
export const INDEX_HEADER = '# Memory index';
const TYPE_RANK: Readonly<Record<FactType, number>> = { feedback: 0, user: 1, project: 2, reference: 3 };
const DAY_MS = 86_400_000;
/** A hook shorter than this is not worth keeping: shorten the title instead. */
const MIN_HOOK_CHARS = 24;
const ELLIPSIS = '…';

export interface BuildIndexOptions {
  /** Reference time for recency. */
  readonly now: Date;
  /** Lines a person (or Claude Code) wrote in MEMORY.md, kept after the header; they count toward the limits. */
  readonly extraLines?: readonly string[];
}

export interface MemoryIndex {
  readonly text: string;
  /** Ids of the facts listed, in order. */
  readonly included: readonly string[];
  /** Ids of the active facts left out to respect the limits. */
  readonly omitted: readonly string[];
}

/** Cut to at most `max` code points, ending with "…" when cut. */
export function truncateChars(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  if (max <= 0) return '';
  return (
    chars
      .slice(0, max - 1)
      .join('')
      .trimEnd() + ELLIPSIS
  );
}

function charLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The first meaningful line of the fact, without markdown list or quote markers. */
export function hookOf(fact: Fact): string {
  const source = fact.body.trim() === '' ? (fact.why ?? '') : fact.body;
  const first = source.split('\n').find((line) => line.trim() !== '') ?? '';
  return oneLine(first.replace(/^\s*(?:[-*+>]|#{1,6}|\d+\.)\s+/, '').replace(/\*\*/g, ''));
}

/** One index line, at most `maxLineChars` characters: the hook is shortened first, then the title. */
export function indexLine(fact: Fact): string {
  const title = oneLine(fact.title).replace(/\[/g, '(').replace(/\]/g, ')') || fact.id;
  const target = `${TOPIC_FILES[fact.type]}#${fact.id}`;
  const hook = hookOf(fact);
  const room = INDEX_LIMITS.maxLineChars - charLength(`- []()${target}`);
  if (hook === '') return `- [${truncateChars(title, room)}](${target})`;
  const separator = ' — ';
  const shownTitle = truncateChars(title, Math.max(1, room - separator.length - MIN_HOOK_CHARS));
  const hookRoom = room - charLength(shownTitle) - separator.length;
  return `- [${shownTitle}](${target})${separator}${truncateChars(hook, hookRoom)}`;
}

interface Ranked {
  readonly fact: Fact;
  readonly typeRank: number;
  readonly ageDays: number;
}

function dayNumber(date: string): number {
  const time = Date.parse(date);
  return Number.isNaN(time) ? Number.NEGATIVE_INFINITY : Math.floor(time / DAY_MS);
}

/** Active facts in ranking order (see the rule above). */
export function rankFacts(facts: readonly Fact[], now: Date): Fact[] {
  const today = Math.floor(now.getTime() / DAY_MS);
  const ranked: Ranked[] = [];
  for (const fact of facts) {
    if (fact.status !== 'active') continue;
    const updated = dayNumber(fact.updated);
    ranked.push({ fact, typeRank: TYPE_RANK[fact.type], ageDays: Math.max(0, today - updated) });
  }
  ranked.sort(
    (a, b) =>
      a.typeRank - b.typeRank ||
      a.ageDays - b.ageDays ||
      b.fact.sources.length - a.fact.sources.length ||
      (a.fact.id < b.fact.id ? -1 : a.fact.id > b.fact.id ? 1 : 0),
  );
  return ranked.map((entry) => entry.fact);
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function moreNote(count: number): string {
  return `(${count} more ${count === 1 ? 'fact' : 'facts'} in the topic files, not listed here)`;
}

/** Build `MEMORY.md` from the facts. Deterministic for the same facts, `now` and extra lines. */
export function buildIndex(facts: readonly Fact[], options: BuildIndexOptions): MemoryIndex {
  const lines: string[] = [INDEX_HEADER];
  let bytes = byteLength(INDEX_HEADER) + 1;
  const fits = (line: string): boolean =>
    lines.length < INDEX_LIMITS.maxLines && bytes + byteLength(line) + 1 <= INDEX_LIMITS.maxBytes;
  for (const extra of options.extraLines ?? []) {
    const line = truncateChars(extra.trimEnd(), INDEX_LIMITS.maxLineChars);
    if (line === '' || !fits(line)) continue;
    lines.push(line);
    bytes += byteLength(line) + 1;
  }
  const firstFactLine = lines.length;
  const ranked = rankFacts(facts, options.now);
  const included: Fact[] = [];
  const omitted: Fact[] = [];
  for (const fact of ranked) {
    const line = lines.length < INDEX_LIMITS.maxLines ? indexLine(fact) : '';
    if (line !== '' && fits(line)) {
      lines.push(line);
      bytes += byteLength(line) + 1;
      included.push(fact);
    } else {
      omitted.push(fact);
    }
  }
  if (omitted.length > 0) {
    // Make room for the note by giving up the least valuable listed facts.
    while (!fits(moreNote(omitted.length)) && lines.length > firstFactLine) {
      const dropped = lines.pop() ?? '';
      bytes -= byteLength(dropped) + 1;
      const fact = included.pop();
      if (fact) omitted.unshift(fact);
    }
    const note = moreNote(omitted.length);
    if (fits(note)) lines.push(note);
  }
  return {
    text: `${lines.join('\n')}\n`,
    included: included.map((fact) => fact.id),
    omitted: omitted.map((fact) => fact.id),
  };
}

const FACT_LINE = /^- \[.*\]\((?:user|feedback|project|reference)\.md#f-[a-z0-9]{10}\)/;
const NOTE_LINE = /^\(\d+ more facts? in the topic files, not listed here\)$/;

/**
 * Lines of an existing `MEMORY.md` that dreamd did not generate (a person's notes, Claude Code's links to
 * its own topic files). They are carried into the next index.
 */
export function handWrittenIndexLines(indexText: string, brokenFiles: readonly string[] = []): string[] {
  return indexText
    .replace(/\r\n/g, '\n')
    .split('\n')
    .filter((line) => {
      if (line.trim() === '' || line === INDEX_HEADER || NOTE_LINE.test(line)) return false;
      if (!FACT_LINE.test(line)) return true;
      // Lines pointing into a topic file that cannot be parsed stay: their facts cannot be re-listed.
      return brokenFiles.some((file) => line.includes(`](${file}#`));
    });
}
