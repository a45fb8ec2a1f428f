/**
 * Facts a person rejected from a proposal, recognised when a later run proposes them again from the same
 * sessions: by the same title or text (`normalizedTextHash`), or said in other words. A run that reads the
 * same sessions again asks the model again, and the model rarely words a fact twice the same way. The
 * rejected list keeps no fact's text: a reworded fact is told by a fingerprint, short hashes of the content
 * words and word pairs of its title and body, compared as `textSimilarity` compares texts.
 */
import { normalizedTextHash, sha256 } from '../../memory/index.js';
import type { RejectedList } from '../../space/index.js';
import { jaccard, wordsAndPairs } from '../facts/similarity.js';
import { NEAR_DUPLICATE_THRESHOLD } from '../facts/tunables.js';

/**
 * Hex digits kept of each word's hash: 48 bits, no collision among the words of a few thousand facts. A format
 * constant, not a tunable: the rejected list keeps fingerprints on disk, and another length matches none of them.
 */
const FINGERPRINT_HASH_CHARS = 12;

function shortHash(text: string): string {
  return sha256(text).slice(0, FINGERPRINT_HASH_CHARS);
}

/**
 * The fingerprint of a fact kept in the rejected list: `w` and a short hash for each content word of its
 * title and body, `p` and one for each adjacent pair (as `wordsAndPairs` finds them), sorted.
 */
export function factFingerprint(fact: { readonly title: string; readonly body: string }): string[] {
  const { words, pairs } = wordsAndPairs([fact.title, fact.body]);
  return [
    ...[...words].map((word) => `w${shortHash(word)}`),
    ...[...pairs].map((pair) => `p${shortHash(pair)}`),
  ].sort();
}

/** A fingerprint's word hashes and pair hashes, as sets. */
interface FingerprintSets {
  readonly words: ReadonlySet<string>;
  readonly pairs: ReadonlySet<string>;
}

function fingerprintSets(fingerprint: readonly string[]): FingerprintSets {
  return {
    words: new Set(fingerprint.filter((entry) => entry.startsWith('w'))),
    pairs: new Set(fingerprint.filter((entry) => entry.startsWith('p'))),
  };
}

function setsSimilarity(a: FingerprintSets, b: FingerprintSets): number {
  return (jaccard(a.words, b.words) + jaccard(a.pairs, b.pairs)) / 2;
}

/** `textSimilarity` of two fingerprints: the mean of the Jaccard index of their words and of their pairs. */
export function fingerprintSimilarity(a: readonly string[], b: readonly string[]): number {
  return setsSimilarity(fingerprintSets(a), fingerprintSets(b));
}

/**
 * True for a candidate a person rejected: from one of the sessions it was rejected from (a fact learned again
 * from a new session is proposed again: it is new evidence), with the same title or text, or a text at least
 * `NEAR_DUPLICATE_THRESHOLD` alike (the same fact reworded; entries written before fingerprints were kept
 * match by title or text only).
 */
export function createIsRejected(
  list: RejectedList,
): (candidate: {
  readonly title: string;
  readonly body: string;
  readonly sources: readonly string[];
}) => boolean {
  const byHash = new Map<string, Set<string>>();
  // Each rejected fingerprint split into sets once, under every session it was rejected from.
  const bySession = new Map<string, FingerprintSets[]>();
  for (const entry of list.facts) {
    for (const hash of [entry.textHash, normalizedTextHash(entry.title)]) {
      const sessions = byHash.get(hash) ?? new Set<string>();
      for (const session of entry.sessions) sessions.add(session);
      byHash.set(hash, sessions);
    }
    if (entry.fingerprint === undefined) continue;
    const sets = fingerprintSets(entry.fingerprint);
    for (const session of entry.sessions) {
      const fingerprints = bySession.get(session) ?? [];
      fingerprints.push(sets);
      bySession.set(session, fingerprints);
    }
  }
  return (candidate) => {
    const sameText = [normalizedTextHash(candidate.body), normalizedTextHash(candidate.title)].some(
      (hash) => {
        const sessions = byHash.get(hash);
        return sessions !== undefined && candidate.sources.some((source) => sessions.has(source));
      },
    );
    if (sameText) return true;
    const rejected = candidate.sources.flatMap((source) => bySession.get(source) ?? []);
    if (rejected.length === 0) return false;
    const sets = fingerprintSets(factFingerprint(candidate));
    return rejected.some((other) => setsSimilarity(sets, other) >= NEAR_DUPLICATE_THRESHOLD);
  };
}
