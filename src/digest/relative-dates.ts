/**
 * Relative dates resolved against the date a message was written, so a fact read weeks later still carries
 * the day it happened: "last Thursday" in a message of 2026-11-26 becomes "last Thursday [2026-11-19]".
 * The expression is kept and the absolute date added in brackets after it; the model copies the date.
 *
 * Rules (deterministic; weeks run Monday to Sunday, as ISO 8601 has them):
 * - today / yesterday / tomorrow / the day before yesterday / the day after tomorrow: ±0, 1, 2 days.
 * - N days ago, N weeks ago (N in digits or one…twelve, "a"/"an"): N or 7·N days back; in N days / weeks: ahead.
 * - last <weekday>: the most recent such day strictly before today, 1–7 days back. On a Thursday,
 *   "last Thursday" is 7 days back; on a Saturday, "last Thursday" is 2 days back (not the Thursday of the
 *   week before: people say "last Thursday" on a Saturday for the day two days ago).
 * - next <weekday>: the first such day strictly after today, 1–7 days ahead.
 * - this <weekday>: that day in the current Monday–Sunday week (may be past or coming).
 * - on <weekday>: the closest such day in the direction of the sentence's tense: ahead (1–7 days) when a
 *   future cue ("will", "'ll", "going to", "plan to", "by", "until", …) comes earlier in the sentence,
 *   otherwise back (1–7 days), since transcripts mostly report what happened.
 * - last week / this week / next week: "[week of <Monday>]". last month / this month / next month: "[YYYY-MM]".
 * An expression already followed by a bracketed date is left alone, so resolving twice changes nothing.
 *
 * Then `chrono-dates.ts` (chrono-node) resolves the rest, in English, Portuguese and Spanish: abbreviated
 * weekdays, weekends, years, nights, seasons, "N months ago", "a few days ago", "há 3 dias", "ontem",
 * "el viernes pasado" … Expressions neither knows are left as written.
 */

import { resolveWithChrono } from './chrono-dates.js';

const DAY_MS = 86_400_000;

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;

const NUMBER_WORDS: Readonly<Record<string, number>> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
};

const WEEKDAY = String.raw`(?:mon|tues|wednes|thurs|fri|satur|sun)day`;
const COUNT = String.raw`(?:\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)`;

/** Longest alternatives first, so "the day before yesterday" wins over "yesterday". */
const ALTERNATIVES = [
  String.raw`the day before yesterday`,
  String.raw`the day after tomorrow`,
  String.raw`(?<agoCount>${COUNT})\s+(?<agoUnit>days?|weeks?)\s+ago`,
  String.raw`in\s+(?<inCount>${COUNT})\s+(?<inUnit>days?|weeks?)`,
  String.raw`(?<weekdayWord>last|next|this|on)\s+(?<weekday>${WEEKDAY})`,
  String.raw`(?<periodWord>last|this|next)\s+(?<period>week|month)`,
  String.raw`(?<single>today|yesterday|tomorrow)`,
];

/** Not followed by a bracketed date already (resolving twice changes nothing). */
const NOT_RESOLVED = String.raw`(?!(?:'s)?\s*\[(?:\d{4}-\d{2}|week of))`;

const EXPRESSION = new RegExp(
  String.raw`\b(?:${ALTERNATIVES.map((alternative) => `(?:${alternative})`).join('|')})\b(?:'s)?${NOT_RESOLVED}`,
  'gi',
);

/**
 * The same expression, tried at one position only (sticky). The search runs from the anchors below rather
 * than over every word of the text, which is where a text-wide search of ten alternatives spends its time.
 */
const EXPRESSION_AT = new RegExp(EXPRESSION.source, 'iy');

/**
 * Every expression holds one of these words (weekdays end in "day"), and the first one it holds is never
 * more than three words into it: `the day …`, `in two weeks`, `last wednes|day`, `yester|day`. A text
 * without them is left alone; in a text with them, an expression is only looked for just before each.
 */
const ANCHOR = /day|week|month|tomorrow/gi;

/**
 * The single-word expressions, tried at the start of the word an anchor ends: an anchor inside `today`,
 * `yesterday` or `tomorrow` begins no longer expression (the two that end in one, "the day before yesterday"
 * and "the day after tomorrow", hold an earlier anchor, `day`, which was searched from first), so when the
 * word is one of them, the expression is that word. The common case, without the walk back and the tries of
 * every alternative at each word before it.
 */
const SINGLE_AT = new RegExp(String.raw`(?<single>today|yesterday|tomorrow)\b(?:'s)?${NOT_RESOLVED}`, 'iy');
/** Lengths of the single words, from the end of the anchor they hold: `to|day`, `yester|day`, `tomorrow`. */
const SINGLE_WORD_LENGTHS = [5, 9, 8] as const;

/**
 * Non-blank characters walked back over a word: the anchor with the word fused before it (`wednesday`,
 * `yesterday`: up to 14) from the anchor's end, then words before it (`twelve`, `the`), with room to spare.
 */
const ANCHOR_WORD_CHARS = 16;
/** Words an expression can hold before its first anchor (`in` `two` `weeks`): the word fused with it and two. */
const ANCHOR_WORDS_BEFORE = 2;

/** `\s` of a regular expression, for one UTF-16 code unit. */
function isSpace(code: number): boolean {
  if (code === 0x20 || (code >= 0x09 && code <= 0x0d)) return true;
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** `[A-Za-z0-9_]`: what `\b` counts as a word character (no `u` flag). */
function isWordChar(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x5f
  );
}

/**
 * No expression whose first anchor ends at `anchorEnd` starts before the returned index: walking back over
 * the anchor and the word fused with it, then over up to two blank runs and the words before them, each
 * step as far as it may go, never stops later than the start of any such expression.
 */
function earliestStart(text: string, anchorEnd: number): number {
  let index = anchorEnd;
  for (let word = 0; word <= ANCHOR_WORDS_BEFORE; word += 1) {
    if (word > 0) {
      const blanksEnd = index;
      while (index > 0 && isSpace(text.charCodeAt(index - 1))) index -= 1;
      if (index === blanksEnd) break;
    }
    const wordEnd = index;
    while (index > 0 && wordEnd - index < ANCHOR_WORD_CHARS && !isSpace(text.charCodeAt(index - 1)))
      index -= 1;
  }
  return index;
}

/**
 * The leftmost expression starting in [from, anchorEnd), as `text.replace(EXPRESSION)` would find it, or
 * null. Only word starts are tried: every alternative begins with `\b` and a word character.
 */
function expressionBefore(text: string, from: number, anchorEnd: number): RegExpExecArray | null {
  for (const length of SINGLE_WORD_LENGTHS) {
    const start = anchorEnd - length;
    if (start < from || (start > 0 && isWordChar(text.charCodeAt(start - 1)))) continue;
    SINGLE_AT.lastIndex = start;
    const match = SINGLE_AT.exec(text);
    if (match !== null && start + (match.groups?.['single']?.length ?? 0) === anchorEnd) return match;
  }
  for (let start = Math.max(from, earliestStart(text, anchorEnd)); start < anchorEnd; start += 1) {
    if (!isWordChar(text.charCodeAt(start)) || (start > 0 && isWordChar(text.charCodeAt(start - 1))))
      continue;
    EXPRESSION_AT.lastIndex = start;
    const match = EXPRESSION_AT.exec(text);
    if (match !== null) return match;
  }
  return null;
}

/** A cue in the sentence that "on <weekday>" looks ahead ("on Sunday I am going to the beach"). */
const FUTURE_CUE =
  /\b(?:will|shall|won't|going to|gonna|plan(?:ning)? to|want to|need to|have to|should|until|till|by|before|next|upcoming|(?:am|are|is) (?:going|leaving|flying|driving|meeting|visiting|coming|starting|moving|travell?ing|getting|having|seeing|taking))\b|'(?:ll|m going|re going|s going)\b/i;

/** Characters looked back for a tense cue, within the same sentence. */
const TENSE_LOOKBACK_CHARS = 80;

interface Day {
  /** Milliseconds of 00:00 UTC of the day: only used as a calendar counter, no time zone involved. */
  readonly ms: number;
}

function parseDay(date: string): Day | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(date);
  if (match === null) return undefined;
  const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return Number.isNaN(ms) ? undefined : { ms };
}

/**
 * The last reference date parsed, and formatted days. A digest resolves every text of a session against
 * one or a few dates, so both are asked for the same values thousands of times; the cache of formatted days
 * is cleared when it passes `FORMATTED_DAYS_KEPT` entries (a few hundred bytes each at most).
 */
let lastReference: { readonly date: string; readonly day: Day | undefined } | undefined;
const formattedDays = new Map<number, string>();
const FORMATTED_DAYS_KEPT = 4_096;

function referenceDay(date: string): Day | undefined {
  if (lastReference?.date !== date) lastReference = { date, day: parseDay(date) };
  return lastReference.day;
}

function addDays(day: Day, days: number): Day {
  return { ms: day.ms + days * DAY_MS };
}

function formatDay(day: Day): string {
  let formatted = formattedDays.get(day.ms);
  if (formatted === undefined) {
    if (formattedDays.size >= FORMATTED_DAYS_KEPT) formattedDays.clear();
    formatted = new Date(day.ms).toISOString().slice(0, 10);
    formattedDays.set(day.ms, formatted);
  }
  return formatted;
}

function weekday(day: Day): number {
  return new Date(day.ms).getUTCDay();
}

/** Monday of the day's week. */
function mondayOf(day: Day): Day {
  return addDays(day, -((weekday(day) + 6) % 7));
}

function formatMonth(day: Day, offset: number): string {
  const date = new Date(day.ms);
  const month = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + offset, 1));
  return month.toISOString().slice(0, 7);
}

function toCount(word: string): number {
  return NUMBER_WORDS[word.toLowerCase()] ?? Number(word);
}

/**
 * Whether the sentence around an expression (from `offset` to `end`) speaks of the future: a future cue in the
 * same sentence, before it or after it, each side looked at for {@link TENSE_LOOKBACK_CHARS} characters.
 */
export function isFutureSentence(text: string, offset: number, end = offset): boolean {
  const before = text.slice(Math.max(0, offset - TENSE_LOOKBACK_CHARS), offset);
  const sentenceBefore = before.split(/[.!?]\s/).at(-1) ?? before;
  const after = text.slice(end, end + TENSE_LOOKBACK_CHARS);
  const sentenceAfter = after.split(/[.!?](?:\s|$)/)[0] ?? after;
  return FUTURE_CUE.test(sentenceBefore) || FUTURE_CUE.test(sentenceAfter);
}

function resolveWeekday(reference: Day, word: string, target: number, future: boolean): Day {
  const today = weekday(reference);
  const back = (today - target + 7) % 7 || 7;
  const ahead = (target - today + 7) % 7 || 7;
  switch (word) {
    case 'last':
      return addDays(reference, -back);
    case 'next':
      return addDays(reference, ahead);
    case 'this':
      return addDays(mondayOf(reference), (target + 6) % 7);
    default:
      return future ? addDays(reference, ahead) : addDays(reference, -back);
  }
}

function resolveExpression(
  reference: Day,
  match: string,
  groups: Readonly<Record<string, string | undefined>>,
  future: boolean,
): string {
  const lowered = match.toLowerCase();
  const lower = lowered.endsWith("'s") ? lowered.slice(0, -2) : lowered;
  if (lower === 'the day before yesterday') return formatDay(addDays(reference, -2));
  if (lower === 'the day after tomorrow') return formatDay(addDays(reference, 2));
  const single = groups['single']?.toLowerCase();
  if (single !== undefined) {
    return formatDay(addDays(reference, single === 'today' ? 0 : single === 'yesterday' ? -1 : 1));
  }
  const countWord = groups['agoCount'] ?? groups['inCount'];
  const unit = groups['agoUnit'] ?? groups['inUnit'];
  if (countWord !== undefined && unit !== undefined) {
    const days = toCount(countWord) * (unit.toLowerCase().startsWith('week') ? 7 : 1);
    return formatDay(addDays(reference, groups['agoCount'] !== undefined ? -days : days));
  }
  const weekdayName = groups['weekday']?.toLowerCase();
  const weekdayWord = groups['weekdayWord']?.toLowerCase();
  if (weekdayName !== undefined && weekdayWord !== undefined) {
    const target = WEEKDAYS.indexOf(weekdayName as (typeof WEEKDAYS)[number]);
    return formatDay(resolveWeekday(reference, weekdayWord, target, future));
  }
  const period = groups['period']?.toLowerCase();
  const periodWord = groups['periodWord']?.toLowerCase();
  const offset = periodWord === 'last' ? -1 : periodWord === 'next' ? 1 : 0;
  if (period === 'week') return `week of ${formatDay(addDays(mondayOf(reference), 7 * offset))}`;
  return formatMonth(reference, offset);
}

/**
 * Annotate each relative date expression in `text` with its absolute date in brackets, relative to
 * `referenceDate` (YYYY-MM-DD, or any ISO timestamp: its date part is used as written).
 * Returns `text` unchanged when the reference date cannot be read.
 */
export function resolveRelativeDates(text: string, referenceDate: string): string {
  const reference = referenceDay(referenceDate);
  if (reference === undefined) return text;
  return resolveWithChrono(resolveEnglish(text, reference), { ms: reference.ms, isFuture: isFutureSentence });
}

/** The English expressions of the module comment, by the anchored search. */
function resolveEnglish(text: string, reference: Day): string {
  ANCHOR.lastIndex = 0;
  if (!ANCHOR.test(text)) return text;
  // Same matches as `text.replace(EXPRESSION, …)`: every expression holds an anchor at or after its start,
  // and the first anchor after the last match is the first one any later expression can hold. `test`
  // leaves `lastIndex` at the anchor's end and builds no match array; the search reaches back from there.
  let resolved = '';
  let copied = 0;
  do {
    const match = expressionBefore(text, copied, ANCHOR.lastIndex);
    if (match !== null) {
      const expression = match[0];
      const groups = match.groups ?? {};
      const end = match.index + expression.length;
      const future =
        groups['weekdayWord']?.toLowerCase() === 'on' && isFutureSentence(text, match.index, end);
      resolved += `${text.slice(copied, end)} [${resolveExpression(reference, expression, groups, future)}]`;
      copied = end;
      ANCHOR.lastIndex = end;
    }
  } while (ANCHOR.test(text));
  return copied === 0 ? text : resolved + text.slice(copied);
}

/**
 * The plain form of `resolveRelativeDates`: one `replace` over the whole text, trying every word, then chrono
 * over every sentence without the prefilter. Same output, several times slower on prose; the tests hold the
 * anchored search and the prefilter to it.
 */
export function resolveRelativeDatesPlainly(text: string, referenceDate: string): string {
  const reference = referenceDay(referenceDate);
  if (reference === undefined) return text;
  const english = text.replace(EXPRESSION, (...args: unknown[]) => {
    const match = args[0] as string;
    const offset = args[args.length - 3] as number;
    const groups = args[args.length - 1] as Record<string, string | undefined>;
    const future =
      groups['weekdayWord']?.toLowerCase() === 'on' && isFutureSentence(text, offset, offset + match.length);
    return `${match} [${resolveExpression(reference, match, groups, future)}]`;
  });
  return resolveWithChrono(english, { ms: reference.ms, isFuture: isFutureSentence }, false);
}
