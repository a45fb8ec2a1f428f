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

/** The meters made so far, by model name and price: a model has one meter, however many read it. */
const meters = new Map<string, CostMeter>();

/**
 * The cost meter of a model, one per model name and price: the provider built from the config and a run that
 * checks its budget against the same model read the same meter. Meters are pure, so sharing one is safe.
 */
export function costMeterOf(config: Pick<ModelConfig, 'name' | 'price'>): CostMeter {
  const key = JSON.stringify([config.name, config.price ?? null]);
  let meter = meters.get(key);
  if (meter === undefined) {
    meter = createCostMeter(config);
    meters.set(key, meter);
  }
  return meter;
}

/** USD of a call's usage (undefined without a price); `priced`: the model has a known price. */
export interface CostMeter {
  (usage: TokenUsage, options?: { readonly batch?: boolean }): number | undefined;
  readonly priced: boolean;
}
