/** Token counts: the unit every layer reports model use in. */

/** Tokens used by one call or summed over a run. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export function emptyUsage(): TokenUsage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

export function addUsage(total: TokenUsage, more: TokenUsage): TokenUsage {
  return {
    inputTokens: total.inputTokens + more.inputTokens,
    outputTokens: total.outputTokens + more.outputTokens,
    cacheReadTokens: total.cacheReadTokens + more.cacheReadTokens,
    cacheWriteTokens: total.cacheWriteTokens + more.cacheWriteTokens,
  };
}
