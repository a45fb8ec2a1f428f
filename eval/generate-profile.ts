/**
 * The profile conversation of the long dataset, planted to break two things. Priya, a tech lead, tells her
 * colleague Sam about herself week after week, so memory holds 100 facts or more about one person; months later
 * some of her first facts change in other words: the newer fact shares no word with the older one but her name
 * ("Priya works as a nurse at St Mary's hospital." → "Priya quit nursing; these days she analyses data for
 * Monzo."), so no word match shows the older fact among her hundred others. And she teaches Sam near-twin code
 * rules: two rules that differ in one word and apply to different things ("Use try statements in methods." and
 * "Use try statements in functions."), both to keep, neither an update of the other (`dreamd_twins`). Seeded
 * like the circles (`generate.ts`).
 */
import type { Conversation } from './format.js';
import type { Rng } from './rng.js';

/** The profile's size: Priya's facts before the changes, the reworded changes, the near-twin rule pairs. */
export interface ProfileSize {
  readonly facts: number;
  readonly reworded: number;
  readonly twins: number;
}

/** Facts that change months later, in words that share only her name with the older ones; and a question. */
const REWORDED: readonly {
  readonly older: readonly [said: string, fact: string];
  readonly newer: readonly [said: string, fact: string];
  readonly question: string;
  readonly answer: string;
}[] = [
  {
    older: ["I work as a nurse at St Mary's hospital.", "Priya works as a nurse at St Mary's hospital."],
    newer: [
      'I quit nursing; these days I analyse data for Monzo.',
      'Priya quit nursing; these days she analyses data for Monzo.',
    ],
    question: 'What is Priya doing for a living lately?',
    answer: 'Monzo',
  },
  {
    older: ['I live in a flat in Leeds.', 'Priya lives in a flat in Leeds.'],
    newer: [
      'I moved south and rent a cottage near Brighton.',
      'Priya moved south and rents a cottage near Brighton.',
    ],
    question: 'Where is Priya based lately?',
    answer: 'Brighton',
  },
  {
    older: ['I drive a red Fiat Panda.', 'Priya drives a red Fiat Panda.'],
    newer: ['I sold the car and cycle everywhere.', 'Priya sold the car and cycles everywhere.'],
    question: 'How does Priya get around lately?',
    answer: 'cycles',
  },
  {
    older: [
      'I swim at the Kirkgate leisure centre every Tuesday.',
      'Priya swims at the Kirkgate leisure centre every Tuesday.',
    ],
    newer: [
      'I gave up the pool for climbing on Thursdays.',
      'Priya gave up the pool for climbing on Thursdays.',
    ],
    question: 'Which sport does Priya practise lately?',
    answer: 'climbing',
  },
  {
    older: ['I am vegetarian.', 'Priya is vegetarian.'],
    newer: ['I eat fish again since the spring.', 'Priya eats fish again since the spring.'],
    question: 'What does Priya eat lately?',
    answer: 'fish',
  },
  {
    older: ['I study Mandarin in evening classes.', 'Priya studies Mandarin in evening classes.'],
    newer: [
      'I dropped my Chinese lessons and practise Welsh with an app.',
      'Priya dropped her Chinese lessons and practises Welsh with an app.',
    ],
    question: 'Which language is Priya learning lately?',
    answer: 'Welsh',
  },
  {
    older: ['My manager is Dev Kapoor.', "Priya's manager is Dev Kapoor."],
    newer: ['I report to Hannah Okafor now.', 'Priya reports to Hannah Okafor now.'],
    question: 'Who is Priya reporting to lately?',
    answer: 'Hannah Okafor',
  },
  {
    older: ['I play bass in a covers band.', 'Priya plays bass in a covers band.'],
    newer: ['I left the group to sing in a choir.', 'Priya left the group to sing in a choir.'],
    question: 'What does Priya do for music lately?',
    answer: 'choir',
  },
];

/** Near-twin code rules: one word apart, about different things; both taught, neither replaces the other. */
const TWINS: readonly (readonly [string, string])[] = [
  ['Include a single digit in function argument names.', 'Include a single digit in function names.'],
  ['Use try statements in methods.', 'Use try statements in functions.'],
  ['Import the logging module in the billing service.', 'Import the logging module in the payments service.'],
  ['Add docstrings to public methods.', 'Add docstrings to public classes.'],
];

/** Her other facts, drawn without repeats: what she owns, where she has been, her favourites. */
const OWNS = [
  'bicycle',
  'kayak',
  'telescope',
  'sewing machine',
  '3D printer',
  'typewriter',
  'ukulele',
  'record player',
  'drone',
  'espresso machine',
  'tent',
  'microscope',
  'banjo',
  'chess set',
  'pottery wheel',
  'metronome',
  'e-reader',
  'film camera',
  'hammock',
  'loom',
  'harmonica',
  'paddleboard',
  'sourdough starter',
  'bonsai tree',
  'snowboard',
  'fountain pen',
  'globe',
  'synthesiser',
  'rowing machine',
  'weather station',
  'tandem',
  'accordion',
  'soldering iron',
  'slackline',
  'pasta maker',
  'dartboard',
  'unicycle',
  'kiln',
  'lathe',
  'zither',
];
const VISITED = [
  'Reykjavik',
  'Kyoto',
  'Oaxaca',
  'Tbilisi',
  'Hobart',
  'Tromso',
  'Valparaiso',
  'Zanzibar',
  'Ljubljana',
  'Hue',
  'Cusco',
  'Marrakesh',
  'Tallinn',
  'Bergen',
  'Matera',
  'Luang Prabang',
  'Cappadocia',
  'Kotor',
  'Sintra',
  'Gdansk',
  'Ushuaia',
  'Salalah',
  'Hoi An',
  'Plovdiv',
  'Nafplio',
  'Colmar',
  'Galway',
  'Bruges',
  'Lofoten',
  'Ronda',
  'Sibiu',
  'Trogir',
  'Essaouira',
  'Kandy',
  'Pokhara',
  'Granada',
  'Lamu',
  'Ohrid',
  'Cesky Krumlov',
  'Mostar',
];
const FAVOURITES: readonly (readonly [string, readonly string[]])[] = [
  ['tea', ['oolong', 'rooibos', 'genmaicha', 'masala chai']],
  ['film', ['Paris, Texas', 'Spirited Away', 'Moonlight', 'Amelie']],
  ['painter', ['Hilma af Klint', 'Frida Kahlo', 'David Hockney', 'Paula Rego']],
  ['bird', ['kingfisher', 'puffin', 'wren', 'heron']],
  ['flower', ['peony', 'foxglove', 'dahlia', 'snowdrop']],
  ['pastry', ['pain au raisin', 'baklava', 'cinnamon bun', 'eclair']],
  ['cheese', ['Wensleydale', 'halloumi', 'manchego', 'gruyere']],
  ['board game', ['Carcassonne', 'Azul', 'Wingspan', 'Go']],
  ['podcast', ['In Our Time', 'Radiolab', '99% Invisible', 'Desert Island Discs']],
  ['season', ['autumn', 'late spring', 'midwinter', 'early summer']],
  ['poet', ['Mary Oliver', 'Seamus Heaney', 'Wislawa Szymborska', 'Langston Hughes']],
  ['font', ['Garamond', 'Futura', 'Helvetica', 'Baskerville']],
];

/** Priya's everyday facts, as said and as memory holds them, drawn with the seeded stream. */
function everydayFacts(rng: Rng, count: number): (readonly [string, string])[] {
  const owns = [...OWNS];
  const visited = [...VISITED];
  const favourites = FAVOURITES.map(([thing, values]) => [thing, rng.pick(values)] as const);
  const out: (readonly [string, string])[] = [];
  for (const [thing, value] of favourites)
    out.push([`My favourite ${thing} is ${value}.`, `Priya's favourite ${thing} is ${value}.`]);
  while (out.length < count && (owns.length > 0 || visited.length > 0)) {
    if (owns.length > 0 && (visited.length === 0 || rng.chance(0.5))) {
      const item = rng.take(owns);
      out.push([`I own a ${item}.`, `Priya owns a ${item}.`]);
    } else {
      const place = rng.take(visited);
      out.push([`I have been to ${place}.`, `Priya has been to ${place}.`]);
    }
  }
  if (out.length < count) throw new Error(`at most ${out.length} everyday facts about Priya`);
  return out.slice(0, count);
}

const FIRST_DAY = Date.UTC(2026, 0, 5, 18, 0);
/** Days between her last weekly session and the first of the changes: about four months. */
const CHANGES_AFTER_DAYS = 120;

/** The profile conversation, `dreamd-profile-1`. */
export function profileConversation(rng: Rng, size: ProfileSize): Conversation {
  if (size.reworded > REWORDED.length || size.twins > TWINS.length)
    throw new Error(`at most ${REWORDED.length} reworded changes and ${TWINS.length} near-twin pairs`);
  // Her first facts are the ones that change, then the everyday ones: 100 facts or more before the changes.
  const told: { said: string; fact: string; twin?: number; rewordedIndex?: number }[] = [
    ...REWORDED.slice(0, size.reworded).map((entry, index) => ({
      said: entry.older[0],
      fact: entry.older[1],
      rewordedIndex: index,
    })),
    ...everydayFacts(rng, size.facts - size.reworded).map(([said, fact]) => ({ said, fact })),
  ];
  const perSession = 8;
  const weekly = Math.ceil(told.length / perSession);
  const record: Record<string, unknown> = { speaker_a: 'Priya', speaker_b: 'Sam' };
  const observation: Record<string, Record<string, [string, string][]>> = {};
  const olderTurn = new Map<number, string>();
  const twinTurns: [string | undefined, string | undefined][] = TWINS.slice(0, size.twins).map(() => [
    undefined,
    undefined,
  ]);
  const rules: string[][] = [];
  const qa: Conversation['qa'] = [];
  const updates: [string, string][] = [];
  let session = 0;
  const addSession = (day: number, lines: { said: string; fact?: string; rule?: boolean }[]): string[] => {
    session += 1;
    const turns = [
      { speaker: 'Sam', dia_id: `D${session}:1`, text: 'Good to see you, how was your week?' },
      ...lines.map((line, index) => ({
        speaker: 'Priya',
        dia_id: `D${session}:${index + 2}`,
        text: line.said,
      })),
      { speaker: 'Sam', dia_id: `D${session}:${lines.length + 2}`, text: 'Thanks, talk next week.' },
    ];
    record[`session_${session}`] = turns;
    record[`session_${session}_date_time`] = new Date(FIRST_DAY + day * 86_400_000).toISOString();
    const facts = lines.flatMap((line, index) =>
      line.fact === undefined ? [] : [[line.fact, turns[index + 1]!.dia_id] as [string, string]],
    );
    observation[`session_${session}_observation`] = { Priya: facts };
    return turns.slice(1, -1).map((turn) => turn.dia_id);
  };
  for (let week = 0; week < weekly; week += 1) {
    const batch = told.slice(week * perSession, (week + 1) * perSession);
    // Twin a of pair p in week p + 1, its twin b three weeks later: both taught, weeks apart.
    const teach = twinTurns.flatMap((_, pair) =>
      week === pair + 1 ? [{ pair, side: 0 }] : week === pair + 4 ? [{ pair, side: 1 }] : [],
    );
    const lines = [
      ...batch.map((entry) => ({ said: entry.said, fact: entry.fact })),
      ...teach.map(({ pair, side }) => ({
        said: `A rule for the codebase: ${TWINS[pair]![side]!.charAt(0).toLowerCase()}${TWINS[pair]![side]!.slice(1)}`,
        fact: TWINS[pair]![side]!,
        rule: true,
      })),
    ];
    const ids = addSession(week * 7, lines);
    batch.forEach((entry, index) => {
      if (entry.rewordedIndex !== undefined) olderTurn.set(entry.rewordedIndex, ids[index]!);
    });
    teach.forEach(({ pair, side }, index) => {
      const turn = ids[batch.length + index]!;
      twinTurns[pair]![side] = turn;
      rules.push([turn]);
    });
  }
  if (twinTurns.some(([a, b]) => a === undefined || b === undefined))
    throw new Error(`${weekly} weekly sessions are too few to teach ${size.twins} near-twin pairs`);
  // The changes, two a session, months later.
  for (let first = 0; first < size.reworded; first += 2) {
    const changes = REWORDED.slice(first, Math.min(first + 2, size.reworded));
    const ids = addSession(
      (weekly - 1) * 7 + CHANGES_AFTER_DAYS + first * 3,
      changes.map((entry) => ({ said: entry.newer[0], fact: entry.newer[1] })),
    );
    changes.forEach((entry, index) => {
      updates.push([olderTurn.get(first + index)!, ids[index]!]);
      qa.push({
        question: entry.question,
        answer: entry.answer,
        evidence: [ids[index]!],
        category: 'update',
      });
    });
  }
  return {
    sample_id: 'dreamd-profile-1',
    conversation: record,
    observation,
    qa,
    dreamd_updates: updates,
    dreamd_dates: {},
    dreamd_duplicates: [],
    dreamd_rules: rules,
    dreamd_instructions: [],
    dreamd_twins: twinTurns as [string, string][],
  };
}
