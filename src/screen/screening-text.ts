/**
 * The form of a text the instruction screen reads: what a person sees when reading it, with every trick that
 * makes the same words look different to a regular expression undone. Never written anywhere; only screened.
 *
 * In order:
 * 1. NFKC: full-width letters, ligatures, mathematical alphabets (`𝐢𝐠𝐧𝐨𝐫𝐞`) and circled letters become plain.
 * 2. Invisible characters go: every format character (zero-width spaces and joiners, soft hyphens, bidi
 *    controls, tag characters) and the Hangul fillers, so `ig\u200Bnore` reads `ignore`. (The screen flags text that held hidden characters on its own, before this step.)
 * 3. Confusables fold to the Latin letter they imitate: Cyrillic `іgnоrе` and Greek `ΑΙ` read as `ignore`, `AI`.
 *    A table of the letters that look the same in common fonts (Unicode's confusables.txt, the single-letter
 *    Cyrillic, Greek and Latin-extension entries), not the whole file: every other script is left as it is.
 * 4. Diacritics and invisible marks go (NFD, combining marks dropped, variation selectors with them), so the patterns of other languages are written once:
 *    `instruções` reads `instrucoes`, `précédentes` `precedentes`, `Gedächtnis` `Gedachtnis`. Chinese is
 *    untouched by this step.
 * 5. Curly quotes and apostrophes straightened; runs of spaces and tabs become one space (lines are kept).
 */

/**
 * Format characters and the Hangul fillers, which render as nothing: removed before screening. Invisible
 * marks (variation selectors, the combining grapheme joiner) go with the other marks in step 4.
 */
const INVISIBLE = /[\p{Cf}\u115F\u1160\u3164\uFFA0]/gu;

/** Look-alike letters and the Latin letter each imitates. */
const CONFUSABLES: Readonly<Record<string, string>> = {
  // Cyrillic, lower case.
  а: 'a',
  в: 'b',
  с: 'c',
  ԁ: 'd',
  е: 'e',
  ё: 'e',
  һ: 'h',
  і: 'i',
  ї: 'i',
  ј: 'j',
  к: 'k',
  ӏ: 'l',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  ԛ: 'q',
  г: 'r',
  ѕ: 's',
  т: 't',
  џ: 'u',
  ѵ: 'v',
  ԝ: 'w',
  х: 'x',
  у: 'y',
  // Cyrillic, upper case.
  А: 'A',
  В: 'B',
  С: 'C',
  Е: 'E',
  Н: 'H',
  І: 'I',
  Ј: 'J',
  К: 'K',
  М: 'M',
  О: 'O',
  Р: 'P',
  Ѕ: 'S',
  Т: 'T',
  Х: 'X',
  У: 'Y',
  Ү: 'Y',
  // Greek.
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  γ: 'y',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
  // Latin look-alikes that NFKC keeps.
  ı: 'i',
  ȷ: 'j',
  ɡ: 'g',
  ɑ: 'a',
  ʟ: 'L',
  ᴀ: 'A',
  ɪ: 'I',
  ꓲ: 'I',
  ǀ: 'l',
};

const CONFUSABLE_PATTERN = new RegExp(`[${Object.keys(CONFUSABLES).join('')}]`, 'gu');

/** Only texts outside plain ASCII need any of steps 1 to 4; most facts are plain ASCII. */
// eslint-disable-next-line no-control-regex
const PLAIN_ASCII = /^[\x00-\x7F]*$/;

/** The text as the instruction screen reads it (see the module comment). Pure. */
export function screeningText(text: string): string {
  let folded = text;
  if (!PLAIN_ASCII.test(folded)) {
    folded = folded
      .normalize('NFKC')
      .replace(INVISIBLE, '')
      .replace(CONFUSABLE_PATTERN, (char) => CONFUSABLES[char] ?? char)
      .normalize('NFD')
      .replace(/\p{M}/gu, '')
      .normalize('NFC')
      .replace(/[\u2018\u2019\u02BC\u2032]/gu, "'")
      .replace(/[\u201C\u201D\u00AB\u00BB\u201E]/gu, '"');
  }
  return folded.replace(/[\t ]+/gu, ' ');
}
