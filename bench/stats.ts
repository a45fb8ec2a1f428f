/** Small statistics and timing helpers for the figures. */

/** The `p`-th percentile (0–100) of `values`, nearest rank; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Milliseconds `work` takes. */
export async function timeMs(work: () => unknown): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** Estimated tokens of a text: characters / 4, as `estimateTokens` and the fake server count them. */
export function tokensOf(chars: number): number {
  return Math.ceil(chars / 4);
}
