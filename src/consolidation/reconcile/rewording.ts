/**
 * Rewordings: one fact said twice in other words ("Ana works at Google as an engineer" / "Ana is an engineer at
 * Google"; "User prefers tabs over spaces" / "The user likes tabs rather than spaces"). The word and word-pair
 * score of the near-duplicate rule (`NEAR_DUPLICATE_THRESHOLD`, `facts/tunables.ts`) misses them: a reordered
 * sentence shares few word pairs, and "prefers" shares nothing with "likes". Pure, deterministic, no model call.
 *
 * Each text becomes a set of **terms**: content words stemmed (Snowball, `search/bm25.ts`), a few common
 * synonyms folded into one term ({@link SYNONYMS}), and words that say nothing of the fact dropped ("user",
 * "always", "currently" …). Two texts are rewordings when:
 * - they share at least {@link MIN_SHARED_TERMS} terms;
 * - one text's terms are all in the other, which adds none if the bodies share fewer than
 *   {@link MIN_BODY_TERMS} terms, one if they share that many, two past {@link LONG_FACT_TERMS}: a swap ("dog"
 *   for "cat", "unit" for "integration") is never a rewording, only an added word is. Terms only a title holds
 *   count when the bodies share too few terms to say what the fact is about ("Ana's dog" / "Ana's cat", both
 *   "Named Rex."); else titles, written freely, may differ;
 * - both or neither are negated ("not", "never", "avoids", "stopped", "no longer", "used to" …);
 * - they name the same names (capitalised inside a sentence, `curate.ts` `namesIn`: a sentence's or a title's
 *   first word is capitalised whatever it is), numbers and links (`features.ts`), names and numbers of the
 *   bodies in the same order ("Alice manages Bob" is not "Bob manages Alice"; "from 9 to 10" not "from 10 to 9");
 * - when a text compares ("over", "rather than", "instead of", "vs"), the shared terms of the bodies come in the
 *   same order ("tabs over spaces" is not "spaces over tabs").
 * A missed merge is cheaper than a wrong one: curation, with the model, merges what this leaves apart.
 */
import { stem } from '../../search/bm25.js';
import { namesIn } from '../curation/curate.js';
import { detailsOf, type FactText } from '../facts/features.js';
import { isStopWord, normalizeText } from '../facts/similarity.js';
import { LONG_FACT_TERMS, MIN_BODY_TERMS, MIN_SHARED_TERMS, TERMS_BY_TEXT_KEPT } from './tunables.js';

/**
 * Words of one meaning in facts, each group folded into its first word. Kept small and plain: a word that has
 * another sense in facts ("run", "call" for a meeting, "stop") is left out.
 */
const SYNONYMS: readonly (readonly string[])[] = [
  ['prefer', 'like', 'favor', 'favour', 'favorite', 'favourite', 'love', 'enjoy', 'fond'],
  ['want', 'wish'],
  ['work', 'employ', 'employer', 'employee', 'job'],
  ['live', 'reside', 'resident', 'based'],
  ['short', 'brief', 'concise', 'terse'],
  ['answer', 'reply', 'response', 'respond'],
  ['start', 'begin', 'commence'],
  ['buy', 'purchase'],
  ['big', 'large'],
  ['fast', 'quick'],
  ['help', 'assist'],
  ['talk', 'speak'],
  ['say', 'tell', 'mention'],
  ['kid', 'child', 'children'],
  ['doc', 'docs', 'documentation'],
  ['repo', 'repository'],
  ['config', 'configuration'],
  ['app', 'application'],
];

/** Words that say nothing of what a fact holds: who it is about in general, how often, since when. */
const FILLER = new Set(
  (
    'user person i me my we our us you your always usually usual currently current now also really generally ' +
    'typically just still very mostly please should must will would can could am use uses using utilize ' +
    'utilise named called under via within every each all'
  ).split(' '),
);

/** Words that negate what follows, or say it no longer holds. */
const NEGATIONS = new Set(
  (
    'not no never t dont doesnt didnt cannot cant wont isnt arent wasnt none nobody nothing neither nor without ' +
    'avoid avoids avoided avoiding stop stops stopped quit quits hate hates hated dislike dislikes disliked ' +
    'refuse refuses refused longer former formerly used'
  ).split(' '),
);

/** Words that compare two things, so their order matters: folded into one term. */
const CONTRASTS = new Set(['over', 'than', 'instead', 'rather', 'vs', 'versus']);
const CONTRAST_TERM = '\u0001vs';

const canonical = new Map<string, string>();
for (const group of SYNONYMS) {
  const head = stem(group[0] as string);
  for (const word of group) canonical.set(stem(word), head);
}

/** What a rewording is judged on, for one text. */
interface Terms {
  /** Terms of the title and body. */
  readonly all: ReadonlySet<string>;
  /** Terms of the body, in order, repeats kept. */
  readonly body: readonly string[];
  /** Terms of two words of the body side by side ("function names"), as "first second". */
  readonly adjacent: ReadonlySet<string>;
  readonly negated: boolean;
  readonly compares: boolean;
}

const LINK = /(\bhttps?:\/\/\S+)/;

/** A text's normalised words in order, each with whether it is part of a link. */
function* wordsOf(text: string): Generator<[string, boolean]> {
  for (const [index, piece] of text.split(LINK).entries())
    for (const word of normalizeText(piece).split(' ')) if (word !== '') yield [word, index % 2 === 1];
}

function termsOfPart(text: string): {
  terms: string[];
  adjacent: Set<string>;
  negated: boolean;
  compares: boolean;
} {
  const terms: string[] = [];
  const adjacent = new Set<string>();
  let negated = false;
  let compares = false;
  // The term of the word just before, when that word gave one: two terms of words side by side. A link's
  // words are terms, but side by side with nothing ("Runbook: https://…" / "The runbook lives at https://…").
  let previous: string | undefined;
  for (const [word, inLink] of wordsOf(text)) {
    if (inLink) {
      if (!isStopWord(word) && !FILLER.has(word)) terms.push(canonical.get(stem(word)) ?? stem(word));
      previous = undefined;
      continue;
    }
    if (NEGATIONS.has(word)) {
      negated = true;
      previous = undefined;
      continue;
    }
    if (CONTRASTS.has(word)) {
      compares = true;
      if (terms.at(-1) !== CONTRAST_TERM) terms.push(CONTRAST_TERM);
      previous = undefined;
      continue;
    }
    if (isStopWord(word) || FILLER.has(word)) {
      previous = undefined;
      continue;
    }
    const stemmed = stem(word);
    const term = canonical.get(stemmed) ?? stemmed;
    if (previous !== undefined) adjacent.add(`${previous} ${term}`);
    terms.push(term);
    previous = term;
  }
  return { terms, adjacent, negated, compares };
}

const cache = new WeakMap<FactText, Terms>();
/**
 * Terms by text, across objects, as `features.ts` keeps features: each run loads memory into new objects but
 * most facts are unchanged, so a daemon stems a fact's words once per text. Cleared past
 * {@link TERMS_BY_TEXT_KEPT} entries.
 */
const termsByText = new Map<string, Terms>();

function termsOf(text: FactText): Terms {
  const cached = cache.get(text);
  if (cached !== undefined) return cached;
  const key = `${text.title}\u0000${text.body}`;
  let terms = termsByText.get(key);
  if (terms === undefined) {
    const title = termsOfPart(text.title);
    const body = termsOfPart(text.body);
    terms = {
      all: new Set([...title.terms, ...body.terms]),
      body: body.terms,
      adjacent: body.adjacent,
      negated: title.negated || body.negated,
      compares: title.compares || body.compares,
    };
    if (termsByText.size >= TERMS_BY_TEXT_KEPT) termsByText.clear();
    termsByText.set(key, terms);
  }
  cache.set(text, terms);
  return terms;
}

/** The items of `sequence` that `keep` holds, first occurrences only. */
function ordered(sequence: readonly string[], keep: (item: string) => boolean): string[] {
  const out: string[] = [];
  for (const item of sequence) if (keep(item) && !out.includes(item)) out.push(item);
  return out;
}

function sameOrder(a: readonly string[], b: readonly string[]): boolean {
  const inB = new Set(b);
  const inA = new Set(a);
  const left = ordered(a, (item) => inB.has(item));
  const right = ordered(b, (item) => inA.has(item));
  return left.length === right.length && left.every((item, index) => item === right[index]);
}

/** Terms of `a` that `b` lacks: those of `a`'s body, and those only `a`'s title holds. */
function unmatched(a: Terms, b: Terms): { body: number; title: number } {
  const body = new Set(a.body);
  let inBody = 0;
  let inTitle = 0;
  for (const term of a.all) {
    if (b.all.has(term)) continue;
    if (body.has(term)) inBody += 1;
    else inTitle += 1;
  }
  return { body: inBody, title: inTitle };
}

function sharedTerms(a: Iterable<string>, b: ReadonlySet<string>): number {
  let shared = 0;
  for (const term of new Set(a)) if (b.has(term) && term !== CONTRAST_TERM) shared += 1;
  return shared;
}

/**
 * Names of a fact's body in reading order, and whether the two facts name the same ones. A name is a
 * capitalised word inside a sentence, or a sentence's first word when either fact writes it as a name
 * elsewhere (`curate.ts` `namesIn`): a title's or a sentence's first word ("Indentation", "Dependencies") is
 * capitalised whatever it is.
 */
function sameNames(a: FactText, b: FactText): boolean {
  const known = new Set([...namesIn(a), ...namesIn(b)]);
  const names = (text: FactText) => namesIn(text, known).filter((name) => !FILLER.has(name));
  const x = names(a);
  const y = names(b);
  if (x.length !== y.length || x.some((name) => !y.includes(name))) return false;
  const order = (text: FactText) => names({ ...text, title: '' });
  if (sameOrder(order(a), order(b))) return true;
  // Another order with the same owner is the same relation said the other way round: "Jonas has a parrot
  // named Rex" / "Rex is Jonas's parrot", "Ana's sister Clara …" / "Clara, Ana's sister, …". Without an owner
  // ("Alice manages Bob"), or with another ("Ana's boss Bob" / "Bob's boss Ana"), the order is the meaning.
  const ownersOfA = owners(a.body, x);
  return ownersOfA.length > 0 && sameSet(ownersOfA, owners(b.body, y));
}

/** The names a body says own something: "Jonas's", "Jonas' ", "Jonas has", "Jonas owns". */
function owners(body: string, names: readonly string[]): string[] {
  const folded = body.toLowerCase().replace(/\u2019/g, "'");
  return names.filter((name) => {
    const escaped = name.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return new RegExp(`(?:^|[^\\p{L}])${escaped}(?:'s?(?![\\p{L}])| (?:has|have|owns)\\b)`, 'u').test(folded);
  });
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item) => b.includes(item));
}

/** Same numbers and links (`features.ts`), the numbers in the same order. */
function sameNumbersAndLinks(a: FactText, b: FactText): boolean {
  const x = detailsOf(a);
  const y = detailsOf(b);
  const same = (left: ReadonlySet<string>, right: ReadonlySet<string>) =>
    left.size === right.size && [...left].every((value) => right.has(value));
  if (!same(x.numbers, y.numbers) || !same(x.links, y.links)) return false;
  const numbers = (text: FactText, set: ReadonlySet<string>) =>
    normalizeText(text.body)
      .split(' ')
      .filter((word) => set.has(word));
  return sameOrder(numbers(a, x.numbers), numbers(b, y.numbers));
}

/** The terms of a text, for a quick look-up of the facts it may be a rewording of. */
export function rewordingTerms(text: FactText): ReadonlySet<string> {
  return termsOf(text).all;
}

/**
 * A look-up of the texts among `texts` a text may be a rewording of, by prefix filtering: a rewording holds all
 * but at most {@link termsAdded} of the text's body terms, so it holds one of any that many more (the rarest
 * are looked up); a text of fewer body terms is looked up by {@link MIN_SHARED_TERMS}, the terms any rewording
 * shares (of n terms, it holds one of any n - 1). A superset, in the order of `texts`: the caller judges each
 * with {@link isRewording}. Each text is compared with the few that hold its rare terms, not with every one.
 */
export function createRewordingLookup<T extends FactText>(texts: readonly T[]): (text: FactText) => T[] {
  const postings = new Map<string, number[]>();
  texts.forEach((text, position) => {
    for (const term of termsOf(text).all) {
      const list = postings.get(term);
      if (list === undefined) postings.set(term, [position]);
      else list.push(position);
    }
  });
  const mostAdded = termsAdded(Number.POSITIVE_INFINITY);
  return (text) => {
    const terms = termsOf(text);
    const body = new Set(terms.body);
    const [among, needed] =
      body.size > mostAdded
        ? [body, mostAdded + 1]
        : [terms.all, Math.max(0, terms.all.size - MIN_SHARED_TERMS + 1)];
    const rarest = [...among]
      .map((term) => postings.get(term) ?? [])
      .sort((a, b) => a.length - b.length)
      .slice(0, needed);
    const found = new Set<number>();
    for (const list of rarest) for (const position of list) found.add(position);
    return [...found].sort((a, b) => a - b).map((position) => texts[position] as T);
  };
}

/**
 * Whether a term `longer`'s body adds stands between two terms `shorter`'s body says side by side: "function
 * argument names" against "function names", "every single install" against "every install". Such a word names
 * another thing (a narrower one), not the same thing at more length; a word added around what both say ("The
 * team tracks bugs …", "… as agreed") or where the shorter had a word of its own ("uses Vitest" / "run with
 * Vitest") does not.
 */
function addsInside(longer: Terms, shorter: Terms): boolean {
  const inShorter = new Set(shorter.body);
  let previous: string | undefined;
  let parted = false;
  for (const term of longer.body) {
    if (!inShorter.has(term)) {
      if (previous !== undefined) parted = true;
      continue;
    }
    if (parted && previous !== undefined && shorter.adjacent.has(`${previous} ${term}`)) return true;
    previous = term;
    parted = false;
  }
  return false;
}

/** Whether either fact's body adds a term inside two terms the other says side by side (see `addsInside`). */
export function addsInsideACompound(a: FactText, b: FactText): boolean {
  const x = termsOf(a);
  const y = termsOf(b);
  return addsInside(x, y) || addsInside(y, x);
}

/** Terms a body may add and still say the same, when the bodies share `bodies` terms: none, one, or two. */
function termsAdded(bodies: number): number {
  return bodies >= LONG_FACT_TERMS ? 2 : bodies >= MIN_BODY_TERMS ? 1 : 0;
}

/**
 * Whether two facts say the same thing in other words (see the module comment). Symmetric. With `addedTerms:
 * false`, an added term may not stand inside two terms the other says side by side (`addsInside`): what
 * reconcile merges by code, where "function argument names" is another rule than "function names"; holding
 * back a rewording of a held fact allows it.
 */
export function isRewording(
  a: FactText,
  b: FactText,
  options: { readonly addedTerms?: boolean } = {},
): boolean {
  const x = termsOf(a);
  const y = termsOf(b);
  if (x.negated !== y.negated) return false;
  const shared = sharedTerms(x.all, y.all);
  if (shared < MIN_SHARED_TERMS) return false;
  const fromX = unmatched(x, y);
  const fromY = unmatched(y, x);
  // A word swapped for another: terms on both sides the other lacks. Titles count only when the bodies alone
  // share too little to say what the fact is about ("Ana's dog" / "Ana's cat": "Named Rex.").
  const bodies = sharedTerms(x.body, new Set(y.body));
  const titlesCount = bodies < MIN_BODY_TERMS;
  const differs = (side: { body: number; title: number }) => side.body > 0 || (titlesCount && side.title > 0);
  if (differs(fromX) && differs(fromY)) return false;
  if (Math.max(fromX.body, fromY.body) > termsAdded(bodies)) return false;
  if (options.addedTerms === false && (addsInside(x, y) || addsInside(y, x))) return false;
  if ((x.compares || y.compares) && !sameOrder(x.body, y.body)) return false;
  return sameNumbersAndLinks(a, b) && sameNames(a, b);
}

/** Empties the cache of terms by text (a benchmark measuring a cold run; see `forgetFeatures`). */
export function forgetRewordingTerms(): void {
  termsByText.clear();
}
