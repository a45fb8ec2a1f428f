/**
 * Reading a model's extraction answer as data from outside, within `limits.*`: each fact on its own, so one
 * bad fact costs that fact and not the answer. Nothing the model said is dropped quietly:
 * - an answer with more than `maxFactsPerAnswer` items is not read at all (200,000 facts cost a count, not
 *   200,000 parses): its batch is asked again in halves (`extract.ts`), or, for a single message, the session
 *   waits there with the fix named;
 * - each item is parsed with the strict fact schema, then held to `maxFactChars`; one that fails is dropped and
 *   counted by reason (`factsDropped`, an error of the run), the rest kept. An answer that held facts and no
 *   valid one is refused whole: its sessions wait (`answer-invalid`), they are never marked consolidated;
 * - once tied to its sessions, a fact whose session already gave `maxFactsPerSession` facts this run is not
 *   kept, and that session waits from this batch's first message: the next run reads the rest.
 *
 * An answer dreamd does not read at all (longer than `maxAnswerChars`, or refused on every attempt) is
 * "dropped" ({@link droppedAnswer}): the sessions of its call wait for the next run, with the reason.
 */
import { DreamdError, ModelError, ModelErrorKind } from '../../errors.js';
import { AnswerTooLargeError } from '../../model/index.js';
import type { FactDropReason, WaitReason } from '../../core/run.js';
import { factChars, parseExtractedFact, type ExtractedFact } from './extraction.js';

/** The limits an answer is read within (`limits.*` of the config). */
export interface AnswerLimits {
  /** Longest fact kept, characters of title, body, why and how to apply (`limits.maxFactChars`). */
  readonly maxFactChars: number;
  /** Facts read of one answer; an answer with more is asked again in smaller batches (`limits.maxFactsPerAnswer`). */
  readonly maxFactsPerAnswer: number;
  /** Most facts kept per session over the run; the rest of the session waits (`limits.maxFactsPerSession`). */
  readonly maxFactsPerSession: number;
  /** Longest answer text read, characters (`limits.maxAnswerChars`). */
  readonly maxAnswerChars: number;
}

/**
 * An answer with more facts than `limits.maxFactsPerAnswer`, or more for one session than
 * `limits.maxFactsPerSession` (that session had none before it this run): none of it is read; its batch is
 * asked again smaller.
 */
export class AnswerFactLimitError extends DreamdError {
  override readonly name = 'AnswerFactLimitError';
  constructor(
    readonly facts: number,
    readonly limit: number,
    readonly setting: 'limits.maxFactsPerAnswer' | 'limits.maxFactsPerSession',
  ) {
    super(
      `the answer held ${facts.toLocaleString('en')} facts${setting === 'limits.maxFactsPerSession' ? ' for one session' : ''}, over ${setting} (${limit.toLocaleString('en')})`,
    );
  }
}

/** An answer that held facts and not one valid: refused whole, its sessions wait. */
export class AnswerInvalidError extends DreamdError {
  override readonly name = 'AnswerInvalidError';
  constructor(readonly reasons: Readonly<Partial<Record<FactDropReason, number>>>) {
    const described = Object.entries(reasons)
      .map(([reason, count]) => `${count} ${reason}`)
      .join(', ');
    super(`the answer held facts and none valid (${described})`);
  }
}

/** What one answer gave: the facts kept, and the sessions whose facts passed `maxFactsPerSession`. */
export interface AnswerRead {
  readonly facts: ExtractedFact[];
  /** Sessions that reached `maxFactsPerSession` in this answer: they wait from this batch on. */
  readonly overSessionLimit: ReadonlySet<string>;
  /** Facts of this answer dropped, by reason (also summed in `factsDropped`). */
  readonly dropped: Readonly<Partial<Record<FactDropReason, number>>>;
}

export interface AnswerReader {
  /**
   * The facts of one answer worth keeping, each tied to its sessions by `anchor` (which decides the
   * sessions the per-session limit counts). Throws {@link AnswerFactLimitError} or {@link AnswerInvalidError}
   * for an answer that is not read; nothing is counted for it then.
   */
  read(items: readonly unknown[], anchor: (fact: ExtractedFact) => ExtractedFact): AnswerRead;
  /** Facts dropped so far, by reason. */
  readonly factsDropped: Readonly<Partial<Record<FactDropReason, number>>>;
  /** A line for the run record when facts were dropped; empty when none were. */
  notes(): string[];
}

/** A reader for the answers of one run (the per-session counts span its calls). */
export function createAnswerReader(limits: AnswerLimits): AnswerReader {
  const factsDropped: Partial<Record<FactDropReason, number>> = {};
  const factsPerSession = new Map<string, number>();

  return {
    factsDropped,
    read(items, anchor) {
      if (items.length > limits.maxFactsPerAnswer)
        throw new AnswerFactLimitError(items.length, limits.maxFactsPerAnswer, 'limits.maxFactsPerAnswer');
      const dropped: Partial<Record<FactDropReason, number>> = {};
      const valid: ExtractedFact[] = [];
      for (const item of items) {
        const fact = parseExtractedFact(item);
        const reason: FactDropReason | undefined =
          fact === undefined
            ? 'schema'
            : factChars(fact) > limits.maxFactChars
              ? 'fact-too-large'
              : undefined;
        if (reason !== undefined || fact === undefined) {
          dropped[reason ?? 'schema'] = (dropped[reason ?? 'schema'] ?? 0) + 1;
          continue;
        }
        valid.push(anchor(fact));
      }
      if (items.length > 0 && valid.length === 0) throw new AnswerInvalidError(dropped);
      // Counted only for an answer that is read: a refused one is asked again and must not count twice.
      const counts = new Map(factsPerSession);
      const overSessionLimit = new Set<string>();
      const kept: ExtractedFact[] = [];
      const inAnswer = new Map<string, number>();
      for (const candidate of valid) {
        for (const source of candidate.sources) inAnswer.set(source, (inAnswer.get(source) ?? 0) + 1);
        const full = candidate.sources.filter(
          (source) => (counts.get(source) ?? 0) >= limits.maxFactsPerSession,
        );
        if (full.length > 0) {
          for (const source of full) overSessionLimit.add(source);
          continue;
        }
        for (const source of candidate.sources) counts.set(source, (counts.get(source) ?? 0) + 1);
        kept.push(candidate);
      }
      // A session over the limit by this answer alone would wait at the same facts every run: asked again smaller.
      for (const source of overSessionLimit) {
        const before = factsPerSession.get(source) ?? 0;
        if (before === 0)
          throw new AnswerFactLimitError(
            inAnswer.get(source) ?? 0,
            limits.maxFactsPerSession,
            'limits.maxFactsPerSession',
          );
      }
      for (const [source, count] of counts) factsPerSession.set(source, count);
      for (const [reason, count] of Object.entries(dropped) as [FactDropReason, number][])
        factsDropped[reason] = (factsDropped[reason] ?? 0) + count;
      return { facts: kept, overSessionLimit, dropped };
    },
    notes() {
      const entries = Object.entries(factsDropped);
      const total = entries.reduce((sum, [, count]) => sum + count, 0);
      if (total === 0) return [];
      const reasons = entries.map(([reason, count]) => `${count} ${reason}`).join(', ');
      return [
        `${total} fact(s) of the answers were dropped as invalid (${reasons}); the rest of each answer was kept`,
      ];
    },
  };
}

/** An answer the run drops, with why its sessions wait; undefined for an error that fails the run. */
export function droppedAnswer(error: unknown): { reason: WaitReason; detail: string } | undefined {
  if (error instanceof AnswerInvalidError) {
    return {
      reason: 'answer-invalid',
      detail: `${error.message}; no fact of it was kept and the session waits for the next run`,
    };
  }
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
