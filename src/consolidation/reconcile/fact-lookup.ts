/**
 * The lookups reconcile makes for each candidate, answered from indexes instead of a scan of every fact:
 * active facts by normalised body (exact duplicates, any type), by content word and by title word (per type:
 * near duplicates and same-subject matches only ever share a word), and superseded facts by the id of the fact
 * that superseded them (traces of stale candidates). Each fact's features are computed once (`featuresOf`),
 * so a reconcile of `c` candidates into `n` facts costs about `n` feature computations plus, per candidate, the
 * facts that share one of its words, instead of `c × n` similarity computations.
 */
import type { Fact, FactType } from '../../memory/types.js';
import { featuresOf } from '../facts/features.js';
import { rewordingTerms } from './rewording.js';
import { MIN_SHARED_TERMS } from './tunables.js';

/**
 * Posting lists only grow: a fact that changes or leaves the active set stays listed under its old words, and
 * lookups keep only the facts that are still current ({@link FactLookup.isCurrent}). Removing from arrays would
 * cost a scan; a reconcile changes a few dozen facts, so the stale entries are few.
 */
type Postings = Map<string, Fact[]>;

/** Lists `fact` under `key` once: a fact's words are posted one after the other, so a repeat is the last entry. */
function post(postings: Postings, key: string, fact: Fact): void {
  const facts = postings.get(key);
  if (facts === undefined) postings.set(key, [fact]);
  else if (facts[facts.length - 1] !== fact) facts.push(fact);
}

/**
 * Word postings are kept per type and per numbers-and-links key (`FactFeatures.numbersKey`): near duplicates
 * and same-subject matches need the same type and the same numbers and links, so facts that differ there are
 * never read. Without it, thousands of facts that share their common words ("Release 1 …", "Release 2 …")
 * would each read the others: quadratic.
 */
function partitionKey(type: FactType, numbersKey: string): string {
  return `${type}\u0002${numbersKey}`;
}

function perPartition(map: Map<string, Postings>, key: string): Postings {
  let postings = map.get(key);
  if (postings === undefined) map.set(key, (postings = new Map<string, Fact[]>()));
  return postings;
}

export class FactLookup {
  private readonly byKey: Postings = new Map();
  private readonly byWord = new Map<string, Postings>();
  private readonly byTitleWord = new Map<string, Postings>();
  /** By rewording term (`rewording.ts`), per numbers key but of every type: a rewording may be filed elsewhere. */
  private readonly byTerm = new Map<string, Postings>();
  private readonly bySuperseder: Postings = new Map();

  /**
   * @param current the fact now stored under an id: postings of older versions are skipped.
   * @param lookedUp the words, body keys and numbers keys of the candidates of this reconcile: lookups only
   *   ever ask for those, so a fact is listed under them alone (most words of most facts are never asked for,
   *   and a fact whose numbers no candidate holds is never compared by words at all). `numbersKeys` absent:
   *   every numbers key may be asked for.
   */
  constructor(
    private readonly current: (id: string) => Fact | undefined,
    private readonly lookedUp: {
      readonly words: ReadonlySet<string>;
      readonly keys: ReadonlySet<string>;
      readonly numbersKeys?: ReadonlySet<string>;
      /** The candidates' rewording terms; absent: facts are not listed by term. */
      readonly terms?: ReadonlySet<string>;
    },
  ) {}

  /** Lists a fact (a new one, or the new version of one) under its keys. */
  add(fact: Fact): void {
    if (fact.status !== 'active') {
      if (fact.supersededBy !== undefined) post(this.bySuperseder, fact.supersededBy, fact);
      return;
    }
    const features = featuresOf(fact);
    const { words: wanted, keys } = this.lookedUp;
    if (keys.has(features.key)) post(this.byKey, features.key, fact);
    if (this.lookedUp.numbersKeys !== undefined && !this.lookedUp.numbersKeys.has(features.numbersKey))
      return;
    const partition = partitionKey(fact.type, features.numbersKey);
    const words = perPartition(this.byWord, partition);
    for (const word of features.words) if (wanted.has(word)) post(words, word, fact);
    const titleWords = perPartition(this.byTitleWord, partition);
    for (const word of features.titleWords) if (wanted.has(word)) post(titleWords, word, fact);
    const terms = this.lookedUp.terms;
    if (terms === undefined) return;
    const byTerm = perPartition(this.byTerm, features.numbersKey);
    for (const term of rewordingTerms(fact)) if (terms.has(term)) post(byTerm, term, fact);
  }

  /** Active facts of any type whose normalised body is `key`. */
  exact(key: string): Fact[] {
    return (this.byKey.get(key) ?? []).filter((fact) => this.isActive(fact));
  }

  /**
   * Active facts of `type` with the numbers and links of `numbersKey` that may hold at least `fraction` (0..1] of the distinct `words`, by content words
   * (`on: 'words'`) or title words (`on: 'title'`). Prefix filtering: a fact holding that share misses at most
   * `n − ⌈fraction·n⌉` of them, so it holds one of any `n − ⌈fraction·n⌉ + 1`; only the posting lists of that
   * many of the rarest words are read, never those of the words most facts share. A superset: the caller
   * scores each fact returned.
   */
  mayShare(
    type: FactType,
    numbersKey: string,
    on: 'words' | 'title',
    words: readonly string[],
    fraction: number,
  ): Set<Fact> {
    const postings = (on === 'words' ? this.byWord : this.byTitleWord).get(partitionKey(type, numbersKey));
    const found = new Set<Fact>();
    if (postings === undefined) return found;
    const distinct = [...new Set(words)];
    const rarest = distinct
      .map((word) => postings.get(word) ?? [])
      .sort((a, b) => a.length - b.length)
      .slice(0, distinct.length - Math.ceil(fraction * distinct.length) + 1);
    for (const facts of rarest) for (const fact of facts) if (this.isActive(fact)) found.add(fact);
    return found;
  }

  /**
   * Active facts of any type with the numbers and links of `numbersKey` that share at least
   * {@link MIN_SHARED_TERMS} of `terms` (what a rewording shares), by the same prefix filtering as
   * {@link mayShare}. A superset: the caller judges each fact returned.
   */
  mayReword(numbersKey: string, terms: ReadonlySet<string>): Set<Fact> {
    const postings = this.byTerm.get(numbersKey);
    const found = new Set<Fact>();
    if (postings === undefined) return found;
    const rarest = [...terms]
      .map((term) => postings.get(term) ?? [])
      .sort((a, b) => a.length - b.length)
      .slice(0, terms.size - MIN_SHARED_TERMS + 1);
    for (const facts of rarest) for (const fact of facts) if (this.isActive(fact)) found.add(fact);
    return found;
  }

  /** Superseded facts whose `supersededBy` is `id`. */
  supersededBy(id: string): Fact[] {
    return (this.bySuperseder.get(id) ?? []).filter(
      (fact) => this.current(fact.id) === fact && fact.supersededBy === id,
    );
  }

  private isActive(fact: Fact): boolean {
    return this.current(fact.id) === fact && fact.status === 'active';
  }
}
