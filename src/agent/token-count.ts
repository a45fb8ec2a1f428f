/**
 * Token estimates for the agent side. The provider's own counting endpoint is exact (Anthropic's
 * `messages.countTokens`) and is used where it exists (see `ChatProvider.countTokens`); everywhere else a
 * characters-per-token ratio by language stands in. Pure.
 */

/**
 * Characters per token by language: 3.5 for English and 4.0 for Portuguese (the usual rules of thumb for
 * Claude's and Llama's tokenizers; Portuguese words are longer). A config may add or change languages
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

/**
 * Characters per token of scripts that tokenizers cut far finer than Latin text, whatever the conversation's
 * language: a Han or Hangul character is about one token (Claude's and Llama's tokenizers alike, measured
 * as 0.7–1.3 characters a token, so 1 errs on the side of a smaller request); Thai and the Indic scripts about
 * 1.5; Cyrillic, Greek, Arabic and Hebrew about 2.5. Other characters count at the language's ratio
 * ({@link charsPerTokenFor}). A config may change any of them: `chat.charsPerToken` takes these script names
 * as keys too.
 */
export const SCRIPT_CHARS_PER_TOKEN: Readonly<Record<ScriptName, number>> = {
  cjk: 1,
  hangul: 1,
  'south-east-asian': 1.5,
  indic: 1.5,
  'cyrillic-greek-semitic': 2.5,
};
export type ScriptName = 'cjk' | 'hangul' | 'south-east-asian' | 'indic' | 'cyrillic-greek-semitic';

const SCRIPT_PATTERNS: readonly (readonly [ScriptName, RegExp])[] = [
  ['cjk', /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Bopomofo}]/gu],
  ['hangul', /\p{Script=Hangul}/gu],
  ['south-east-asian', /[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/gu],
  [
    'indic',
    /[\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}]/gu,
  ],
  [
    'cyrillic-greek-semitic',
    /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Armenian}\p{Script=Georgian}]/gu,
  ],
];
/** Any character of the scripts above: a text without one (most English) is counted in one division. */
const DENSE = /[^ -\u024f\u2000-\u206f\t\n\r]/u;

/** Script ratios with a config's overrides (`chat.charsPerToken` keys named after scripts). */
export function scriptRatiosFrom(
  table: Readonly<Record<string, number>> = {},
): Readonly<Record<ScriptName, number>> {
  const ratios = { ...SCRIPT_CHARS_PER_TOKEN };
  for (const name of Object.keys(ratios) as ScriptName[]) {
    const override = table[name];
    if (override !== undefined) ratios[name] = override;
  }
  return ratios;
}

/**
 * Estimated tokens of a text or of anything JSON-serialisable, rounded up: characters of dense scripts at their
 * own ratio ({@link SCRIPT_CHARS_PER_TOKEN}), the rest at `charsPerToken`. A Chinese chat on an 8,192-token
 * local model is counted as the model counts it, about a token a character, not 3.5 characters a token.
 */
export function estimateTokensAt(
  value: unknown,
  charsPerToken: number,
  scriptRatios: Readonly<Record<ScriptName, number>> = SCRIPT_CHARS_PER_TOKEN,
): number {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  if (!DENSE.test(text)) return Math.ceil(text.length / charsPerToken);
  let tokens = 0;
  let counted = 0;
  for (const [name, pattern] of SCRIPT_PATTERNS) {
    // Code points, not UTF-16 units: a Han character outside the BMP is one character.
    const found = text.match(pattern);
    if (found === null) continue;
    tokens += found.length / scriptRatios[name];
    for (const character of found) counted += character.length;
  }
  return Math.ceil(tokens + (text.length - counted) / charsPerToken);
}
