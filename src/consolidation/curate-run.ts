/**
 * The curation phase inside a run: draft the write (the candidates reconciled with memory, no file rendered),
 * curate the facts it would leave (one call per type over its budget, see `curate.ts`), and plan the write once
 * with the accepted results, so the merged facts and the archive entries of what they replace commit in the
 * run's one staged transaction.
 *
 * The run's update check (`update-check.ts`) rides on the curation calls: the first of them carries its first
 * chunk, and so on, so a run that curates pays no call of its own for the check; chunks left over (or a check
 * in a run that curates nothing) go alone. The plan takes both answers.
 */
import type { CurationConfig } from '../config/schema.js';
import type { CurationSummary } from '../core/run.js';
import {
  activeSize,
  curateMemory,
  NO_CURATION,
  type CarriedTask,
  type CurationCallOptions,
  type CurationOutcome,
} from './curation/curate.js';
import type { ExtractedFact } from './extraction/extraction.js';
import { draftWrite, type WriteOptions, type WritePlan } from './write/plan-write.js';
import {
  checkUpdates,
  UPDATE_CHECK_TASK,
  UpdateCheckAnswer,
  updateCheckPrompt,
  type CarriedAnswer,
  type UpdateCheck,
  type UpdateCheckResult,
} from './extraction/update-check.js';

/** The chunks of the update check as tasks a curation call can carry. */
function checkTasks(check: UpdateCheck): CarriedTask[] {
  return check.chunks.map((chunk) => ({
    instructions: UPDATE_CHECK_TASK,
    prompt: updateCheckPrompt(check.candidates, chunk),
    field: 'updates',
    schema: UpdateCheckAnswer.shape.updates,
  }));
}

/**
 * Draft the write, curate (carrying the update check), and plan the write once, with what the check found and
 * curation accepted. `writeOptionsFor` gives the write's options for the run's candidates as checked so far
 * (the facts left out as already stated or rejected are left out of them). The draft reconciles the candidates
 * and renders nothing; the plan reconciles again only when the check changed what a candidate replaces, and
 * renders the files once. One id allocator serves both (`fact-ids.ts`), so a fact learned in this run has in the plan the id
 * curation named it by. A result the plan cannot apply (a person edited one of its facts meanwhile, or the
 * check found one of its facts replaced) moves from `accepted` to `refused`, with why.
 */
export async function planAndCurate(
  writeOptionsFor: (candidates: readonly ExtractedFact[]) => WriteOptions,
  options: CurationCallOptions,
  check: UpdateCheck,
): Promise<{ plan: WritePlan; curation: CurationOutcome; overBudget: string[]; checked: UpdateCheckResult }> {
  const draft = await draftWrite(writeOptionsFor(check.candidates));
  // Only types this run learned something of: a type left over budget is not asked about again for nothing.
  const fresh = new Set([
    ...draft.result.added.map((fact) => fact.id),
    ...draft.result.updated.map((change) => change.after.id),
  ]);
  const curated = options.config.enabled
    ? await curateMemory(draft.result.facts, { ...options, fresh, carry: checkTasks(check) })
    : NO_CURATION;
  const checked = await checkUpdates(check, {
    ...options,
    maxCalls: options.maxCalls - curated.calls,
    carried: curated.carried.map((entry): CarriedAnswer =>
      'failed' in entry ? entry : { updates: entry.answer as UpdateCheckAnswer['updates'] },
    ),
  });
  // The check hands back the very list it was given when it found nothing: the draft's facts stand.
  const plan = await draft.finish({
    candidates: writeOptionsFor(checked.candidates).candidates,
    curation: curated.accepted,
  });
  const unapplied = new Set(plan.unapplied.map((entry) => entry.result));
  const curation: CurationOutcome =
    unapplied.size === 0
      ? curated
      : {
          ...curated,
          accepted: curated.accepted.filter((result) => !unapplied.has(result)),
          refused: [
            ...curated.refused,
            ...plan.unapplied.map(({ result, reason }) => ({
              type: result.type,
              title: result.title,
              reason,
            })),
          ],
        };
  return {
    plan,
    curation,
    overBudget: curation.calls > 0 ? overBudget(plan, options.config) : [],
    checked,
  };
}

/**
 * Types still over budget after curation: nothing is dropped to meet a budget (facts of different subjects
 * are never merged), so the run says so and the next runs try again.
 */
export function overBudget(plan: WritePlan, config: CurationConfig): string[] {
  return Object.entries(activeSize(plan.result.facts)).flatMap(([type, size]) =>
    size.facts > config.maxFactsPerType || size.bytes > config.maxBytesPerType
      ? [
          `${type} facts are still over the curation budget after this run (${size.facts} facts, ${size.bytes} bytes; ` +
            `budget ${config.maxFactsPerType} facts, ${config.maxBytesPerType} bytes): nothing is dropped to meet it, ` +
            'facts of different subjects are never merged; raise curation.maxFactsPerType or maxBytesPerType if this is the size you want',
        ]
      : [],
  );
}

/** The run record's account of curation. */
export function curationSummary(curation: CurationOutcome, merged: number): CurationSummary {
  return {
    types: curation.types,
    calls: curation.calls,
    usage: curation.usage,
    costUsd: curation.costUsd,
    results: curation.accepted.length,
    merged,
    refused: curation.refused,
  };
}

/** One note per refused result and per failed call, for the run summary. */
export function curationNotes(curation: CurationOutcome): string[] {
  return [
    ...curation.refused.map(
      (entry) => `curation of ${entry.type} facts: result "${entry.title}" refused: ${entry.reason}`,
    ),
    ...curation.failures,
  ];
}

/** People's facts curation would have rewritten or found repeated: listed for a person, never changed. */
export function curationReview(curation: CurationOutcome): { file: string; reason: string }[] {
  return curation.review.map(({ fact, reason }) => ({
    file: fact.file ?? fact.id,
    reason: `${fact.file ?? fact.id}: fact ${fact.id} ("${fact.title}") is yours, so curation left it as it is: ${reason}. Edit or delete it if memory should say it once.`,
  }));
}
