import { describe, expect, it } from 'vitest';
import { resolveRelativeDates } from '../../src/digest/index.js';
import { resolveRelativeDatesPlainly } from '../../src/digest/relative-dates.js';

// 2026-11-26 is a Thursday; 2026-11-28 a Saturday; 2027-01-01 a Friday; 2028-03-01 a Wednesday (leap year).
const CASES: readonly (readonly [reference: string, input: string, expected: string])[] = [
  ['2026-11-26', 'today', 'today [2026-11-26]'],
  ['2026-11-26', "today's plan", "today's [2026-11-26] plan"],
  ['2026-11-26', 'Yesterday we shipped', 'Yesterday [2026-11-25] we shipped'],
  ['2026-11-26', 'tomorrow', 'tomorrow [2026-11-27]'],
  ['2026-11-26', 'the day before yesterday', 'the day before yesterday [2026-11-24]'],
  ['2026-11-26', 'the day after tomorrow', 'the day after tomorrow [2026-11-28]'],
  ['2026-11-26', 'last Thursday', 'last Thursday [2026-11-19]'],
  ['2026-11-28', 'last Thursday', 'last Thursday [2026-11-26]'],
  ['2026-11-26', 'last Friday', 'last Friday [2026-11-20]'],
  ['2026-11-26', 'last Wednesday', 'last Wednesday [2026-11-25]'],
  ['2026-11-26', 'next Thursday', 'next Thursday [2026-12-03]'],
  ['2026-11-26', 'next Friday', 'next Friday [2026-11-27]'],
  ['2026-11-26', 'this Monday', 'this Monday [2026-11-23]'],
  ['2026-11-26', 'this Sunday', 'this Sunday [2026-11-29]'],
  ['2026-11-26', 'on Monday I rotated the keys', 'on Monday [2026-11-23] I rotated the keys'],
  ['2026-11-26', 'we will rotate them on Monday', 'we will rotate them on Monday [2026-11-30]'],
  ['2026-11-26', 'Done. We did it on Monday', 'Done. We did it on Monday [2026-11-23]'],
  ['2026-11-26', '3 days ago', '3 days ago [2026-11-23]'],
  ['2026-11-26', 'two weeks ago', 'two weeks ago [2026-11-12]'],
  ['2026-11-26', 'a week ago', 'a week ago [2026-11-19]'],
  ['2026-11-26', 'in 10 days', 'in 10 days [2026-12-06]'],
  ['2026-11-26', 'last week', 'last week [week of 2026-11-16]'],
  ['2026-11-26', 'next week', 'next week [week of 2026-11-30]'],
  ['2026-11-26', 'last month', 'last month [2026-10]'],
  ['2026-11-26', 'next month', 'next month [2026-12]'],
  // Month and year boundaries, leap days.
  ['2026-03-01', 'yesterday', 'yesterday [2026-02-28]'],
  ['2028-03-01', 'yesterday', 'yesterday [2028-02-29]'],
  ['2026-12-31', 'tomorrow', 'tomorrow [2027-01-01]'],
  ['2027-01-01', 'last Thursday', 'last Thursday [2026-12-31]'],
  ['2027-01-01', 'last month', 'last month [2026-12]'],
  ['2026-12-15', 'next month', 'next month [2027-01]'],
  ['2027-01-01', 'last week', 'last week [week of 2026-12-21]'],
  ['2027-01-03', '5 days ago', '5 days ago [2026-12-29]'],
  ['2026-01-31', 'next month', 'next month [2026-02]'],
  // A full ISO timestamp works as the reference; its date is used as written.
  ['2026-11-26T23:59:00-08:00', 'today', 'today [2026-11-26]'],
];

/**
 * Draws `samples` texts with a fixed-seed generator (the same texts on every run), each of 1 to `maxWords`
 * pieces with a blank after each, and checks that resolveRelativeDates (with its prefilter) gives what
 * resolveRelativeDatesPlainly gives at one of `references`. A list of one is taken without a draw.
 */
function expectPrefilterAgrees(options: {
  seed: number;
  samples: number;
  maxWords: number;
  pieces: readonly string[];
  blanks: readonly string[];
  references: readonly string[];
}): void {
  let state = options.seed;
  const next = (limit: number): number => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return (state >>> 8) % limit;
  };
  const pick = (list: readonly string[]): string => list[list.length === 1 ? 0 : next(list.length)]!;
  for (let sample = 0; sample < options.samples; sample += 1) {
    let text = '';
    const words = 1 + next(options.maxWords);
    for (let word = 0; word < words; word += 1) text += `${pick(options.pieces)}${pick(options.blanks)}`;
    const reference = pick(options.references);
    expect(resolveRelativeDates(text, reference), JSON.stringify(text)).toBe(
      resolveRelativeDatesPlainly(text, reference),
    );
  }
}

describe('resolveRelativeDates', () => {
  it.each(CASES)('on %s, "%s" becomes "%s"', (reference, input, expected) => {
    expect(resolveRelativeDates(input, reference)).toBe(expected);
  });

  it('annotates every expression of a sentence and leaves the rest alone', () => {
    expect(
      resolveRelativeDates(
        'Yesterday the box moved; last Thursday it was fine. Mondays are slow.',
        '2026-11-26',
      ),
    ).toBe('Yesterday [2026-11-25] the box moved; last Thursday [2026-11-19] it was fine. Mondays are slow.');
  });

  it('is idempotent: an annotated text is not annotated again', () => {
    const once = resolveRelativeDates("last week, today's build and last Friday", '2026-11-26');
    expect(resolveRelativeDates(once, '2026-11-26')).toBe(once);
  });

  it('leaves words that only contain a date word alone', () => {
    const text = 'The todays-list and yesterdays.log files, a weekday job, the monthly report.';
    expect(resolveRelativeDates(text, '2026-11-26')).toBe(text);
  });

  it('returns the text unchanged when the reference date cannot be read', () => {
    expect(resolveRelativeDates('yesterday', 'not a date')).toBe('yesterday');
  });

  it('finds what one replace over every word finds, whatever the spacing and the words around', () => {
    // Expressions, their parts and near misses, joined by runs of blanks of any kind: the anchored search
    // must agree with the plain one on every text.
    const pieces = [
      'the day before yesterday',
      'the day after tomorrow',
      'the',
      'day',
      'days',
      'weeks',
      'ago',
      'in',
      'on',
      'last',
      'next',
      'this',
      'Wednesday',
      'wednes',
      'THURSDAY',
      'monday',
      'month',
      'week',
      'today',
      "today's",
      'yesterday',
      'tomorrow',
      'twelve',
      'an',
      'a',
      '3',
      '120',
      '1234',
      'will',
      'yesterdays',
      'todays',
      'weekday',
      'sundays',
      '[2026-11-20]',
      '[week of 2026-11-16]',
      'x',
      '(',
      ')',
      '.',
      "'s",
      'day.',
      'in3',
      'on_Monday',
      'last-week',
      'yester',
      'weeks.',
      'thisweek',
      'YESTERDAY',
      "Tomorrow's",
      'bathe',
      'before',
      'after',
      'to',
    ];
    expectPrefilterAgrees({
      seed: 7,
      samples: 3_000,
      maxWords: 12,
      pieces,
      blanks: [' ', '  ', '\n', '\t \n', '\u00a0', '', '          ', ' \u2003 '],
      references: ['2026-11-26', '2027-01-01'],
    });
  });
});

// 2026-11-26 is a Thursday.
const MORE_CASES: readonly (readonly [input: string, expected: string])[] = [
  // Tense-aware weekdays, either side of the expression.
  ['On Sunday I am going to the beach', 'On Sunday [2026-11-29] I am going to the beach'],
  ["On Sunday I'm going to the beach", "On Sunday [2026-11-29] I'm going to the beach"],
  ['On Sunday I went to the beach', 'On Sunday [2026-11-22] I went to the beach'],
  // Abbreviated weekdays.
  ['last Fri we met', 'last Fri [2026-11-20] we met'],
  ['next Tue', 'next Tue [2026-12-01]'],
  ['on Mon I rotated the keys', 'on Mon [2026-11-23] I rotated the keys'],
  // Weekends, years, nights, seasons, counts of months, vague counts.
  ['We met last weekend.', 'We met last weekend [weekend of 2026-11-21].'],
  ['See you this weekend', 'See you this weekend [weekend of 2026-11-28]'],
  ['last year was hard', 'last year [2025] was hard'],
  ['next year', 'next year [2027]'],
  ['last night I slept badly', 'last night [2026-11-25] I slept badly'],
  ['last summer we went to Crete', 'last summer [summer 2026] we went to Crete'],
  ['this winter', 'this winter [winter 2026-27]'],
  ['3 months ago', '3 months ago [2026-08]'],
  ['a few days ago', 'a few days ago [2026-11-23]'],
  ['a couple of weeks ago', 'a couple of weeks ago [2026-11-12]'],
  // Portuguese.
  ['ontem fui ao cinema', 'ontem [2026-11-25] fui ao cinema'],
  ['anteontem', 'anteontem [2026-11-24]'],
  ['há 3 dias', 'há 3 dias [2026-11-23]'],
  ['na semana passada', 'na semana passada [week of 2026-11-16]'],
  ['no ano passado', 'no ano passado [2025]'],
  ['mês passado', 'mês passado [2026-10]'],
  ['sexta-feira passada', 'sexta-feira passada [2026-11-20]'],
  ['na próxima segunda', 'na próxima segunda [2026-11-30]'],
  ['no domingo vou à praia', 'no domingo [2026-11-29] vou à praia'],
  ['no domingo fui à praia', 'no domingo [2026-11-22] fui à praia'],
  // Spanish.
  ['ayer fui al cine', 'ayer [2026-11-25] fui al cine'],
  ['anoche', 'anoche [2026-11-25]'],
  ['hace 3 días', 'hace 3 días [2026-11-23]'],
  ['hace unos días', 'hace unos días [2026-11-23]'],
  ['la semana pasada', 'la semana pasada [week of 2026-11-16]'],
  ['el año pasado', 'el año pasado [2025]'],
  ['el mes pasado', 'el mes pasado [2026-10]'],
  ['el viernes pasado', 'el viernes pasado [2026-11-20]'],
  ['el próximo lunes', 'el próximo lunes [2026-11-30]'],
  ['el domingo voy a la playa', 'el domingo [2026-11-29] voy a la playa'],
  // Left as written: absolute dates, habits, what nothing resolves.
  ['March 3 is the day', 'March 3 is the day'],
  ['the release is 2026-12-04', 'the release is 2026-12-04'],
  ['Ele nasceu no ano 1990.', 'Ele nasceu no ano 1990.'],
  ['Mondays are slow', 'Mondays are slow'],
  ['some day we will see', 'some day we will see'],
];

describe('resolveRelativeDates beyond the English expressions (chrono-node)', () => {
  it.each(MORE_CASES)('on 2026-11-26, "%s" becomes "%s"', (input, expected) => {
    expect(resolveRelativeDates(input, '2026-11-26')).toBe(expected);
  });

  it('is idempotent in every language', () => {
    for (const [input] of MORE_CASES) {
      const once = resolveRelativeDates(input, '2026-11-26');
      expect(resolveRelativeDates(once, '2026-11-26')).toBe(once);
    }
  });

  it('finds with the prefilter what chrono finds in every sentence, whatever the words around', () => {
    const pieces = [
      ...MORE_CASES.map(([input]) => input),
      'ontem',
      'passada',
      'pasado',
      'el',
      'no',
      'domingo',
      'Fri',
      'weekend',
      'ago',
      'months',
      'há',
      'hace',
      'dias',
      '.',
      '\n',
      'the build',
      'année',
    ];
    expectPrefilterAgrees({
      seed: 11,
      samples: 300,
      maxWords: 6,
      pieces,
      blanks: [' '],
      references: ['2026-11-26'],
    });
  });
});
