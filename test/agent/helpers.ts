import type { Fact } from '../../src/memory/types.js';
import { fact as memoryFact } from '../memory/helpers.js';

// Shared by the recall tests.

/**
 * An active fact `id` of session s1 for the recall tests, observed and updated on `day` (`extra` over that):
 * `recallFact('2026-03-10')('f-aaaaaaaaaa', 'No spicy food', 'The user does not eat spicy food.')`.
 */
export function recallFact(
  day: string,
): (id: string, title: string, body: string, extra?: Partial<Fact>) => Fact {
  return (id, title, body, extra = {}) =>
    memoryFact({ id, title, body, observed: day, updated: day, sources: ['s1'], ...extra });
}
