import type { ModelConfig } from '../config/schema.js';
import type { TokenUsage } from '../core/usage.js';
import { costOfCall, priceFor } from './prices.js';

/**
 * The cost meter of a model: USD of a call's usage at the model's price (`model.price` in the config, else the
 * price table), or undefined when the model has no known price. Every provider prices its calls with it,
 * chat calls and structured calls alike, so `dreamd chat` and a consolidation run report the same dollars
 * for the same tokens.
 */
export function createCostMeter(config: Pick<ModelConfig, 'name' | 'price'>): CostMeter {
  const price = priceFor(config.name, config.price);
  const meter = (usage: TokenUsage, options: { readonly batch?: boolean } = {}) =>
    price === undefined ? undefined : costOfCall(usage, price, { batch: options.batch === true });
  return Object.assign(meter, { priced: price !== undefined });
}

/** USD of a call's usage (undefined without a price); `priced`: the model has a known price. */
export interface CostMeter {
  (usage: TokenUsage, options?: { readonly batch?: boolean }): number | undefined;
  readonly priced: boolean;
}
