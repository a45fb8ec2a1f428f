/**
 * Reading a model's extraction answer as data from outside, within `limits.*`: each fact on its own, so one
 * bad fact costs that fact and not the answer. Of an answer, only the first `maxFactsPerAnswer` items are
 * read at all (200,000 facts cost a count, not 200,000 parses); each is parsed with the strict fact schema,
 * then held to `maxFactChars`, then, once tied to its sessions, to `maxFactsPerSession` over the run. A fact
 * that fails is dropped and counted by reason; the counts go to the run record (`factsDropped`).
 *
 * An answer dreamd does not read at all (longer than `maxAnswerChars`, or refused on every attempt) is
 * "dropped" ({@link droppedAnswer}): the sessions of its call wait for the next run, with the reason.
 */
import { ModelError, ModelErrorKind } from '../errors.js';
import { AnswerTooLargeError } from '../model/index.js';
import type { FactDropReason, WaitReason } from '../core/run.js';
import { factChars, parseExtractedFact, type ExtractedFact } from './extraction.js';

/** The limits an answer is read within (`limits.*` of the config). */
export interface AnswerLimits {
  /** Longest fact kept, characters of title, body, why and how to apply (`limits.maxFactChars`). */
  readonly maxFactChars: number;
  /** Facts read of one answer; the rest are dropped unread (`limits.maxFactsPerAnswer`). */
  readonly maxFactsPerAnswer: number;
  /** Most facts kept per session over the run (`limits.maxFactsPerSession`). */
  readonly maxFactsPerSession: number;
  /** Longest answer text read, characters (`limits.maxAnswerChars`). */
  readonly maxAnswerChars: number;
}

export interface AnswerReader {
  /**
   * The facts of one answer worth keeping, each tied to its sessions by `anchor` (which decides the
   * sessions the per-session limit counts).
   */
  read(items: readonly unknown[], anchor: (fact: ExtractedFact) => ExtractedFact): ExtractedFact[];
  /** Facts dropped so far, by reason. */
  readonly factsDropped: Readonly<Partial<Record<FactDropReason, number>>>;
  /** A note for the run record when facts were dropped; empty when none were. */
  notes(): string[];
}

/** A reader for the answers of one run (the per-session counts span its calls). */
export function createAnswerReader(limits: AnswerLimits): AnswerReader {
  const factsDropped: Partial<Record<FactDropReason, number>> = {};
  const factsPerSession = new Map<string, number>();
  const drop = (reason: FactDropReason, count = 1): void => {
    factsDropped[reason] = (factsDropped[reason] ?? 0) + count;
  };
  const overSessionLimit = (fact: ExtractedFact): boolean =>
    fact.sources.some((source) => (factsPerSession.get(source) ?? 0) >= limits.maxFactsPerSession);

  return {
    factsDropped,
    read(items, anchor) {
      if (items.length > limits.maxFactsPerAnswer)
        drop('answer-fact-limit', items.length - limits.maxFactsPerAnswer);
      const kept: ExtractedFact[] = [];
      for (const item of items.slice(0, limits.maxFactsPerAnswer)) {
        const fact = parseExtractedFact(item);
        if (fact === undefined) {
          drop('schema');
          continue;
        }
        if (factChars(fact) > limits.maxFactChars) {
          drop('fact-too-large');
          continue;
        }
        const candidate = anchor(fact);
        if (overSessionLimit(candidate)) {
          drop('session-fact-limit');
          continue;
        }
        for (const source of candidate.sources)
          factsPerSession.set(source, (factsPerSession.get(source) ?? 0) + 1);
        kept.push(candidate);
      }
      return kept;
    },
    notes() {
      const entries = Object.entries(factsDropped);
      const total = entries.reduce((sum, [, count]) => sum + count, 0);
      if (total === 0) return [];
      const reasons = entries.map(([reason, count]) => `${count} ${reason}`).join(', ');
      return [`${total} fact(s) of the answers were dropped (${reasons}); the rest were kept`];
    },
  };
}

/** An answer the run drops, with why its sessions wait; undefined for an error that fails the run. */
export function droppedAnswer(error: unknown): { reason: WaitReason; detail: string } | undefined {
  if (error instanceof AnswerTooLargeError) {
    return {
      reason: 'answer-dropped',
      detail: `the answer was ${error.answerChars.toLocaleString('en')} characters, over limits.maxAnswerChars (${error.maxAnswerChars.toLocaleString('en')}); it was dropped unread and the session waits for the next run`,
    };
  }
  if (error instanceof ModelError && error.details.kind === ModelErrorKind.refusal) {
    return { reason: 'refusal', detail: `${error.message}; the session waits for the next run` };
  }
  return undefined;
}
