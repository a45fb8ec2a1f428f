/**
 * The relative dates `relative-dates.ts` does not resolve itself, found by chrono-node (English, Portuguese and
 * Spanish parsers) and annotated the same way: "last Fri [2026-11-20]", "3 months ago [2026-08]", "last year
 * [2025]", "last weekend [weekend of 2026-11-21]", "last summer [summer 2026]", "há 3 dias [2026-11-23]".
 *
 * chrono finds the expression; the date is ours where chrono guesses: a weekday goes back or ahead by its own
 * word ("last", "next", "passada", "próximo", "que vem") or else by the tense of its sentence ("on Sunday I am
 * going" is the coming Sunday, "no domingo fui" the past one), where chrono always looks ahead. What chrono's
 * Portuguese and Spanish parsers miss ("há 3 dias", "hace unos días", "semana passada", "el año pasado",
 * "anteontem", "anoche") and seasons, which no chrono parser reads, are a few patterns here.
 *
 * Cost: chrono runs only on sentences that a cheap test says hold a date word of its language (each language
 * its own word list), so the digest stays fast on text without dates. Absolute dates ("March 3", "2026-12-04")
 * and bare weekdays ("Mondays are slow") are left as written; so is anything already followed by a bracket.
 */
import type * as chrono from 'chrono-node';
// The three languages' own entry points: the package's index loads all of its sixteen (twice the memory).
import * as en from 'chrono-node/en';
import * as es from 'chrono-node/es';
import * as pt from 'chrono-node/pt';

const DAY_MS = 86_400_000;

/**
 * What an expression of each language holds, tested before chrono runs (a sentence without it is skipped)
 * and again on each result chrono returns (so skipping never changes the output). Plain words like "year",
 * "spring" or "domingo" alone are not enough: each needs the word that makes it relative.
 */
const EN_WEEKDAY = String.raw`(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?`;
const PT_WEEKDAY = String.raw`(?:segunda|ter[çc]a|quarta|quinta|sexta)(?:-feira)?|s[áa]bado|domingo`;
const ES_WEEKDAY = String.raw`lunes|martes|mi[ée]rcoles|jueves|viernes|s[áa]bado|domingo`;
const PREFILTERS = {
  en: new RegExp(
    String.raw`\b(?:(?:last|next|this|past) (?:night|weekend|year|summer|winter|spring|autumn|fall|${EN_WEEKDAY})|on ${EN_WEEKDAY}|tonight|(?:this|tomorrow|yesterday) (?:morning|afternoon|evening)|(?:months?|years?|days|weeks) ago)\b`,
    'i',
  ),
  pt: new RegExp(
    String.raw`(?:^|[^\p{L}])(?:ontem|hoje|amanh[ãa]|anteontem|h[áa] \S+ (?:dias?|semanas?|m[êe]s|meses|anos?)|passad[oa]|que vem|pr[óo]xim[oa]|(?:no|na|o|a) (?:${PT_WEEKDAY}))(?![\p{L}])`,
    'iu',
  ),
  es: new RegExp(
    String.raw`(?:^|[^\p{L}])(?:ayer|hoy|mañana|anteayer|anoche|hace \S+ (?:d[íi]as?|semanas?|mes|meses|años?)|pasad[oa]|que viene|pr[óo]xim[oa]|(?:el|este) (?:${ES_WEEKDAY}))(?![\p{L}])`,
    'iu',
  ),
} as const;

/**
 * A superset of the three {@link PREFILTERS} as one scan without the `u` flag (several times cheaper than the
 * three Unicode scans), each word from a word start ("layers" holds no "ayer"): most texts of a digest hold
 * none of these and cost only this.
 */
const QUICK =
  /\b(?:(?:last|next|this|past) (?:night|weekend|year|summer|winter|spring|autumn|fall|mon|tue|wed|thu|fri|sat|sun)|on (?:mon|tue|wed|thu|fri|sat|sun)|tonight|morning|afternoon|evening|ago|ontem|hoje|amanh|anteontem|h[áa] |pass?ad|que v(?:em|iene)|pr[óo]xim|domingo|segunda|ter[çc]a|quarta|quinta|sexta|s[áa]bado|ayer|hoy|mañana|anteayer|anoche|hace |lunes|martes|mi[ée]rcoles|jueves|viernes)/i;

const PARSERS = { en: en.casual, pt: pt.casual, es: es.casual } as const;

type Language = keyof typeof PREFILTERS;
const PREFILTERS_LIST = Object.values(PREFILTERS);

/** Words that tell a weekday or period to look back or ahead, in the expression or right around it. */
const BACK = /\b(?:last|past)\b|passad[oa]|pasad[oa]/iu;
const AHEAD = /\bnext\b|pr[óo]xim[oa]|que vem|que viene/iu;
const THIS = /\bthis\b|\best[ea]\b/iu;

/** Future cues of Portuguese and Spanish sentences ("vou", "vamos", "voy a", "iré", "vai ser" …). */
const FUTURE_CUE_PT_ES =
  /(?:^|[^\p{L}])(?:vou|vais|vai|vamos|v[ãa]o|irei|iremos|voy|vas|va|van|ir[ée]|iremos|pr[óo]xim[oa]|que vem|que viene|amanh[ãa]|mañana)(?![\p{L}])/iu;

/** A result: where the expression is and what goes in its brackets. */
interface Found {
  readonly start: number;
  readonly end: number;
  readonly value: string;
}

export interface DateContext {
  /** 00:00 UTC of the reference day, in milliseconds. */
  readonly ms: number;
  /** Whether the English sentence around [start, end) speaks of the future (see `relative-dates.ts`). */
  readonly isFuture: (text: string, start: number, end: number) => boolean;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function weekdayOf(ms: number): number {
  return new Date(ms).getUTCDay();
}

function mondayOf(ms: number): number {
  return ms - ((weekdayOf(ms) + 6) % 7) * DAY_MS;
}

/** Back (-1), ahead (1) or this week (0), from the words of and around the expression, else from the tense. */
function direction(text: string, found: { start: number; end: number }, context: DateContext): -1 | 0 | 1 {
  const around = text.slice(Math.max(0, found.start - 12), Math.min(text.length, found.end + 12));
  if (BACK.test(around)) return -1;
  if (AHEAD.test(around)) return 1;
  if (THIS.test(text.slice(found.start, found.end))) return 0;
  const sentenceEnd = text.slice(found.end).search(/[.!?\n]/u);
  const sentence = text.slice(
    Math.max(0, text.lastIndexOf('.', found.start) + 1),
    sentenceEnd < 0 ? text.length : found.end + sentenceEnd,
  );
  return context.isFuture(text, found.start, found.end) || FUTURE_CUE_PT_ES.test(sentence) ? 1 : -1;
}

function resolveWeekday(target: number, way: -1 | 0 | 1, reference: number): string {
  const today = weekdayOf(reference);
  if (way === 0) return iso(mondayOf(reference) + ((target + 6) % 7) * DAY_MS);
  const days = way < 0 ? (today - target + 7) % 7 || 7 : (target - today + 7) % 7 || 7;
  return iso(reference + way * days * DAY_MS);
}

/** A bare weekday is a habit ("Mondays are slow"), not a date: a weekday needs a word that places it. */
const PLACED_WEEKDAY =
  /(?:\b(?:on|last|next|this|past)\s+\S+$)|(?:(?:^|[^\p{L}])(?:no|na|o|a|el|este|esta|pr[óo]xim[oa])\s+\S+$)/iu;

const MONTH_NAME =
  /(?:^|[^\p{L}])(?:jan|feb|fev|ene|mar|apr|abr|may|mai|jun|jul|aug|sep|set|oct|out|nov|dec|dez|dic)[\p{L}]*\.?(?:\s+\d|$)|(?:^|[^\p{L}])(?:january|february|march|april|june|july|august|september|october|november|december|janeiro|fevereiro|março|abril|maio|junho|julho|agosto|setembro|outubro|novembro|dezembro|enero|febrero|marzo|mayo|junio|julio|septiembre|octubre|noviembre|diciembre)(?![\p{L}])/iu;

/** A modifier written after a Portuguese or Spanish weekday ("sexta-feira passada"), part of the expression. */
const TRAILING_MODIFIER = /^\s+(?:passad[oa]|pasad[oa]|que vem|que viene)(?![\p{L}])/iu;

/**
 * What one chrono result of `language` becomes, or undefined to leave it as written. `sentence` is where the
 * result was found (offset: where it starts in `text`).
 */
function fromChrono(
  text: string,
  sentence: { readonly start: number; readonly end: number },
  language: Language,
  result: chrono.ParsedResult,
  context: DateContext,
) {
  const start = sentence.start + result.index;
  const trailing = TRAILING_MODIFIER.exec(text.slice(start + result.text.length, sentence.end));
  const end = start + result.text.length + (trailing?.[0].length ?? 0);
  const expression = result.text;
  const region = text.slice(Math.max(sentence.start, start - 14), Math.min(sentence.end, end + 14));
  if (!PREFILTERS[language].test(region)) return undefined;
  const known = result.start;
  // Absolute dates stay as written: a year, a numeric date or a month name in the expression itself.
  if (/\d{4}|\d{1,2}[/.-]\d{1,2}/u.test(expression) || MONTH_NAME.test(expression)) return undefined;
  if (/weekend|fim de semana|fin de semana/iu.test(expression)) {
    const way = direction(text, { start, end }, context);
    const saturday = mondayOf(context.ms) + (5 + 7 * way) * DAY_MS;
    return { start, end, value: `weekend of ${iso(saturday)}` };
  }
  if (known.isCertain('weekday') && !known.isCertain('day')) {
    const before = text.slice(Math.max(0, start - 14), start);
    const placedBy = text.slice(start, end + 12);
    if (!PLACED_WEEKDAY.test(`${before}${expression}`) && !BACK.test(placedBy) && !AHEAD.test(placedBy)) {
      return undefined;
    }
    const target = known.get('weekday') ?? 0;
    return {
      start,
      end,
      value: resolveWeekday(target, direction(text, { start, end }, context), context.ms),
    };
  }
  const date = known.date();
  if (known.isCertain('year') && !known.isCertain('month')) {
    return { start, end, value: String(date.getUTCFullYear()) };
  }
  if (known.isCertain('month') && !known.isCertain('day')) {
    return { start, end, value: iso(date.getTime()).slice(0, 7) };
  }
  return { start, end, value: iso(date.getTime()) };
}

const COUNT_WORDS: Readonly<Record<string, number>> = {
  um: 1,
  uma: 1,
  un: 1,
  una: 1,
  dois: 2,
  duas: 2,
  dos: 2,
  tres: 3,
  três: 3,
  quatro: 4,
  cuatro: 4,
  cinco: 5,
  seis: 6,
  sete: 7,
  siete: 7,
  oito: 8,
  ocho: 8,
  nove: 9,
  nueve: 9,
  dez: 10,
  diez: 10,
};

/** "há 3 dias", "há alguns dias", "hace dos semanas", "hace unos meses": a count of units back. */
const AGO =
  /(?:^|(?<=[^\p{L}]))(h[áa]|hace)\s+(\d{1,3}|[\p{L}]+)\s+(dias?|d[íi]as?|semanas?|mes(?:es)?|anos?|años?)(?![\p{L}])/giu;

/** Periods named with "passado/pasado", "que vem/que viene", "próximo"; and two single days. */
const PERIOD =
  /(?:^|(?<=[^\p{L}]))(?:(?:n?a |la |el |o )?(?:(semana|m[êe]s|ano|año)\s+(passad[oa]|pasad[oa]|que vem|que viene))|(?:(?:n?a |la |el |o )?(pr[óo]xim[oa])\s+(semana|m[êe]s|ano|año))|(anteontem|anteayer|anoche))(?![\p{L}])/giu;

/** Seasons (northern-hemisphere months: summer June–August, winter December–February). */
const SEASON =
  /(?:^|(?<=[^\p{L}]))(?:(last|next|this)\s+(summer|winter|spring|autumn|fall)|(?:n?o |el )?(ver[ãa]o|inverno|primavera|outono|verano|invierno|otoño)\s+(passado|pasado|que vem|que viene))(?![\p{L}])/giu;

const SEASON_NAMES: Readonly<Record<string, string>> = {
  summer: 'summer',
  verão: 'summer',
  verao: 'summer',
  verano: 'summer',
  winter: 'winter',
  inverno: 'winter',
  invierno: 'winter',
  spring: 'spring',
  primavera: 'spring',
  autumn: 'autumn',
  fall: 'autumn',
  outono: 'autumn',
  otoño: 'autumn',
};
/** First month (0-based) of each season. */
const SEASON_START: Readonly<Record<string, number>> = { spring: 2, summer: 5, autumn: 8, winter: 11 };

/**
 * The season meant: the instance under way or last begun (its start month and year), then one back for "last"
 * when one is under way, one ahead for "next", and the coming one for "this" when none is under way.
 */
function seasonLabel(season: string, way: -1 | 0 | 1, reference: number): string {
  const date = new Date(reference);
  const first = SEASON_START[season] ?? 0;
  const month = date.getUTCMonth();
  let year = month >= first ? date.getUTCFullYear() : date.getUTCFullYear() - 1;
  const monthsIn = (month - first + 12) % 12;
  const current = monthsIn < 3;
  if (way < 0 && current) year -= 1;
  if (way > 0 || (way === 0 && !current)) year += 1;
  return season === 'winter'
    ? `winter ${year}-${String((year + 1) % 100).padStart(2, '0')}`
    : `${season} ${year}`;
}

function unitDays(unit: string): { days: number; months: number } {
  const lower = unit.toLowerCase();
  if (lower.startsWith('sem')) return { days: 7, months: 0 };
  if (lower.startsWith('m')) return { days: 0, months: 1 };
  if (lower.startsWith('an') || lower.startsWith('añ')) return { days: 0, months: 12 };
  return { days: 1, months: 0 };
}

function shiftMonths(reference: number, months: number): string {
  const date = new Date(reference);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1)).toISOString().slice(0, 7);
}

function patterns(text: string, offset: number, context: DateContext): Found[] {
  const found: Found[] = [];
  for (const match of text.matchAll(AGO)) {
    const [expression, , countWord = '', unit = ''] = match;
    const lower = countWord.toLowerCase();
    const vague = /^(?:alguns|algumas|uns|umas|unos|unas|algunos|algunas|poucos|poucas|pocos|pocas)$/u.test(
      lower,
    );
    const count = vague ? 3 : /^\d+$/u.test(lower) ? Number(lower) : COUNT_WORDS[lower];
    if (count === undefined) continue;
    const { days, months } = unitDays(unit);
    const start = offset + (match.index ?? 0);
    const value =
      months > 0 ? shiftMonths(context.ms, -count * months) : iso(context.ms - count * days * DAY_MS);
    found.push({ start, end: start + expression.length, value });
  }
  for (const match of text.matchAll(PERIOD)) {
    const [expression, unitAfter, word, nextWord, unitBefore, single] = match;
    const start = offset + (match.index ?? 0);
    const end = start + expression.length;
    let value: string;
    if (single !== undefined) {
      const lower = single.toLowerCase();
      value = iso(context.ms - (lower === 'anoche' ? 1 : 2) * DAY_MS);
    } else {
      const unit = (unitAfter ?? unitBefore ?? '').toLowerCase();
      const way = nextWord !== undefined || /que v/iu.test(word ?? '') ? 1 : -1;
      if (unit === 'semana') value = `week of ${iso(mondayOf(context.ms) + 7 * way * DAY_MS)}`;
      else if (unit.startsWith('m')) value = shiftMonths(context.ms, way);
      else value = String(new Date(context.ms).getUTCFullYear() + way);
    }
    found.push({ start, end, value });
  }
  for (const match of text.matchAll(SEASON)) {
    const [expression, enWord, enSeason, season, word] = match;
    const name = SEASON_NAMES[(enSeason ?? season ?? '').toLowerCase()];
    if (name === undefined) continue;
    const lower = (enWord ?? word ?? '').toLowerCase();
    const way = lower === 'this' ? 0 : lower === 'next' || lower.startsWith('que') ? 1 : -1;
    const start = offset + (match.index ?? 0);
    found.push({ start, end: start + expression.length, value: seasonLabel(name, way, context.ms) });
  }
  return found;
}

/** Every expression of one sentence (offset: where it starts in the whole text). */
function inSentence(whole: string, sentence: string, offset: number, context: DateContext): Found[] {
  const found = patterns(sentence, offset, context);
  const reference = { instant: new Date(context.ms + DAY_MS / 2), timezone: 0 };
  for (const language of Object.keys(PREFILTERS) as Language[]) {
    if (!PREFILTERS[language].test(sentence)) continue;
    for (const result of PARSERS[language].parse(sentence, reference)) {
      const span = { start: offset, end: offset + sentence.length };
      const item = fromChrono(whole, span, language, result, context);
      if (item !== undefined) found.push(item);
    }
  }
  return found;
}

/** Not already annotated: followed by a bracket, or inside one. */
function isAnnotated(text: string, item: Found): boolean {
  if (/^(?:'s)?\s*\[/u.test(text.slice(item.end, item.end + 4))) return true;
  const open = text.lastIndexOf('[', item.start);
  return open >= 0 && text.indexOf(']', open) >= item.end;
}

/** Sentences of a text: runs ended by . ! ? or a line break (kept in the sentence). */
const SENTENCE = /[^.!?\n]*(?:[.!?\n]+|$)/gu;

/**
 * Annotates the expressions chrono and the patterns find in `text`, with `prefilter` true (the digest) only in
 * sentences holding a date word of some language; false checks every sentence (tests: the prefilter must never
 * change the result).
 */
export function resolveWithChrono(text: string, context: DateContext, prefilter = true): string {
  if (prefilter && !(QUICK.test(text) && PREFILTERS_LIST.some((pattern) => pattern.test(text)))) return text;
  const found: Found[] = [];
  for (const match of text.matchAll(SENTENCE)) {
    const sentence = match[0];
    if (sentence === '') continue;
    if (prefilter && !(QUICK.test(sentence) && PREFILTERS_LIST.some((pattern) => pattern.test(sentence)))) {
      continue;
    }
    found.push(...inSentence(text, sentence, match.index ?? 0, context));
  }
  if (found.length === 0) return text;
  // Earliest first, the longest at one start; overlapping and annotated ones dropped.
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  let resolved = '';
  let copied = 0;
  for (const item of found) {
    if (item.start < copied || isAnnotated(text, item)) continue;
    resolved += `${text.slice(copied, item.end)} [${item.value}]`;
    copied = item.end;
  }
  return copied === 0 ? text : resolved + text.slice(copied);
}
