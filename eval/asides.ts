/**
 * Asides: things a person says in passing that no reference fact holds (a book on the train, a borrowed drill),
 * so no memory fact ever will, and a question about each. Only a recall that searches the transcripts can
 * answer them (the `transcript-only` category); BM25 over the raw turns can too. Drawn from a random stream of
 * their own, so the circles' other turns and plants stay as they were.
 */
import type { Rng } from './rng.js';

/** The share of sessions with an aside: 15 %, a few questions at quick size and dozens at full size. */
export const ASIDE_CHANCE = 0.15;

/** The category of a question only a transcript answers. */
export const TRANSCRIPT_ONLY = 'transcript-only';

interface AsideTemplate {
  readonly slots: readonly (readonly string[])[];
  readonly text: (slot: readonly string[]) => string;
  readonly question: (name: string, slot: readonly string[]) => string;
  /** The index of the slot that answers. */
  readonly answer: number;
}

const TEMPLATES: readonly AsideTemplate[] = [
  {
    slots: [
      ['balcony door', 'garden gate', 'wardrobe', 'bedroom window'],
      ['olive oil', 'a new hinge', 'candle wax', 'a drop of WD-40'],
    ],
    text: ([thing, fix]) => `Random thing: I finally fixed the squeaky ${thing} with ${fix}.`,
    question: (name, [thing]) => `How did ${name} get the ${thing} to stop squeaking?`,
    answer: 1,
  },
  {
    slots: [
      ['cordless drill', 'ladder', 'stud finder', 'spirit level'],
      ['mirror', 'bookshelf', 'curtain rail', 'map of Europe'],
    ],
    text: ([tool, item]) => `My neighbour lent me a ${tool} so I could hang the ${item}.`,
    question: (name, [, item]) => `What did ${name} borrow from a neighbour to put up the ${item}?`,
    answer: 0,
  },
  {
    slots: [['The Name of the Rose', 'Dune', 'Middlemarch', 'The Leopard', 'Pedro Paramo']],
    text: ([book]) => `I started reading ${book} on the train, it's slow but good.`,
    question: (name) => `Which novel has ${name} been reading during the commute?`,
    answer: 0,
  },
  {
    slots: [
      ['scarf', 'umbrella', 'reading glasses', 'gym bag'],
      ['cinema', 'dentist', 'post office', 'climbing gym'],
    ],
    text: ([item, venue]) => `I left my ${item} at the ${venue} and had to go back for it.`,
    question: (name, [item]) => `Where did ${name} forget the ${item}?`,
    answer: 1,
  },
  {
    slots: [['pressure valve', 'thermostat', 'circulation pump', 'heat exchanger']],
    text: ([part]) => `The plumber says our boiler needs a new ${part}, great.`,
    question: (name) => `What part has to be replaced in ${name}'s boiler?`,
    answer: 0,
  },
  {
    slots: [['pottery', 'sign language', 'first aid', 'bookbinding', 'salsa']],
    text: ([course]) => `I signed up for a ${course} class at the community centre.`,
    question: (name) => `Which course did ${name} join at the community centre?`,
    answer: 0,
  },
  {
    slots: [['kitchen tiles', 'stone stairs', 'bathroom floor', 'pavement outside the bakery']],
    text: ([surface]) => `My phone screen cracked when I dropped it on the ${surface}.`,
    question: (name) => `Where was ${name}'s phone dropped when its screen cracked?`,
    answer: 0,
  },
];

/** One aside: what the speaker says, and the question it alone answers. */
export interface Aside {
  readonly text: string;
  readonly question: string;
  readonly answer: string;
}

/** An aside for a session, or none (see {@link ASIDE_CHANCE}). */
export function drawAside(asides: Rng, speaker: string): Aside | undefined {
  if (!asides.chance(ASIDE_CHANCE)) return undefined;
  const template = asides.pick(TEMPLATES);
  const slot = template.slots.map((choices) => asides.pick(choices));
  return {
    text: template.text(slot),
    question: template.question(speaker, slot),
    answer: slot[template.answer]!,
  };
}
