/**
 * The common long-term-memory dataset format (LoCoMo's): per conversation, dated sessions of turns with ids
 * (`D<session>:<turn>`), reference facts per session with the turn they came from (`observation`), and
 * questions with the turns that answer them and a category. Four optional dreamd fields: `dreamd_updates`
 * (pairs of turn ids, [older, newer], whose facts are the same subject updated), `dreamd_dates` (the
 * absolute date, or "week of …", a turn's relative date must resolve to) and `dreamd_duplicates` (pairs of
 * turn ids whose reference facts are one fact said in other words: memory should keep one of them active) and
 * `dreamd_rules` (the turns that teach each rule: the oracle answers them as feedback), `dreamd_instructions`
 * (each instruction's versions, which must never merge with another's) and `dreamd_twins` (near-twin rules).
 */
import { z } from 'zod';

export const Turn = z.looseObject({ speaker: z.string(), dia_id: z.string(), text: z.string() });
export type Turn = z.infer<typeof Turn>;

export const Question = z.looseObject({
  question: z.string(),
  answer: z.union([z.string(), z.number()]).transform(String),
  evidence: z.array(z.string()).default([]),
  category: z.union([z.string(), z.number()]).transform(String),
});

export const Conversation = z.looseObject({
  sample_id: z.string(),
  conversation: z.record(z.string(), z.unknown()),
  observation: z
    .record(z.string(), z.record(z.string(), z.array(z.tuple([z.string(), z.string()]))))
    .default({}),
  qa: z.array(Question).default([]),
  dreamd_updates: z.array(z.tuple([z.string(), z.string()])).default([]),
  dreamd_dates: z.record(z.string(), z.string()).default({}),
  dreamd_duplicates: z.array(z.tuple([z.string(), z.string()])).default([]),
  /**
   * Rules (feedback facts), each the turn ids that teach it, in order: the first saves it, the others teach it
   * again, in the same words or others. A rule of one turn is taught once.
   */
  dreamd_rules: z.array(z.array(z.string()).min(1)).default([]),
  /**
   * Instructions, each the turn ids of its versions, oldest first (MemoryCode's coding instructions): the newest
   * version must be the only one active, none may be lost, and two instructions must never be held in one fact
   * or one superseded by the other.
   */
  dreamd_instructions: z.array(z.array(z.string()).min(1)).default([]),
  /**
   * Near-twin rules: pairs of turn ids whose rules differ in one word and apply to different things ("Use try
   * statements in methods." and "… in functions."); both must stay active, neither merged into nor superseding
   * the other.
   */
  dreamd_twins: z.array(z.tuple([z.string(), z.string()])).default([]),
});
export type Conversation = z.infer<typeof Conversation>;
export const Dataset = z.array(Conversation);

export interface EvalSession {
  readonly id: string;
  /** ISO time the session started. */
  readonly startedAt: string;
  readonly turns: readonly Turn[];
}

export interface ReferenceFact {
  readonly turn: string;
  readonly sessionId: string;
  readonly speaker: string;
  readonly text: string;
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** "9:00 am on 2 March, 2026" (LoCoMo's way) or an ISO date → ISO time (UTC). */
export function parseSessionDate(text: string): string {
  const iso = Date.parse(text);
  const locomo = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(text);
  if (locomo !== null) {
    const [, hour, minute, half, day, month, year] = locomo;
    const monthIndex = MONTHS.indexOf(month!.toLowerCase());
    if (monthIndex >= 0) {
      const hours = (Number(hour) % 12) + (half!.toLowerCase() === 'pm' ? 12 : 0);
      return new Date(Date.UTC(Number(year), monthIndex, Number(day), hours, Number(minute))).toISOString();
    }
  }
  if (!Number.isNaN(iso)) return new Date(iso).toISOString();
  throw new Error(`session date "${text}" is neither ISO nor "9:00 am on 2 March, 2026"`);
}

/** The sessions of a conversation in order, with ids `<sample>-s<N>`. */
export function sessionsOf(conversation: Conversation): EvalSession[] {
  const sessions: EvalSession[] = [];
  for (let index = 1; ; index += 1) {
    const turns = conversation.conversation[`session_${index}`];
    if (turns === undefined) break;
    const date = conversation.conversation[`session_${index}_date_time`];
    if (typeof date !== 'string')
      throw new Error(`${conversation.sample_id}: session_${index} has no session_${index}_date_time`);
    sessions.push({
      id: `${conversation.sample_id}-s${index}`,
      startedAt: parseSessionDate(date),
      turns: z.array(Turn).parse(turns),
    });
  }
  return sessions;
}

/** Reference facts of a conversation, each with its turn and session. */
export function referenceFacts(conversation: Conversation): ReferenceFact[] {
  const facts: ReferenceFact[] = [];
  for (const [key, bySpeaker] of Object.entries(conversation.observation)) {
    const index = /^session_(\d+)_observation$/.exec(key)?.[1];
    if (index === undefined) continue;
    for (const [speaker, entries] of Object.entries(bySpeaker)) {
      for (const [text, turn] of entries)
        facts.push({ turn, sessionId: `${conversation.sample_id}-s${index}`, speaker, text });
    }
  }
  return facts;
}
