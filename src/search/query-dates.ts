/**
 * The dates a search query speaks of ("in March", "last week", "on 2026-03-14", "yesterday"), as ranges of days,
 * found by chrono-node's English parser against the moment of the search. A day the query names exactly is
 * that day; a month or a year without a day is the whole month or year; "last week" is the seven days chrono
 * puts it at. Recall lifts facts dated in, or mentioning a day in, one of these ranges.
 */
// English alone, from its own entry point: the package's index loads all sixteen languages.
import * as en from 'chrono-node/en';

/** An inclusive range of `YYYY-MM-DD` days. */
export interface DayRange {
  readonly from: string;
  readonly to: string;
}

const DAY_MS = 86_400_000;

function day(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function lastDayOfMonth(year: number, month: number): string {
  return day(new Date(Date.UTC(year, month, 0)));
}

/** The day ranges a query names, relative to `now` (UTC); `[]` when it names none. */
export function queryDayRanges(query: string, now: Date): DayRange[] {
  const ranges: DayRange[] = [];
  for (const result of en.casual.parse(query, { instant: now, timezone: 0 })) {
    const start = result.start;
    const year = start.get('year');
    const month = start.get('month');
    if (year === null || month === null) continue;
    const date = start.date();
    if (/\bweek\b/i.test(result.text)) {
      // A week, Sunday to Saturday as chrono counts them: "last week", "this week".
      const sunday = new Date(date.getTime() - date.getUTCDay() * DAY_MS);
      ranges.push({ from: day(sunday), to: day(new Date(sunday.getTime() + 6 * DAY_MS)) });
    } else if (start.isCertain('day') || start.isCertain('weekday') || result.end != null) {
      const from = day(date);
      const to = result.end == null ? from : day(result.end.date());
      ranges.push(from <= to ? { from, to } : { from: to, to: from });
    } else if (start.isCertain('month')) {
      const mm = String(month).padStart(2, '0');
      ranges.push({ from: `${year}-${mm}-01`, to: lastDayOfMonth(year, month) });
    } else {
      // Only implied parts: the day chrono puts it at.
      const from = day(date);
      ranges.push({ from, to: from });
    }
  }
  // A year alone ("in 2025"), which chrono does not read.
  for (const match of query.matchAll(/(?:^|[^\d-])((?:19|20)\d{2})(?![\d-])/g)) {
    const covered = ranges.some(
      (range) => range.from.startsWith(match[1]!) && range.to.startsWith(match[1]!),
    );
    if (!covered) ranges.push({ from: `${match[1]}-01-01`, to: `${match[1]}-12-31` });
  }
  return ranges;
}

/**
 * The query split into the days it names and the words left to match: "standup last week" searches "standup"
 * among facts, and lifts those of last week; the words of a date expression are not matched as words (a fact
 * rarely says "last week", and when every fact lacks them they would weigh most). A query that is only a date
 * keeps its words.
 */
export function splitQueryDates(query: string, now: Date): { ranges: DayRange[]; words: string } {
  const ranges = queryDayRanges(query, now);
  if (ranges.length === 0) return { ranges, words: query };
  let words = query;
  for (const result of en.casual.parse(query, { instant: now, timezone: 0 }))
    words = words.replace(result.text, ' ');
  words = words
    .replace(/\b(?:in|on|during|since)\s+(?=\s|$)/gi, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return { ranges, words: /[\p{L}\p{N}]/u.test(words) ? words : query };
}

const ISO_DAY = /\b(\d{4}-\d{2}-\d{2})\b/g;

/** Whether a document dated `date` (or naming a `YYYY-MM-DD` day in its text) falls in one of the ranges. */
export function inDayRanges(ranges: readonly DayRange[], date: string, text: string): boolean {
  if (ranges.length === 0) return false;
  const days = [date.slice(0, 10), ...[...text.matchAll(ISO_DAY)].map((match) => match[1]!)];
  return days.some((candidate) =>
    ranges.some((range) => candidate !== '' && candidate >= range.from && candidate <= range.to),
  );
}
