/**
 * Token estimates for the agent side. The provider's own counting endpoint is exact (Anthropic's
 * `messages.countTokens`) and is used where it exists (see `ChatProvider.countTokens`); everywhere else a
 * characters-per-token ratio by language stands in. Pure.
 */

/**
 * Characters per token by language: 3.5 for English and 4.0 for Portuguese (seed 001: "~3.5 chars/token is a
 * good approximation for English; for Portuguese use ~4.0"). A config may add or change languages
 * (`chat.charsPerToken`).
 */
export const DEFAULT_CHARS_PER_TOKEN: Readonly<Record<string, number>> = { en: 3.5, pt: 4.0 };
/** Language assumed when none is configured. */
export const DEFAULT_LANGUAGE = 'en';

/** The ratio for a language: the configured table first, then the defaults, then English's. */
export function charsPerTokenFor(
  language: string = DEFAULT_LANGUAGE,
  table: Readonly<Record<string, number>> = {},
): number {
  const base = language.toLowerCase().split(/[-_]/)[0] ?? language;
  return (
    table[language] ??
    table[base] ??
    DEFAULT_CHARS_PER_TOKEN[base] ??
    table[DEFAULT_LANGUAGE] ??
    (DEFAULT_CHARS_PER_TOKEN[DEFAULT_LANGUAGE] as number)
  );
}

/** Estimated tokens of a text or of anything JSON-serialisable, at `charsPerToken`, rounded up. */
export function estimateTokensAt(value: unknown, charsPerToken: number): number {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return Math.ceil(text.length / charsPerToken);
}
