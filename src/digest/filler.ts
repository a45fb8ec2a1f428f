/**
 * What carries no fact in a conversation, dropped from the digest before any cutting (so the room it took goes
 * to text that matters): greetings, thanks and goodbyes said alone, the assistant's stock openers and closers,
 * and the assistant's sentences that only echo what the user just said. Pure.
 *
 * Kept on purpose: "ok", "yes", "perfect", "exactly" and the like said alone. Said after a question or a
 * proposal they are a confirmation, and a confirmation is a feedback fact. Said with thanks ("Great, thanks.",
 * "Perfeito, obrigado!") the thanks is what the message is for, and it goes. A message with any other word
 * ("Thanks, and deploy to staging") is kept whole. English, Portuguese, Spanish, French and German forms.
 */
import { normalizeText } from '../util/normalize-text.js';

/** Whole messages that are only courtesy: each alternative is one phrase, matched on the normalised text. */
const COURTESY_PHRASES = [
  'hi',
  'hello',
  'hey',
  'hiya',
  'good morning',
  'good afternoon',
  'good evening',
  'good night',
  'thanks',
  'thank you',
  'thanks a lot',
  'thank you so much',
  'thank you very much',
  'thanks so much',
  'many thanks',
  'thx',
  'ty',
  'cheers',
  'bye',
  'goodbye',
  'bye bye',
  'see you',
  'see you later',
  'see you tomorrow',
  'talk later',
  'have a nice day',
  'have a good day',
  'you re welcome',
  'my pleasure',
  'no worries',
  'ola',
  'oi',
  'bom dia',
  'boa tarde',
  'boa noite',
  'obrigado',
  'obrigada',
  'muito obrigado',
  'muito obrigada',
  'valeu',
  'tchau',
  'ate logo',
  'ate amanha',
  'de nada',
  'hola',
  'buenos dias',
  'buenas tardes',
  'buenas noches',
  'gracias',
  'muchas gracias',
  'adios',
  'hasta luego',
  'hasta manana',
  'bonjour',
  'bonsoir',
  'salut',
  'merci',
  'merci beaucoup',
  'au revoir',
  'a bientot',
  'hallo',
  'guten morgen',
  'guten tag',
  'guten abend',
  'danke',
  'danke schon',
  'vielen dank',
  'tschuss',
  'bis bald',
];

const COURTESY = new Set(COURTESY_PHRASES);
/**
 * Words that may join courtesy phrases ("hi there", "thanks again", "ok thanks bye", "great, thanks"): never
 * a message alone, since a message of joiners only is no courtesy (`isCourtesyOnly` needs a phrase). The
 * appraisals ("great", "perfect", "genial") are here: with thanks they close a conversation; alone they stay,
 * as confirmations. "yes" and "no" are not: "No, thanks" refuses something.
 */
const JOINERS = new Set([
  'there',
  'again',
  'and',
  'e',
  'y',
  'all',
  'everyone',
  'ok',
  'okay',
  'so',
  'much',
  'a',
  'lot',
  'very',
  'great',
  'perfect',
  'awesome',
  'nice',
  'cool',
  'excellent',
  'good',
  'wonderful',
  'brilliant',
  'fine',
  'alright',
  'otimo',
  'perfeito',
  'beleza',
  'genial',
  'perfecto',
  'vale',
  'estupendo',
  'excelente',
  'super',
  'parfait',
  'tres',
  'bien',
  'prima',
  'toll',
  'gut',
  'sehr',
]);

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Calls `visit` with each word of `normalizeText(text)` in order until it returns false; returns false then, true
 * when every word was visited. Printable ASCII is walked in place, one word lower-cased at a time, so a test
 * that fails on the first word (most of them) costs one word, not the whole text.
 */
function everyWord(text: string, visit: (word: string) => boolean): boolean {
  if (!PRINTABLE_ASCII.test(text)) {
    for (const word of normalizeText(text).split(' ')) if (word !== '' && !visit(word)) return false;
    return true;
  }
  let start = -1;
  for (let index = 0; index < text.length; index += 1) {
    if (isAsciiAlnum(text.charCodeAt(index))) {
      if (start < 0) start = index;
    } else if (start >= 0) {
      if (!visit(text.slice(start, index).toLowerCase())) return false;
      start = -1;
    }
  }
  return start < 0 || visit(text.slice(start).toLowerCase());
}

/** `[a-z0-9]` after lower-casing: a letter or digit of printable ASCII. */
function isAsciiAlnum(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39);
}

/** The words of `normalizeText(text)`, in order (see {@link everyWord}). */
function normalisedWords(text: string): string[] {
  const words: string[] = [];
  everyWord(text, (word) => {
    words.push(word);
    return true;
  });
  return words;
}

/**
 * Whether a message's text is only courtesy ("Thanks!", "Olá, bom dia", "hi there 👋"): a sequence of
 * courtesy phrases and joining words, nothing else. A text of more than 8 words never is.
 */
export function isCourtesyOnly(text: string): boolean {
  if (text.length > 80) return false;
  const words = normalisedWords(text);
  if (words.length === 0 || words.length > 8) return false;
  let index = 0;
  let phrases = 0;
  while (index < words.length) {
    let matched = 0;
    for (let length = Math.min(4, words.length - index); length >= 1; length -= 1) {
      if (COURTESY.has(words.slice(index, index + length).join(' '))) {
        matched = length;
        break;
      }
    }
    if (matched > 0) {
      phrases += 1;
      index += matched;
    } else if (JOINERS.has(words[index] ?? '')) {
      index += 1;
    } else {
      return false;
    }
  }
  return phrases > 0;
}

/** The words a list of phrase patterns can match: their text without the groups and `?` of the patterns. */
function wordsOfPatterns(patterns: readonly string[]): string[] {
  return patterns.flatMap((pattern) => pattern.replace(/\(\?:|[()?|]/g, ' ').split(' '));
}

/**
 * Small talk either side says, as whole sentences (normalised: "what's up" is `what s up`): greetings
 * beyond a word ("good to see you again"), how-are-yous, offers of help with no content, sign-offs.
 */
const SMALL_TALK = [
  '(?:it s |it is )?(?:great|good|nice|lovely) to (?:see|hear from) you(?: again| too)?',
  'what s up',
  'whats up',
  'anything new',
  'what s new',
  'how are you(?: doing)?(?: today)?',
  'how s it going',
  'how is it going',
  'how have you been',
  'long time no see',
  'talk soon',
  'talk to you (?:soon|later)',
  '(?:that s|that is) all(?: for now| for today)?',
  'have a (?:great|good|nice|lovely) (?:day|one|evening|weekend)',
  'how can i (?:help|assist)(?: you)?(?: today)?',
  'what can i do for you(?: today)?',
  'i m (?:fine|good|great|well)(?: thanks| thank you)?',
  'not much',
  '(?:that s|that is) (?:great|good|wonderful) news',
  'great news',
];
const SMALL_TALK_SENTENCE = new RegExp(`^(?:${SMALL_TALK.join('|')})$`, 'u');

/** Every word courtesy and small talk are made of: a message with any other word is neither (a cheap first test). */
const SMALL_TALK_WORDS = new Set([
  ...COURTESY_PHRASES.flatMap((phrase) => phrase.split(' ')),
  ...JOINERS,
  ...wordsOfPatterns(SMALL_TALK),
]);

/** Longest message {@link isSmallTalkOnly} looks at: small talk is short. */
const SMALL_TALK_MAX_CHARS = 200;

/**
 * Whether a message is only courtesy and small talk, sentence by sentence and clause by clause ("Hey! Good to see you. What's
 * up? Anything new?"): it carries no fact. A message of more than {@link SMALL_TALK_MAX_CHARS} characters
 * never is; one sentence that says anything else keeps the whole message.
 */
export function isSmallTalkOnly(text: string): boolean {
  if (text.length > SMALL_TALK_MAX_CHARS) return false;
  if (!everyWord(text, (word) => SMALL_TALK_WORDS.has(word))) return false;
  if (isCourtesyOnly(text)) return true;
  const sentences = text
    .split(/[.!?…,;]+/u)
    .map((sentence) => sentence.trim())
    .filter((sentence) => normalizeText(sentence) !== '');
  return (
    sentences.length > 0 &&
    sentences.every(
      (sentence) => isCourtesyOnly(sentence) || SMALL_TALK_SENTENCE.test(normalizeText(sentence)),
    )
  );
}

/** The assistant's stock openers and closers, as whole sentences. */
const STOCK_PHRASES = [
  ...SMALL_TALK,
  'sure',
  'of course',
  'certainly',
  'absolutely',
  'great question',
  'good question',
  'happy to help',
  'glad to help',
  'i d be happy to help',
  'i hope this helps',
  'hope this helps',
  'let me know if you have any (?:other |more )?questions',
  'let me know if you need anything else',
  'let me know if there s anything else i can help with',
  'feel free to ask if you have any (?:other |more )?questions',
  'is there anything else i can help you with',
  'claro',
  'com certeza',
  'por supuesto',
  'espero que ajude',
  'espero que te ayude',
];
const STOCK_SENTENCE = new RegExp(`^(?:${STOCK_PHRASES.join('|')})$`, 'u');

/** Every word stock sentences and courtesy are made of: a sentence with any other word is neither. */
const STOCK_WORDS = new Set([...SMALL_TALK_WORDS, ...wordsOfPatterns(STOCK_PHRASES)]);

/** Longest sentence that can be filler: stock phrases are short, and an echo is as long as a typed message. */
const FILLER_SENTENCE_MAX_CHARS = 300;

function isSpace(code: number): boolean {
  return code === 32 || code === 10 || code === 9 || code === 13;
}

/** Length of the first sentence of `text` from `start` (closing punctuation and spaces included), or -1 past `limit`. */
function firstSentenceLength(text: string, start: number, limit: number): number {
  let index = start;
  const stop = Math.min(text.length, start + limit + 1);
  while (index < stop && !isSentenceEnd(text[index])) index += 1;
  if (index >= stop && stop < text.length) return -1;
  while (index < text.length && isSentenceEnd(text[index])) index += 1;
  while (index < text.length && isSpace(text.charCodeAt(index))) index += 1;
  return index - start <= limit ? index - start : -1;
}

function isSentenceEnd(char: string | undefined): boolean {
  return char === '.' || char === '!' || char === '?' || char === '…';
}

/** Where the last sentence of `text[0, end)` starts (its closing punctuation and spaces are inside it). */
function lastSentenceStart(text: string, end: number, floor: number): number {
  let index = end;
  while (index > floor && isSpace(text.charCodeAt(index - 1))) index -= 1;
  while (index > floor && isSentenceEnd(text[index - 1])) index -= 1;
  while (index > floor && !isSentenceEnd(text[index - 1])) index -= 1;
  return index;
}

/** Sentences looked at at each end of an answer: stock phrases and echoes sit there, never deep inside. */
const EDGE_SENTENCES = 3;

/** The words a user said, as {@link dropAssistantFiller} asks about them: words of 3 letters or more, normalised. */
export interface SaidWords {
  /** Whether `word` (normalised, 3 letters or more) is one of them. */
  has(word: string): boolean;
  /** True when the text holds no word of 3 letters or more. */
  readonly empty: boolean;
}

/** Any run of 3 letters or digits: a word {@link SaidWords} counts. */
const WORD_OF_THREE = /[a-z0-9]{3}/i;

/**
 * The words of `text` of 3 letters or more, normalised: what "the user said it" is checked against. Printable
 * ASCII is kept as its lower-cased text and each word looked up where it stands (a handful of words are asked
 * about, so splitting the whole text would cost more); other text is split into a set.
 */
export function saidWords(text: string): SaidWords {
  if (PRINTABLE_ASCII.test(text)) {
    const lower = text.toLowerCase();
    return { has: (word) => holdsWord(lower, word), empty: !WORD_OF_THREE.test(text) };
  }
  const words = new Set<string>();
  for (const word of normalisedWords(text)) if (word.length >= 3) words.add(word);
  return { has: (word) => words.has(word), empty: words.size === 0 };
}

/** Whether lower-cased ASCII `lower` holds `word` whole: not inside a longer run of letters and digits. */
function holdsWord(lower: string, word: string): boolean {
  for (let at = lower.indexOf(word); at >= 0; at = lower.indexOf(word, at + 1)) {
    const before = at === 0 ? 0x20 : lower.charCodeAt(at - 1);
    const after = at + word.length >= lower.length ? 0x20 : lower.charCodeAt(at + word.length);
    if (!isAsciiAlnum(before) && !isAsciiAlnum(after)) return true;
  }
  return false;
}

/** No words: the tail of an answer is never an echo. */
const NOTHING_SAID: SaidWords = { has: () => false, empty: true };

/** Words of the assistant's framing of an echo ("you said you …"), not counted either way. */
const ECHO_FRAMING = new Set([
  'you',
  'your',
  'yours',
  'said',
  'say',
  'mentioned',
  'told',
  'tell',
  'noted',
  'understand',
  'understood',
  'got',
  'that',
  'see',
  'so',
  'voce',
  'disse',
  'dijiste',
  'usted',
]);

/** An echo sentence has at least this many words of 3+ letters, and this share of them in the user's text. */
const ECHO_MIN_WORDS = 5;
const ECHO_SHARE = 0.8;

/**
 * The assistant's text without its stock openers and closers and without opening sentences that only repeat
 * the user's previous message (`userWords`, from {@link saidWords}, asked for only when needed). Only the first
 * and last {@link EDGE_SENTENCES} sentences are looked at. Returns the text unchanged when nothing goes.
 */
export function dropAssistantFiller(text: string, userWords: () => SaidWords): string {
  let head = 0;
  for (let count = 0; count < EDGE_SENTENCES && head < text.length; count += 1) {
    const length = firstSentenceLength(text, head, FILLER_SENTENCE_MAX_CHARS);
    if (length <= 0 || !isFillerSentence(text.slice(head, head + length), userWords)) break;
    head += length;
  }
  const noEcho = (): SaidWords => NOTHING_SAID;
  let tail = text.length;
  for (let count = 0; count < EDGE_SENTENCES && tail > head; count += 1) {
    const start = lastSentenceStart(text, tail, Math.max(head, tail - FILLER_SENTENCE_MAX_CHARS - 1));
    if (tail - start > FILLER_SENTENCE_MAX_CHARS || (start === head && head === 0)) break;
    if (!isFillerSentence(text.slice(start, tail), noEcho)) break;
    tail = start;
  }
  return head === 0 && tail === text.length ? text : text.slice(head, tail).trim();
}

function isFillerSentence(sentence: string, userWords: () => SaidWords): boolean {
  const words = normalisedWords(sentence);
  if (words.length === 0) return false;
  if (
    words.every((word) => STOCK_WORDS.has(word)) &&
    (STOCK_SENTENCE.test(words.join(' ')) || isCourtesyOnly(sentence))
  )
    return true;
  if (words.length < ECHO_MIN_WORDS) return false;
  const said = userWords();
  if (said.empty) return false;
  const counted = new Set<string>();
  for (const word of words) if (word.length >= 3 && !ECHO_FRAMING.has(word)) counted.add(word);
  if (counted.size < ECHO_MIN_WORDS) return false;
  // An echo misses at most a fifth of its words: stop at the first miss that puts it under its share.
  let misses = 0;
  for (const word of counted) {
    if (said.has(word)) continue;
    misses += 1;
    if ((counted.size - misses) / counted.size < ECHO_SHARE) return false;
  }
  return true;
}
