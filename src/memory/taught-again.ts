/**
 * Rules people had to teach again (pure): a fact memory already held that a later session said again, the
 * same words or others. The count is the evidence that memory held a rule and the agent did not apply it, so
 * such a fact comes first in its section of every index dreamd writes, and its description says it is a
 * repeated correction (Claude Code picks at most five memory files by their description).
 *
 * Stored in the fact's metadata (a topic entry's `<!-- dreamd … -->` comment, a fact file's `metadata:`) as
 * `taughtAgain: { count, last, sessions }`: how many times, the date of the last time, and the sessions that
 * taught it again (the latest {@link MAX_TAUGHT_AGAIN_SESSIONS}; the count goes on past them).
 */
import { MAX_TAUGHT_AGAIN_SESSIONS, type TaughtAgain } from './taught-again-record.js';
import type { Fact } from './types.js';

export { MAX_TAUGHT_AGAIN_SESSIONS, TaughtAgain, TaughtAgainField } from './taught-again-record.js';

/** Times a fact was taught again after it was saved: 0 when never. */
export function timesTaughtAgain(fact: Pick<Fact, 'taughtAgain'>): number {
  return fact.taughtAgain?.count ?? 0;
}

/** The record after `sessions` taught the fact again on `day` (each session one time). */
export function addTaughtAgain(
  before: TaughtAgain | undefined,
  sessions: readonly string[],
  day: string,
): TaughtAgain {
  const known = new Set(before?.sessions ?? []);
  const fresh = sessions.filter((session) => !known.has(session));
  return {
    count: (before?.count ?? 0) + fresh.length,
    last: before === undefined || before.last < day ? day : before.last,
    sessions: [...(before?.sessions ?? []), ...fresh].slice(-MAX_TAUGHT_AGAIN_SESSIONS),
  };
}

/** Two records of one fact merged (curation joining two facts): counts add up, sessions joined. */
export function joinTaughtAgain(
  a: TaughtAgain | undefined,
  b: TaughtAgain | undefined,
): TaughtAgain | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return {
    count: a.count + b.count,
    last: a.last > b.last ? a.last : b.last,
    sessions: [...new Set([...a.sessions, ...b.sessions])].slice(-MAX_TAUGHT_AGAIN_SESSIONS),
  };
}

const NOTE = /^Repeated correction \(taught again \d+×\): /u;

/**
 * The words a fact's description and index line start with when it was taught again: "Repeated correction
 * (taught again 3×): "; empty for a fact never taught again.
 */
export function taughtAgainNote(fact: Pick<Fact, 'taughtAgain'>): string {
  const count = timesTaughtAgain(fact);
  return count === 0 ? '' : `Repeated correction (taught again ${count}×): `;
}

/** A description read back without the note dreamd put in front of it (the note is written from the count). */
export function withoutTaughtAgainNote(description: string): string {
  return description.replace(NOTE, '');
}

/**
 * The order of facts taught again within a section: most times first, then the most recent last time; facts
 * never taught again compare equal (their section's own order stands).
 */
export function compareTaughtAgain(a: Pick<Fact, 'taughtAgain'>, b: Pick<Fact, 'taughtAgain'>): number {
  const count = timesTaughtAgain(b) - timesTaughtAgain(a);
  if (count !== 0) return count;
  const left = a.taughtAgain?.last ?? '';
  const right = b.taughtAgain?.last ?? '';
  return left < right ? 1 : left > right ? -1 : 0;
}

/** The facts taught again first, in {@link compareTaughtAgain} order; the rest keep their order after them. */
export function taughtAgainFirst<T extends Pick<Fact, 'taughtAgain'>>(facts: readonly T[]): T[] {
  const again = facts.filter((fact) => timesTaughtAgain(fact) > 0);
  if (again.length === 0) return [...facts];
  // Array.prototype.sort is stable: ties keep the section's own order.
  return [...again.sort(compareTaughtAgain), ...facts.filter((fact) => timesTaughtAgain(fact) === 0)];
}

/** One line of "rules your agents keep forgetting" (`dreamd status`). */
export interface TaughtAgainRule {
  readonly id: string;
  readonly type: Fact['type'];
  readonly title: string;
  readonly count: number;
  readonly last: string;
}

/**
 * The active facts taught again most, at most `limit` (default 5): most times first, on a tie feedback (the
 * rules) before the other types, then the most recent last time, then the title.
 */
export function mostTaughtAgain(facts: readonly Fact[], limit = 5): TaughtAgainRule[] {
  return facts
    .filter((fact) => fact.status === 'active' && timesTaughtAgain(fact) > 0)
    .sort(
      (a, b) =>
        timesTaughtAgain(b) - timesTaughtAgain(a) ||
        Number(b.type === 'feedback') - Number(a.type === 'feedback') ||
        compareTaughtAgain(a, b) ||
        (a.title < b.title ? -1 : a.title > b.title ? 1 : 0),
    )
    .slice(0, limit)
    .map((fact) => ({
      id: fact.id,
      type: fact.type,
      title: fact.title,
      count: timesTaughtAgain(fact),
      last: fact.taughtAgain?.last ?? '',
    }));
}
