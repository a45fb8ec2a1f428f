import { addUsage, emptyUsage, type TokenUsage } from '../core/usage.js';

/** The tokens and dollars of a step's model calls, summed as their answers come. */
export interface UsageTally {
  usage: TokenUsage;
  /** USD so far; undefined once a call had no price. */
  costUsd: number | undefined;
}

/** A tally before the first call: no tokens, no dollars (and unknown from the first call without a price). */
export function createUsageTally(): UsageTally {
  return { usage: emptyUsage(), costUsd: 0 };
}

/** A sum of dollars that stays unknown once one of its terms is: one unpriced call makes the total unknown. */
export function addCost(total: number | undefined, cost: number | undefined): number | undefined {
  return total === undefined || cost === undefined ? undefined : total + cost;
}

/** Adds one answer's tokens and its price (undefined: no known price), the rule every step counts calls by. */
export function countUsage(tally: UsageTally, usage: TokenUsage, cost: number | undefined): void {
  tally.usage = addUsage(tally.usage, usage);
  tally.costUsd = addCost(tally.costUsd, cost);
}
