/**
 * Estimated tokens of a text: characters / 4, rounded up.
 *
 * Why 4: Claude's and OpenAI's tokenizers average about 4 characters a token on English prose and a little
 * less (3–3.5) on code, paths and logs. The digest is mostly prose with short tool lines, so 4 is close;
 * the budget it is compared with (24,000 tokens by default) sits far below any supported model's context,
 * so an estimate that runs 20% low still fits. A real tokenizer would cost a dependency and time per call
 * for no change in the number of calls.
 */
export const CHARS_PER_TOKEN = 4;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}
