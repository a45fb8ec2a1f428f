/**
 * What a model call costs, in US dollars, from a price table per model.
 *
 * Prices are list prices in USD per million tokens (MTok), as Anthropic publishes them:
 * - Claude Haiku 4.5: $1 input, $5 output, $1.25 cache write (5 min), $2 cache write (1 h), $0.10 cache read;
 *   platform.claude.com/docs/en/about-claude/pricing ("Model pricing").
 * - Claude Haiku 5.5: $0.10 input, $0.50 output for prompts up to 100K tokens, $0.50 / $2.50 above;
 *   cache reads $0.01 (above 100K: $0.05); platform.claude.com/docs/en/models/haiku-5-5/overview. Cache writes
 *   follow the pricing page's multipliers of the input price: 1.25 × (5 min) and 2 × (1 h).
 * - The Message Batches API bills every token at 50 % of these prices, and the caching multipliers stack with
 *   it (pricing page, "Batch processing").
 * Any other model is priced by `model.price` in the config; without one its cost is unknown (`undefined`).
 */
import type { ModelPriceConfig } from '../config/schema.js';
import type { TokenUsage } from '../core/usage.js';

/** Prices of one model, USD per million tokens. */
export interface ModelPrice {
  /** Uncached input tokens. */
  readonly inputPerMTok: number;
  readonly outputPerMTok: number;
  /** Tokens written to the prompt cache with the default 5-minute lifetime. */
  readonly cacheWritePerMTok: number;
  /** Tokens written to the prompt cache with the 1-hour lifetime. */
  readonly cacheWrite1hPerMTok: number;
  /** Tokens read from the prompt cache. */
  readonly cacheReadPerMTok: number;
  /** Fraction of the price paid in a Message Batch (0.5: half price). */
  readonly batchFactor: number;
  /** A higher tier for calls whose prompt passes `overTokens` (input + cache read + cache write). */
  readonly longContext?: { readonly overTokens: number; readonly price: Omit<ModelPrice, 'longContext'> };
  /** Where the numbers come from, for `dreamd doctor` and the README. */
  readonly source: string;
}

const PRICING_PAGE = 'platform.claude.com/docs/en/about-claude/pricing';

function anthropicPrice(input: number, output: number, cacheRead: number, source: string): ModelPrice {
  return {
    inputPerMTok: input,
    outputPerMTok: output,
    cacheWritePerMTok: input * 1.25,
    cacheWrite1hPerMTok: input * 2,
    cacheReadPerMTok: cacheRead,
    batchFactor: 0.5,
    source,
  };
}

const HAIKU_5_5_SOURCE = `platform.claude.com/docs/en/models/haiku-5-5/overview; cache and batch multipliers from ${PRICING_PAGE}`;

/** Known models by name prefix (`claude-haiku-4-5` also matches `claude-haiku-4-5-20251001`). */
export const PRICE_TABLE: Readonly<Record<string, ModelPrice>> = {
  'claude-haiku-5-5': {
    ...anthropicPrice(0.1, 0.5, 0.01, HAIKU_5_5_SOURCE),
    longContext: { overTokens: 100_000, price: anthropicPrice(0.5, 2.5, 0.05, HAIKU_5_5_SOURCE) },
  },
  'claude-haiku-4-5': anthropicPrice(1, 5, 0.1, PRICING_PAGE),
};

/**
 * The price of a model: `model.price` when the config sets one, else the table's entry for the longest name
 * prefix that matches, else undefined. `model` may carry the provider (`anthropic:claude-haiku-4-5`).
 */
export function priceFor(model: string, configured?: ModelPriceConfig): ModelPrice | undefined {
  if (configured !== undefined) {
    return {
      inputPerMTok: configured.inputPerMTok,
      outputPerMTok: configured.outputPerMTok,
      cacheWritePerMTok: configured.cacheWritePerMTok ?? configured.inputPerMTok * 1.25,
      // The 1-hour write costs 2 / 1.25 = 1.6 × the 5-minute one, as on Anthropic's table.
      cacheWrite1hPerMTok: (configured.cacheWritePerMTok ?? configured.inputPerMTok * 1.25) * 1.6,
      cacheReadPerMTok: configured.cacheReadPerMTok ?? configured.inputPerMTok * 0.1,
      batchFactor: configured.batchFactor ?? 0.5,
      source: 'model.price in the config',
    };
  }
  const name = model.includes(':') ? model.slice(model.indexOf(':') + 1) : model;
  const match = Object.keys(PRICE_TABLE)
    .filter((prefix) => name === prefix || name.startsWith(`${prefix}-`))
    .sort((a, b) => b.length - a.length)[0];
  return match === undefined ? undefined : PRICE_TABLE[match];
}

export interface CallCostOptions {
  /** The call went through the Message Batches API. */
  readonly batch?: boolean;
  /** Cache writes were made with the 1-hour lifetime. */
  readonly cacheTtl1h?: boolean;
}

/** USD of one call's usage. The long-context tier applies when the call's prompt passes its threshold. */
export function costOfCall(usage: TokenUsage, price: ModelPrice, options: CallCostOptions = {}): number {
  const prompt = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
  const tier =
    price.longContext !== undefined && prompt > price.longContext.overTokens
      ? price.longContext.price
      : price;
  const dollars =
    usage.inputTokens * tier.inputPerMTok +
    usage.outputTokens * tier.outputPerMTok +
    usage.cacheWriteTokens *
      (options.cacheTtl1h === true ? tier.cacheWrite1hPerMTok : tier.cacheWritePerMTok) +
    usage.cacheReadTokens * tier.cacheReadPerMTok;
  return (dollars / 1_000_000) * (options.batch === true ? tier.batchFactor : 1);
}

/** Dollars rounded to a millionth of a dollar, as run records store them (no float noise in the files). */
export function roundUsd(dollars: number): number {
  return Math.round(dollars * 1_000_000) / 1_000_000;
}

/** "$0.0123", "$1.20", "$12.34"; small sums keep four decimals so a cheap run does not read as $0.00. */
export function formatUsd(dollars: number | undefined): string {
  if (dollars === undefined) return '?';
  if (dollars !== 0 && Math.abs(dollars) < 1) return `$${dollars.toFixed(4)}`;
  return `$${dollars.toFixed(2)}`;
}
