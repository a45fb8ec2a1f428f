/**
 * Forgotten facts (`.dreamd/forgotten.json`): what a person asked dreamd to forget, so the same fact is not
 * learned again from old sessions. Only the id, the title and a hash of the normalized text are kept.
 */
import path from 'node:path';
import { z } from 'zod';
import { MemoryFormatError } from '../errors.js';
import type { Fact } from '../memory/types.js';
import { normalizedTextHash } from '../memory/hash.js';
import { FORGOTTEN_FILE, readTextIfExists } from './paths.js';

const ForgottenFact = z.object({
  id: z.string(),
  title: z.string(),
  /** `normalizedTextHash` of the fact's body. */
  textHash: z.string(),
  forgottenOn: z.string(),
});
export type ForgottenFact = z.infer<typeof ForgottenFact>;

export const ForgottenListSchema = z.object({ version: z.literal(1), facts: z.array(ForgottenFact) });
export type ForgottenList = z.infer<typeof ForgottenListSchema>;

export async function readForgotten(memoryDir: string): Promise<ForgottenList> {
  const text = await readTextIfExists(path.join(memoryDir, FORGOTTEN_FILE));
  if (text === null) return { version: 1, facts: [] };
  try {
    return ForgottenListSchema.parse(JSON.parse(text));
  } catch (error) {
    throw new MemoryFormatError(
      `${FORGOTTEN_FILE}: unreadable (${error instanceof Error ? error.message.split('\n')[0] : String(error)}); fix the JSON or restore it`,
      FORGOTTEN_FILE,
      { cause: error },
    );
  }
}

/** The list with this fact added (once). */
export function withForgotten(list: ForgottenList, fact: Fact, today: string): ForgottenList {
  if (list.facts.some((entry) => entry.id === fact.id)) return list;
  return {
    version: 1,
    facts: [
      ...list.facts,
      { id: fact.id, title: fact.title, textHash: normalizedTextHash(fact.body), forgottenOn: today },
    ],
  };
}

export function serializeForgotten(list: ForgottenList): string {
  return `${JSON.stringify(list, null, 2)}\n`;
}

/** A candidate fact, as the extraction step produces it. */
export interface ForgetCandidate {
  readonly id?: string | undefined;
  readonly title: string;
  readonly body: string;
}

/**
 * True when the candidate is a fact a person asked to forget: same id, same normalized text, or same
 * normalized title (a title names the fact; a re-extraction often rephrases the text around it).
 */
export function isForgotten(list: ForgottenList, candidate: ForgetCandidate): boolean {
  const textHash = normalizedTextHash(candidate.body);
  const titleHash = normalizedTextHash(candidate.title);
  return list.facts.some(
    (entry) =>
      entry.id === candidate.id ||
      entry.textHash === textHash ||
      normalizedTextHash(entry.title) === titleHash,
  );
}

/** A predicate bound to one list, for filtering many candidates. */
export function createIsForgotten(list: ForgottenList): (candidate: ForgetCandidate) => boolean {
  const ids = new Set(list.facts.map((entry) => entry.id));
  const hashes = new Set(list.facts.flatMap((entry) => [entry.textHash, normalizedTextHash(entry.title)]));
  return (candidate) =>
    (candidate.id !== undefined && ids.has(candidate.id)) ||
    hashes.has(normalizedTextHash(candidate.body)) ||
    hashes.has(normalizedTextHash(candidate.title));
}
