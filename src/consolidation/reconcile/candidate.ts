/**
 * Cleaning of the model's candidate facts before reconcile: one-line titles, trimmed text, real dates (a future
 * one brought back to today), sorted unique sources; and the total order reconcile applies them in.
 */
import type { FactType } from '../../memory/types.js';
import { DESCRIPTION_MAX_CHARS, TITLE_MAX_CHARS, type ExtractedFact } from '../extraction/extraction.js';
import { bodyKey, normalizeText } from '../facts/similarity.js';

/** A candidate after cleaning: one-line title, trimmed text, valid date, sorted unique sources. */
export interface Candidate {
  readonly original: ExtractedFact;
  readonly type: FactType;
  readonly title: string;
  readonly body: string;
  readonly why: string | undefined;
  readonly howToApply: string | undefined;
  /** One line for a memory selector ({@link DESCRIPTION_MAX_CHARS} at most), when the model wrote one. */
  readonly description: string | undefined;
  readonly observed: string;
  readonly sources: readonly string[];
  readonly replaces: readonly string[];
  /** Normalised body ({@link bodyKey}): equal keys are exact duplicates, whatever the type. */
  readonly key: string;
}

/** Collapses a title to one line and cuts it to {@link TITLE_MAX_CHARS} at a word boundary when it can. */
export function cleanTitle(title: string): string {
  const line = title.replace(/\s+/gu, ' ').trim();
  if (line.length <= TITLE_MAX_CHARS) return line;
  const cut = line.slice(0, TITLE_MAX_CHARS - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space >= TITLE_MAX_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** A description on one line, cut to {@link DESCRIPTION_MAX_CHARS} at a word boundary when it can. */
export function cleanDescription(text: string | null | undefined): string | undefined {
  const line = (text ?? '').replace(/\s+/gu, ' ').trim();
  if (line === '') return undefined;
  if (line.length <= DESCRIPTION_MAX_CHARS) return line;
  const cut = line.slice(0, DESCRIPTION_MAX_CHARS - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space >= DESCRIPTION_MAX_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** `YYYY-MM-DD` when the text starts with a real calendar date (a time after it is ignored), else undefined. */
export function parseDay(text: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:$|[T ])/u.exec(text.trim());
  if (match === null) return undefined;
  const [, year, month, day] = match;
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  const iso = date.toISOString().slice(0, 10);
  return iso === `${year}-${month}-${day}` ? iso : undefined;
}

function optionalText(text: string | null | undefined): string | undefined {
  const trimmed = text?.trim() ?? '';
  return trimmed === '' ? undefined : trimmed;
}

export function uniqueSorted(items: readonly string[]): string[] {
  return [...new Set(items.map((item) => item.trim()).filter((item) => item !== ''))].sort();
}

export function clean(original: ExtractedFact, today: string): Candidate | string {
  const title = cleanTitle(original.title);
  const body = original.body.trim();
  if (title === '') return 'empty title';
  if (body === '') return 'empty body';
  const day = parseDay(original.observed);
  if (day === undefined) return `observed date "${original.observed}" is not a YYYY-MM-DD date`;
  return {
    original,
    type: original.type,
    title,
    body,
    why: optionalText(original.why),
    howToApply: optionalText(original.howToApply),
    description: cleanDescription(original.description),
    observed: day > today ? today : day,
    sources: uniqueSorted(original.sources),
    replaces: uniqueSorted(original.replaces),
    key: bodyKey(body),
  };
}

export function allText(candidate: ExtractedFact): string {
  return [candidate.title, candidate.body, candidate.why ?? '', candidate.howToApply ?? ''].join('\n');
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Oldest first, then by content: a total order, so sorting makes the input order irrelevant. */
export function compareCandidates(a: Candidate, b: Candidate): number {
  return (
    compareStrings(a.observed, b.observed) ||
    compareStrings(a.type, b.type) ||
    compareStrings(normalizeText(a.title), normalizeText(b.title)) ||
    compareStrings(normalizeText(a.body), normalizeText(b.body)) ||
    compareStrings(a.title, b.title) ||
    compareStrings(a.body, b.body) ||
    compareStrings(a.why ?? '', b.why ?? '') ||
    compareStrings(a.howToApply ?? '', b.howToApply ?? '') ||
    compareStrings(a.sources.join('\n'), b.sources.join('\n')) ||
    compareStrings(a.replaces.join('\n'), b.replaces.join('\n'))
  );
}
