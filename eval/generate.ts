/**
 * The long eval dataset, generated: seeded and deterministic (the same seed and size give the same bytes), in
 * the common long-term-memory format of `format.ts`. Each conversation is a circle of four people (one of them
 * speaks Portuguese or Spanish) meeting two at a time over months of dated sessions. They tell each other where
 * they work and live, their pets, what they are learning, their allergies, their relatives, their projects and
 * what they did or will do on relative dates; later they change jobs, move, switch instruments and migrate
 * databases (updates and contradictions, in `dreamd_updates`); two people of a circle often have the same kind
 * of pet or instrument (near-duplicates across people); some say the same fact again in a later session. The
 * reference facts are written in the third person, with the person's name and absolute dates, as a memory would
 * hold them; the turns are first-person chat among small talk. Questions are paraphrases, never the words of the
 * turn, in five categories: single-hop, multi-hop (a relative's job: two turns), temporal, update (the newest
 * value) and multilingual (asked in another language than the fact was told in); and a sixth, transcript-only,
 * about asides no reference fact holds (`asides.ts`), which only a search of the transcripts answers.
 *
 * Sizes: `quick` (one circle, 24 sessions) for the test; `full` (four circles, 280 sessions) for `npm run eval`;
 * each with Priya's profile (`generate-profile.ts`) and the allotment register (`generate-garden.ts`).
 */
import { Dataset, type Conversation } from './format.js';
import { gardenConversation, type GardenSize } from './generate-garden.js';
import { profileConversation, type ProfileSize } from './generate-profile.js';
import { rngOf, type Rng } from './rng.js';
import { drawAside, TRANSCRIPT_ONLY } from './asides.js';

export const LONG_SIZES = {
  quick: {
    conversations: 1,
    sessionsPerConversation: 24,
    garden: { plots: 210, farChanges: 3, nearChanges: 1, rulesTaughtAgain: 2, rulesTaughtOnce: 2 },
    profile: { facts: 42, reworded: 3, twins: 2 },
  },
  full: {
    conversations: 4,
    sessionsPerConversation: 70,
    garden: { plots: 300, farChanges: 40, nearChanges: 6, rulesTaughtAgain: 6, rulesTaughtOnce: 4 },
    profile: { facts: 100, reworded: 8, twins: 4 },
  },
} as const;

export type LongSize = keyof typeof LONG_SIZES;
export const DEFAULT_SEED = 26;

type Language = 'en' | 'pt' | 'es';

const NAMES = [
  'Ana',
  'Bruno',
  'Carla',
  'Diego',
  'Elena',
  'Farid',
  'Greta',
  'Hugo',
  'Ines',
  'Jonas',
  'Kaito',
  'Lena',
  'Marta',
  'Nuno',
  'Olga',
  'Pablo',
  'Rosa',
  'Samir',
  'Tomas',
  'Uma',
];
const EMPLOYERS = [
  'Lumen Labs',
  'the city library',
  'Harbor Freight Logistics',
  'a dental clinic',
  'Northwind Bank',
  'a bakery on the main square',
  'the public hospital',
  'Orbital Games',
  'a law firm downtown',
  'the university press',
  'Greenleaf Energy',
  'a primary school',
];
const ROLES = [
  'designer',
  'nurse',
  'data analyst',
  'accountant',
  'teacher',
  'line cook',
  'translator',
  'product manager',
  'electrician',
  'editor',
];
const PLACES = [
  ['Alfama', 'Lisbon'],
  ['Kreuzberg', 'Berlin'],
  ['Gracia', 'Barcelona'],
  ['Le Marais', 'Paris'],
  ['Trastevere', 'Rome'],
  ['Shimokitazawa', 'Tokyo'],
  ['Brooklyn Heights', 'New York'],
  ['Ribeira', 'Porto'],
  ['Malasana', 'Madrid'],
  ['Jordaan', 'Amsterdam'],
] as const;
const PETS = ['dog', 'cat', 'parrot', 'rabbit', 'tortoise'] as const;
const PET_NAMES = ['Pipoca', 'Biscuit', 'Luna', 'Mochi', 'Rex', 'Nala', 'Tofu', 'Olive', 'Zeca', 'Kiwi'];
const INSTRUMENTS = ['guitar', 'piano', 'cello', 'drums', 'violin', 'saxophone', 'ukulele'];
const ALLERGENS = ['peanuts', 'shellfish', 'gluten', 'cat hair', 'penicillin', 'pollen', 'sesame'];
const RELATIVES = ['sister', 'brother', 'cousin'] as const;
const RELATIVE_NAMES = ['Bia', 'Leo', 'Clara', 'Mateo', 'Sofia', 'Rafael', 'Joana', 'Ivo', 'Lucia', 'Teo'];
const PROJECTS = ['Atlas', 'Beacon', 'Cobalt', 'Delta', 'Ember', 'Fjord', 'Granite', 'Helix'];
const DATABASES = ['PostgreSQL', 'MongoDB', 'SQLite', 'Cassandra', 'DynamoDB', 'Redis'];
const EVENTS = [
  {
    did: 'ran a half marathon',
    will: 'run a half marathon',
    asked: 'take part in the half marathon',
    chat: 'ran a half marathon',
  },
  {
    did: 'went to a jazz concert',
    will: 'go to a jazz concert',
    asked: 'see the jazz show',
    chat: 'went to a jazz concert',
  },
  {
    did: 'had a job interview',
    will: 'have a job interview',
    asked: 'interview for a job',
    chat: 'had a job interview',
  },
  {
    did: 'visited the science museum',
    will: 'visit the science museum',
    asked: 'go to the science museum',
    chat: 'visited the science museum',
  },
  {
    did: 'hiked up the mountain trail',
    will: 'hike up the mountain trail',
    asked: 'do the mountain hike',
    chat: 'hiked up the mountain trail',
  },
  {
    did: 'passed the driving test',
    will: 'take the driving test',
    asked: 'get the driving licence',
    chat: 'passed my driving test',
  },
  {
    did: 'hosted a dinner party',
    will: 'host a dinner party',
    asked: 'throw the dinner party',
    chat: 'hosted a dinner party',
  },
  {
    did: 'went to the dentist',
    will: 'go to the dentist',
    asked: 'have the dental appointment',
    chat: 'went to the dentist',
  },
] as const;

/** Small talk between the turns that carry facts; some share words with the questions, as chat does. */
const FILLER: Readonly<Record<Language, readonly string[]>> = {
  en: [
    'Hey, how are you?',
    'Good to see you again!',
    'Work has been crazy this week.',
    'Haha, that sounds like you.',
    'The weather here has been awful lately.',
    'I saw a funny video of a dog playing the piano.',
    'Did you watch the game last night?',
    'I really need a holiday.',
    'Oh nice, tell me more.',
    'My neighbour keeps moving furniture at midnight.',
    'That reminds me, I should call my mum.',
    'Coffee first, then we talk.',
    'I read an article about databases that put me to sleep.',
    'Honestly I could live on pizza.',
    'We should meet up more often.',
    'Wow, good for you!',
    'Anyway, enough about me.',
    'Talk soon, take care!',
  ],
  pt: [
    'Olá, tudo bem?',
    'Que bom falar contigo!',
    'O trabalho tem sido uma loucura.',
    'Haha, típico.',
    'O tempo aqui está horrível.',
    'Preciso mesmo de férias.',
    'Conta mais!',
    'Até breve, beijinhos!',
  ],
  es: [
    'Hola, ¿qué tal?',
    '¡Qué alegría hablar contigo!',
    'El trabajo ha sido una locura.',
    'Jaja, muy tú.',
    'El tiempo aquí está fatal.',
    'Necesito vacaciones ya.',
    '¡Cuéntame más!',
    '¡Hasta pronto, cuídate!',
  ],
};

interface Person {
  readonly name: string;
  readonly language: Language;
}

/** A fact about to be told in a session: what is said, the reference fact, and what it answers. */
interface Telling {
  readonly speaker: Person;
  readonly text: string;
  readonly fact: string;
  /** A key shared by the successive values of one subject ("Ana:job"): an update supersedes its older one. */
  readonly subject?: string;
  /** The absolute date a relative date in the text must resolve to. */
  readonly resolvesTo?: string;
  /** Questions this telling answers alone (single-hop, temporal); update questions are added at the end. */
  readonly questions?: readonly { question: string; answer: string; category: string }[];
  /** Kept to build multi-hop questions: the relative named in this turn. */
  readonly relative?: { readonly person: string; readonly relation: string; readonly name: string };
  readonly relativeJob?: { readonly name: string; readonly role: string };
  /**
   * The same fact in other words, for a planted duplicate: what the speaker says again (`later`: in another
   * session, so it recalls rather than continues) and the reference fact, worded otherwise. Only facts that never
   * change have one, so a duplicate never meets an update.
   */
  readonly reworded?: (later: boolean) => { readonly text: string; readonly fact: string };
}

function isoDay(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

const DAY = 86_400_000;

/** A relative date said in chat and the day it means, from the session's day. */
function relativeDate(rng: Rng, day: number, future: boolean): [string, string] {
  if (future)
    return rng.chance(0.5) ? ['tomorrow', isoDay(day + DAY)] : ['in three days', isoDay(day + 3 * DAY)];
  const kind = rng.int(0, 2);
  if (kind === 0) return ['yesterday', isoDay(day - DAY)];
  if (kind === 1) return ['three days ago', isoDay(day - 3 * DAY)];
  // "last Saturday": the most recent Saturday before the session's day.
  const weekday = new Date(day).getUTCDay();
  return ['last Saturday', isoDay(day - (weekday === 6 ? 7 : weekday + 1) * DAY)];
}

interface Circle {
  readonly people: readonly Person[];
  readonly projects: readonly string[];
  /** Current value of each updatable subject. */
  readonly current: Map<string, string>;
  readonly pets: Map<string, { species: string; name: string }>;
  readonly allergies: Map<string, string>;
  readonly relatives: Map<string, { relation: string; name: string }>;
  readonly relativeJobs: Set<string>;
  /** Events each person has not told yet: one question each, never two alike about one person. */
  readonly eventsLeft: Map<string, (typeof EVENTS)[number][]>;
}

/** One telling about `speaker`, chosen among what is still untold or may change. */
function tell(
  rng: Rng,
  circle: Circle,
  speaker: Person,
  day: number,
  language: Language,
): Telling | undefined {
  const n = speaker.name;
  // What is still untold comes first; a told subject changes now and then (updates), events happen.
  const untold = (subject: string) => !circle.current.has(subject);
  const kinds: string[] = [];
  for (const kind of ['job', 'home', 'instrument'])
    kinds.push(...(untold(`${n}:${kind}`) ? [kind, kind, kind] : rng.chance(0.02) ? [kind] : []));
  const events = circle.eventsLeft.get(n) ?? [];
  if (events.length > 0) kinds.push('event', 'event');
  if (language !== 'en') {
    // Told in Portuguese or Spanish: where one works, lives, what one learns (new, or changed now and then).
    kinds.length = 0;
    for (const kind of ['job', 'home', 'instrument'])
      if (untold(`${n}:${kind}`) || rng.chance(0.1)) kinds.push(kind);
  } else {
    for (const project of circle.projects)
      if (untold(`project:${project}:db`) || rng.chance(0.05)) kinds.push('project');
    if (!circle.pets.has(n)) kinds.push('pet', 'pet');
    else if (rng.chance(0.3)) kinds.push('petAgain');
    if (!circle.allergies.has(n)) kinds.push('allergy');
    if (!circle.relatives.has(n)) kinds.push('relative');
    else if (!circle.relativeJobs.has(n)) kinds.push('relativeJob');
  }
  if (kinds.length === 0) return undefined;
  const kind = rng.pick(kinds);

  if (kind === 'job') {
    const employer = rng.pick(
      EMPLOYERS.filter((name) => !circle.current.get(`${n}:job`)?.startsWith(`${name}|`)),
    );
    const role = rng.pick(ROLES);
    const subject = `${n}:job`;
    const changed = circle.current.has(subject);
    circle.current.set(subject, `${employer}|${role}`);
    const text = {
      en: changed
        ? rng.pick([
            `Big news: I quit my old job. I'm now a ${role} at ${employer}.`,
            `Actually scratch what I said before about work, I moved to ${employer} as a ${role}.`,
          ])
        : rng.pick([
            `I've been working at ${employer} as a ${role} for a while now.`,
            `These days I'm a ${role} at ${employer}, it keeps me busy.`,
          ]),
      pt: `Mudei de trabalho: agora sou ${role} na ${employer}.`,
      es: `Cambié de trabajo: ahora soy ${role} en ${employer}.`,
    }[language];
    const fact = {
      en: `${n} works at ${employer} as a ${role}.`,
      pt: `${n} trabalha na ${employer} como ${role}.`,
      es: `${n} trabaja en ${employer} como ${role}.`,
    }[language];
    return { speaker, text, fact, subject };
  }
  if (kind === 'home') {
    const [neighbourhood, city] = rng.pick(
      PLACES.filter(([place]) => !circle.current.get(`${n}:home`)?.startsWith(`${place}|`)),
    );
    const subject = `${n}:home`;
    circle.current.set(subject, `${neighbourhood}|${city}`);
    const text = {
      en: rng.pick([
        `We finally found a flat! We're in ${neighbourhood} now, in ${city}.`,
        `Our new place is in ${neighbourhood}, ${city}. Boxes everywhere.`,
      ]),
      pt: `Finalmente mudámos de casa: agora moramos em ${neighbourhood}, ${city}.`,
      es: `Por fin nos mudamos: ahora vivimos en ${neighbourhood}, ${city}.`,
    }[language];
    const fact = {
      en: `${n} lives in ${neighbourhood}, ${city}.`,
      pt: `${n} mora em ${neighbourhood}, ${city}.`,
      es: `${n} vive en ${neighbourhood}, ${city}.`,
    }[language];
    return { speaker, text, fact, subject };
  }
  if (kind === 'instrument') {
    const instrument = rng.pick(INSTRUMENTS.filter((name) => circle.current.get(`${n}:instrument`) !== name));
    const subject = `${n}:instrument`;
    const changed = circle.current.has(subject);
    circle.current.set(subject, instrument);
    const text = {
      en: changed
        ? `I gave up on my old lessons, I switched to the ${instrument} instead.`
        : rng.pick([
            `I signed up for ${instrument} lessons on Tuesday evenings.`,
            `Guess what, I'm learning the ${instrument}! My fingers hurt.`,
          ]),
      pt: `Comecei aulas de ${instrument} às terças.`,
      es: `Empecé clases de ${instrument} los martes.`,
    }[language];
    const fact = {
      en: `${n} is learning to play the ${instrument}.`,
      pt: `${n} tem aulas de ${instrument}.`,
      es: `${n} toma clases de ${instrument}.`,
    }[language];
    return { speaker, text, fact, subject };
  }
  if (kind === 'event') {
    const event = rng.take(events);
    const future = rng.chance(0.3);
    const [said, date] = relativeDate(rng, day, future);
    return {
      speaker,
      text: future ? `I'm so nervous, I will ${event.will} ${said}.` : `Guess what, I ${event.chat} ${said}.`,
      fact: future ? `${n} plans to ${event.will} on ${date}.` : `${n} ${event.did} on ${date}.`,
      resolvesTo: date,
      questions: [
        {
          question: future ? `On what day will ${n} ${event.asked}?` : `When did ${n} ${event.asked}?`,
          answer: date,
          category: 'temporal',
        },
      ],
    };
  }
  if (kind === 'pet' || kind === 'petAgain') {
    const known = circle.pets.get(n);
    const species = known?.species ?? rng.pick(PETS);
    const petName = known?.name ?? rng.pick(PET_NAMES);
    circle.pets.set(n, { species, name: petName });
    const text =
      known === undefined
        ? rng.pick([
            `We adopted a ${species}! We called it ${petName}.`,
            `Meet ${petName}, our new ${species}, already the boss of the house.`,
          ])
        : `${petName} is doing great, still my favourite ${species}.`;
    return {
      speaker,
      text,
      fact: `${n} has a ${species} named ${petName}.`,
      ...(known === undefined
        ? {
            reworded: (later: boolean) => ({
              text: later
                ? `${petName} still rules the house, best ${species} ever.`
                : `Honestly ${petName} the ${species} is already sleeping on my feet.`,
              fact: `${petName} is ${n}'s ${species}.`,
            }),
          }
        : {}),
      questions:
        known === undefined
          ? [
              {
                question: rng.pick([
                  `What is ${n}'s ${species} called?`,
                  `What name did ${n} give the pet?`,
                  `Which animal did ${n} adopt?`,
                ]),
                answer: petName,
                category: 'single-hop',
              },
            ]
          : [],
    };
  }
  if (kind === 'allergy') {
    const allergen = rng.pick(ALLERGENS);
    circle.allergies.set(n, allergen);
    return {
      speaker,
      text: `Careful if you cook for me, I react badly to ${allergen}.`,
      fact: `${n} is allergic to ${allergen}.`,
      reworded: (later) => ({
        text: later
          ? `Reminder before the picnic: ${allergen} is off limits for me, I'm allergic.`
          : `Seriously though, no ${allergen} near my plate, it's an allergy.`,
        fact: `${n} must avoid ${allergen} because of an allergy.`,
      }),
      questions: [
        {
          question: rng.pick([
            `What should ${n} avoid eating or touching?`,
            `Which allergy does ${n} have?`,
            `What does ${n} react badly to?`,
          ]),
          answer: allergen,
          category: 'single-hop',
        },
      ],
    };
  }
  if (kind === 'relative') {
    const relation = rng.pick(RELATIVES);
    const name = rng.pick(RELATIVE_NAMES);
    const [, city] = rng.pick(PLACES);
    circle.relatives.set(n, { relation, name });
    return {
      speaker,
      text: `My ${relation} ${name} is visiting from ${city} next month, can't wait.`,
      fact: `${n}'s ${relation} ${name} lives in ${city}.`,
      relative: { person: n, relation, name },
      reworded: (later) => ({
        text: later
          ? `${name} has been settled in ${city} for years, you know.`
          : `${name} loves ${city} too much to ever leave it.`,
        fact: `${name}, ${n}'s ${relation}, is based in ${city}.`,
      }),
      questions: [
        {
          question: rng.pick([
            `Where is ${n}'s ${relation} based?`,
            `Where is ${n}'s visitor coming from next month?`,
          ]),
          answer: city,
          category: 'single-hop',
        },
      ],
    };
  }
  if (kind === 'relativeJob') {
    const relative = circle.relatives.get(n)!;
    circle.relativeJobs.add(n);
    const role = rng.pick(ROLES);
    return {
      speaker,
      text: `${relative.name} just got hired as a ${role}, we're all so proud.`,
      fact: `${relative.name}, ${n}'s ${relative.relation}, works as a ${role}.`,
      relativeJob: { name: relative.name, role },
      reworded: (later) => ({
        text: later
          ? `Did I ever mention that ${relative.name} is a ${role}?`
          : `A ${role}! ${relative.name} of all people.`,
        fact: `${n}'s ${relative.relation} ${relative.name} is employed as a ${role}.`,
      }),
    };
  }
  // A project of the circle and its database, which may be migrated later.
  const fresh = circle.projects.filter((name) => untold(`project:${name}:db`));
  const project = rng.pick(fresh.length > 0 ? fresh : circle.projects);
  const database = rng.pick(DATABASES.filter((name) => circle.current.get(`project:${project}:db`) !== name));
  const subject = `project:${project}:db`;
  const changed = circle.current.has(subject);
  circle.current.set(subject, database);
  return {
    speaker,
    text: changed
      ? `We're migrating ${project} off the old storage, it will run on ${database} from now on.`
      : `For ${project} we picked ${database} to keep the data.`,
    fact: `The ${project} project stores its data in ${database}.`,
    subject,
  };
}

/** Questions asked about the newest value of a subject, by kind (update when it changed, else single-hop). */
function subjectQuestion(
  rng: Rng,
  subject: string,
  value: string,
  language: Language,
): { question: string; answer: string } {
  const [who, kind, third] = subject.split(':');
  if (who === 'project')
    return {
      question: rng.pick([
        `Which database does the ${kind} project rely on now?`,
        `What will ${kind} run on from now on?`,
      ]),
      answer: value,
    };
  void third;
  const [first, second] = value.split('|');
  if (kind === 'job') {
    if (language === 'pt') return { question: `Onde trabalha ${who} atualmente?`, answer: first! };
    if (language === 'es') return { question: `¿Dónde trabaja ${who} ahora?`, answer: first! };
    return {
      question: rng.pick([
        `Who employs ${who} at the moment?`,
        `What is ${who}'s current occupation?`,
        `Where is ${who} working these days?`,
      ]),
      answer: `${first} ${second}`,
    };
  }
  if (kind === 'home') {
    if (language === 'pt') return { question: `Em que bairro vive ${who}?`, answer: first! };
    if (language === 'es') return { question: `¿En qué barrio reside ${who}?`, answer: first! };
    return {
      question: rng.pick([
        `Which neighbourhood is ${who}'s home in?`,
        `In what city does ${who} reside?`,
        `Where is ${who}'s new flat?`,
      ]),
      answer: `${first} ${second}`,
    };
  }
  return {
    question: rng.pick([
      `Which instrument is ${who} practising?`,
      `What does ${who} study in music class?`,
      `Which lessons did ${who} sign up for?`,
    ]),
    answer: first!,
  };
}

function circleOf(rng: Rng, names: string[], index: number): Circle {
  const people: Person[] = [];
  const eventsLeft = new Map<string, (typeof EVENTS)[number][]>();
  for (let i = 0; i < 4; i += 1) {
    const name = rng.take(names);
    const language: Language = i === 3 ? (index % 2 === 0 ? 'pt' : 'es') : 'en';
    people.push({ name, language });
    eventsLeft.set(name, [...EVENTS]);
  }
  const projects = [...PROJECTS];
  return {
    people,
    projects: [rng.take(projects), rng.take(projects)],
    current: new Map(),
    pets: new Map(),
    allergies: new Map(),
    relatives: new Map(),
    relativeJobs: new Set(),
    eventsLeft,
  };
}

/** A fact told that may be said again in other words (a planted duplicate). */
interface Rewordable {
  readonly turn: string;
  readonly speaker: Person;
  readonly day: number;
  readonly reworded: NonNullable<Telling['reworded']>;
}

/** Days between the two tellings of a duplicate across sessions that count as "months apart", when one is. */
const MONTHS_APART_DAYS = 60;

/**
 * A circle's conversation. `plants` draws the reworded duplicates from a stream of its own, so the turns the
 * old eval measured stay as they were (the goodbye of a session with a duplicate moves one turn later).
 */
function conversation(
  rng: Rng,
  plants: Rng,
  asides: Rng,
  names: string[],
  index: number,
  sessions: number,
): Conversation {
  const circle = circleOf(rng, names, index);
  const sample = `dreamd-long-${index + 1}`;
  const record: Record<string, unknown> = {};
  const observation: Record<string, Record<string, [string, string][]>> = {};
  const qa: { question: string; answer: string; evidence: string[]; category: string }[] = [];
  const updates: [string, string][] = [];
  const dates: Record<string, string> = {};
  /** Subject → turns of its values, oldest first; and the language each was told in. */
  const subjectTurns = new Map<string, { turn: string; language: Language }[]>();
  const relatives = new Map<string, { turn: string; relation: string; name: string }>();
  const relativeJobs = new Map<string, { turn: string; role: string }>();
  const duplicates: [string, string][] = [];
  const rewordable: Rewordable[] = [];
  let day = Date.UTC(2025, 8, 1) + index * 3 * DAY;
  for (let s = 1; s <= sessions; s += 1) {
    day += rng.int(1, 4) * DAY;
    const pair = [...circle.people];
    const first = rng.take(pair);
    const second = rng.take(pair);
    const foreign = [first, second].find((person) => person.language !== 'en');
    const language: Language = foreign !== undefined && rng.chance(0.5) ? foreign.language : 'en';
    const turns: { speaker: string; dia_id: string; text: string }[] = [];
    const add = (speaker: Person, text: string) => {
      const id = `D${s}:${turns.length + 1}`;
      turns.push({ speaker: speaker.name, dia_id: id, text });
      return id;
    };
    add(first, rng.pick(FILLER[language].slice(0, 2)));
    add(second, rng.pick(FILLER[language].slice(0, 2)));
    const tellings = rng.int(2, 4);
    for (let t = 0; t < tellings; t += 1) {
      const speaker = rng.chance(0.5) ? first : second;
      const listener = speaker === first ? second : first;
      const telling = tell(rng, circle, speaker, day, language);
      if (telling === undefined) {
        add(speaker, rng.pick(FILLER[language].slice(2, -1)));
        continue;
      }
      const turn = add(speaker, telling.text);
      const key = `session_${s}_observation`;
      observation[key] ??= {};
      (observation[key][speaker.name] ??= []).push([telling.fact, turn]);
      if (telling.reworded !== undefined) rewordable.push({ turn, speaker, day, reworded: telling.reworded });
      if (telling.resolvesTo !== undefined) dates[turn] = telling.resolvesTo;
      for (const question of telling.questions ?? []) qa.push({ ...question, evidence: [turn] });
      if (telling.subject !== undefined) {
        const chain = subjectTurns.get(telling.subject) ?? [];
        if (chain.length > 0) updates.push([chain.at(-1)!.turn, turn]);
        chain.push({ turn, language });
        subjectTurns.set(telling.subject, chain);
      }
      if (telling.relative !== undefined)
        relatives.set(telling.relative.person, { turn, ...telling.relative });
      if (telling.relativeJob !== undefined)
        relativeJobs.set(speaker.name, { turn, role: telling.relativeJob.role });
      if (rng.chance(0.6)) add(listener, rng.pick(FILLER[language].slice(2, -1)));
    }
    // Planted duplicates: a fact of this session said again in other words (one answer holds both), and a fact
    // of an earlier session recalled in other words by the person it is about, months apart when one is.
    const sayAgain = (told: Rewordable, later: boolean): void => {
      const again = told.reworded(later);
      const turn = add(told.speaker, again.text);
      const key = `session_${s}_observation`;
      observation[key] ??= {};
      (observation[key][told.speaker.name] ??= []).push([again.fact, turn]);
      duplicates.push([told.turn, turn]);
      rewordable.splice(rewordable.indexOf(told), 1);
    };
    const thisSession = rewordable.filter((told) => told.turn.startsWith(`D${s}:`));
    if (thisSession.length > 0 && plants.chance(0.3)) sayAgain(plants.pick(thisSession), false);
    const earlier = rewordable.filter(
      (told) => !told.turn.startsWith(`D${s}:`) && (told.speaker === first || told.speaker === second),
    );
    const monthsApart = earlier.filter((told) => day - told.day >= MONTHS_APART_DAYS * DAY);
    if (earlier.length > 0 && plants.chance(0.25))
      sayAgain(plants.pick(monthsApart.length > 0 ? monthsApart : earlier), true);
    // An aside no reference fact holds: only the transcript answers its question.
    const asideSpeaker = asides.chance(0.5) ? first : second;
    const aside = drawAside(asides, asideSpeaker.name);
    if (aside !== undefined) {
      const turn = add(asideSpeaker, aside.text);
      qa.push({
        question: aside.question,
        answer: aside.answer,
        evidence: [turn],
        category: TRANSCRIPT_ONLY,
      });
    }
    add(first, FILLER[language].at(-1)!);
    record[`session_${s}_date_time`] = new Date(day + rng.int(8, 20) * 3_600_000).toISOString();
    record[`session_${s}`] = turns;
  }
  // Questions on the newest value of each subject: update when it changed, else single-hop; asked in English
  // about a value told in another language, or in the speaker's language about a value told in English.
  for (const [subject, chain] of subjectTurns) {
    const newest = chain.at(-1)!;
    const who = subject.split(':')[0]!;
    const person = circle.people.find((p) => p.name === who);
    const asked: Language =
      person !== undefined && person.language !== 'en' && newest.language === 'en' && rng.chance(0.5)
        ? person.language
        : 'en';
    const { question, answer } = subjectQuestion(rng, subject, circle.current.get(subject)!, asked);
    const category =
      asked !== 'en' || newest.language !== 'en'
        ? 'multilingual'
        : chain.length > 1
          ? 'update'
          : 'single-hop';
    qa.push({ question, answer, evidence: [newest.turn], category });
  }
  for (const [person, job] of relativeJobs) {
    const relative = relatives.get(person)!;
    qa.push({
      question: `What does the ${relative.relation} of ${person} do for a living?`,
      answer: job.role,
      evidence: [relative.turn, job.turn],
      category: 'multi-hop',
    });
  }
  // A question a fact answers is answered by its other wording too.
  const partners = new Map(duplicates);
  for (const question of qa)
    for (const turn of [...question.evidence])
      if (partners.has(turn)) question.evidence.push(partners.get(turn)!);
  return {
    sample_id: sample,
    conversation: {
      ...Object.fromEntries(
        circle.people.map((person, i) => [`speaker_${String.fromCharCode(97 + i)}`, person.name]),
      ),
      ...record,
    },
    observation,
    qa,
    dreamd_updates: updates,
    dreamd_dates: dates,
    dreamd_duplicates: duplicates,
    dreamd_rules: [],
    dreamd_instructions: [],
    dreamd_twins: [],
  };
}

/**
 * The long dataset of a size (or explicit counts; no garden unless given), from a seed: the same arguments give
 * the same dataset.
 */
export function generateLongDataset(
  size:
    | LongSize
    | { conversations: number; sessionsPerConversation: number; garden?: GardenSize; profile?: ProfileSize },
  seed = DEFAULT_SEED,
): Conversation[] {
  const { conversations, sessionsPerConversation, garden, profile } =
    typeof size === 'string' ? LONG_SIZES[size] : size;
  if (conversations > NAMES.length / 4)
    throw new Error(`at most ${NAMES.length / 4} conversations: the circles would share people`);
  const rng = rngOf(seed);
  // The plants' own stream, from the same seed: deterministic, and apart from the circles' draws.
  const plants = rngOf(seed + 1_000_003);
  // The asides' own stream (turns no fact holds), apart from both.
  const asides = rngOf(seed + 3_000_017);
  const names = [...NAMES];
  const out: Conversation[] = [];
  for (let index = 0; index < conversations; index += 1)
    out.push(conversation(rng, plants, asides, names, index, sessionsPerConversation));
  // Priya's profile (100 facts or more, reworded changes, near-twin rules), its own stream; then the register.
  if (profile !== undefined) out.push(profileConversation(rngOf(seed + 4_000_037), profile));
  if (garden !== undefined) out.push(gardenConversation(rngOf(seed + 2_000_003), garden));
  return Dataset.parse(out);
}
