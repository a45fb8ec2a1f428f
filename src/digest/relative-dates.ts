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
 */

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

/** Every expression ends in one of these words (weekdays end in "day"): texts without them are left alone. */
const MAY_HOLD_EXPRESSION = /day|week|month|tomorrow/i;

/** A cue earlier in the sentence that "on <weekday>" looks ahead. */
const FUTURE_CUE =
  /\b(?:will|shall|won't|going to|gonna|plan(?:ning)? to|want to|need to|have to|should|until|till|by|before|next|upcoming)\b|'ll\b/i;

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

function isFutureSentence(text: string, offset: number): boolean {
  const before = text.slice(Math.max(0, offset - TENSE_LOOKBACK_CHARS), offset);
  const sentence = before.split(/[.!?]\s/).at(-1) ?? before;
  return FUTURE_CUE.test(sentence);
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
  if (!MAY_HOLD_EXPRESSION.test(text)) return text;
  const reference = referenceDay(referenceDate);
  if (reference === undefined) return text;
  return text.replace(EXPRESSION, (...args: unknown[]) => {
    const match = args[0] as string;
    const offset = args[args.length - 3] as number;
    const groups = args[args.length - 1] as Record<string, string | undefined>;
    const future = groups['weekdayWord']?.toLowerCase() === 'on' && isFutureSentence(text, offset);
    return `${match} [${resolveExpression(reference, match, groups, future)}]`;
  });
}
