/**
 * The targets the eval judges dreamd by, each way (one run per session, the backlog): nothing dropped, nothing
 * lost, chains resolved to the newest, recall above plain BM25 over the raw turns, and (when the dataset plants
 * rules) every rule taught two times or more in `MEMORY.md`. A missed target is printed
 * MISSED, not an exit code: the eval measures, CI does not gate on a figure. A figure whose input is missing
 * (no planted chain, no question) throws, so a target is never met for want of anything to judge.
 */
import type { BothWays, EvalReport } from './harness.js';

/** Share of planted update chains whose newest fact must be the one active (older ones superseded). */
export const CHAINS_RESOLVED_TARGET = 0.95;
/** Share of rules taught two times or more that the always-loaded `MEMORY.md` must list after the next run. */
export const RULES_IN_INDEX_TARGET = 1;

/** Points of hit@10 dreamd's fused recall must lead BM25 over the raw turns by: 2 points, one question in 50. */
export const RECALL_LEAD_TARGET = 0.02;

/** Share of instructions changed at least once whose newest version must be the only one active (issue 57). */
export const NEWEST_ONLY_TARGET = 0.95;
/** Share of instructions given once and never changed that must still be active. */
export const GIVEN_ONCE_TARGET = 0.99;
/** Model calls of a backlog at most this many times its extraction calls: update checks and curation add ≤ 30 %. */
export const CALLS_PER_EXTRACTION_TARGET = 1.3;
/** Share of a backlog's extraction answers thrown away (asked again in halves) must stay under this. */
export const HALVED_TARGET = 0.05;

export interface Verdict {
  readonly target: string;
  readonly met: boolean;
  /** The figures judged, in words. */
  readonly detail: string;
  /** Judged on the backlog only; one run per session prints the figure beside it. */
  readonly backlogOnly?: boolean;
}

function percent(value: number): string {
  return `${(100 * value).toFixed(1)} %`;
}

/**
 * hit@10 of dreamd's fused recall (facts and transcript passages, what the recall tool returns), of its facts
 * alone, and of BM25 over the raw turns, over every question; throws when there is none.
 */
export function recallAt10(report: EvalReport): { dreamd: number; factsOnly: number; rawTurns: number } {
  const all = report.totals.recall.all;
  const dreamd = all?.dreamdFused['@10'];
  const factsOnly = all?.dreamd['@10'];
  const rawTurns = all?.bm25RawTurns['@10'];
  if (
    all === undefined ||
    all.questions === 0 ||
    dreamd === undefined ||
    factsOnly === undefined ||
    rawTurns === undefined
  )
    throw new Error(
      `the ${report.way} report holds no recall over questions: the recall target cannot be judged`,
    );
  return { dreamd, factsOnly, rawTurns };
}

/**
 * The rules target, judged on one way's report: every rule taught two times or more listed in `MEMORY.md`.
 * Judged only when the dataset plants such rules (`dreamd_rules`): a dataset without them has no rules line.
 */
export function rulesVerdict(report: EvalReport): Verdict | undefined {
  const t = report.totals;
  if (t.rulesTaughtTwice === 0) return undefined;
  const share = t.rulesTaughtTwiceInIndex / t.rulesTaughtTwice;
  return {
    target: `${(100 * RULES_IN_INDEX_TARGET).toFixed(0)} % of rules taught ≥ 2 times in MEMORY.md`,
    met: share >= RULES_IN_INDEX_TARGET,
    detail: `${t.rulesTaughtTwiceInIndex} of ${t.rulesTaughtTwice}, ${percent(share)}; taught again after saved: ${t.rulesTaughtAgain} of ${t.rules} rules`,
  };
}

/**
 * The instruction targets (`dreamd_instructions`: MemoryCode), judged when the dataset plants instructions:
 * ≥ 95 % of changed instructions with only their newest version active, none lost, ≥ 99 % of those given once
 * still active, no two instructions joined.
 */
export function instructionVerdicts(report: EvalReport): Verdict[] {
  const t = report.totals;
  if (t.instructions === 0) return [];
  if (t.instructionsChanged === 0 || t.instructionsGivenOnce === 0)
    throw new Error(
      `the ${report.way} report holds no instruction changed or none given once: the instruction targets cannot be judged`,
    );
  const newest = t.instructionsNewestOnly / t.instructionsChanged;
  const once = t.instructionsGivenOnceActive / t.instructionsGivenOnce;
  return [
    {
      target: `≥ ${(100 * NEWEST_ONLY_TARGET).toFixed(0)} % of changed instructions with only the newest version active`,
      met: newest >= NEWEST_ONLY_TARGET,
      detail: `${t.instructionsNewestOnly} of ${t.instructionsChanged}, ${percent(newest)}`,
    },
    {
      target: '0 instructions lost',
      met: t.instructionsLost === 0,
      detail: `${t.instructionsLost} of ${t.instructions} with a version nowhere in memory or archive`,
    },
    {
      target: `≥ ${(100 * GIVEN_ONCE_TARGET).toFixed(0)} % of instructions given once still active`,
      met: once >= GIVEN_ONCE_TARGET,
      detail: `${t.instructionsGivenOnceActive} of ${t.instructionsGivenOnce}, ${percent(once)}`,
    },
    {
      target: '0 merges across instructions',
      met: t.instructionMerges === 0,
      detail: `${t.instructionMerges} pairs of instructions joined`,
    },
  ];
}

/**
 * The cost targets, judged on the backlog of every dataset: model calls at most 1.3 × the extraction calls
 * (update checks and curation), and under 5 % of extraction answers thrown away and asked again in halves.
 */
export function callVerdicts(report: EvalReport): Verdict[] {
  const t = report.totals;
  const { extraction, updateCheck, curation } = t.callsByKind;
  if (extraction === 0)
    throw new Error(`the ${report.way} report holds no extraction call: the call targets cannot be judged`);
  const all = extraction + updateCheck + curation;
  const halved = t.answersHalved.outputLimit + t.answersHalved.factLimit;
  return [
    {
      target: `model calls ≤ ${CALLS_PER_EXTRACTION_TARGET} × extraction calls (backlog)`,
      met: all <= CALLS_PER_EXTRACTION_TARGET * extraction,
      detail: `${all} calls, ${extraction} extraction, ${updateCheck} update check, ${curation} curation: ${(all / extraction).toFixed(2)} ×`,
      backlogOnly: true,
    },
    {
      target: `< ${(100 * HALVED_TARGET).toFixed(0)} % of extraction answers thrown away (backlog)`,
      met: halved / extraction < HALVED_TARGET,
      detail: `${halved} of ${extraction}, ${percent(halved / extraction)}: ${t.answersHalved.outputLimit} at the output limit, ${t.answersHalved.factLimit} over the fact limit`,
      backlogOnly: true,
    },
  ];
}

/**
 * The targets judged on one way's report: nothing dropped or lost, chains resolved, recall (unless the dataset
 * asks no question and plants instructions: MemoryCode asks for code, not answers), rules when planted,
 * instructions when planted, and the call targets.
 */
export function verdicts(report: EvalReport): Verdict[] {
  const t = report.totals;
  if (t.referenceFacts === 0)
    throw new Error(`the ${report.way} report holds no reference fact: nothing to judge as dropped or lost`);
  if (t.updates === 0)
    throw new Error(
      `the ${report.way} report holds no planted update chain: the chains target cannot be judged`,
    );
  const judgeRecall = !(t.questions === 0 && t.instructions > 0);
  const recall = judgeRecall ? recallAt10(report) : undefined;
  const rules = rulesVerdict(report);
  const resolved = t.updatesResolved / t.updates;
  return [
    {
      target: '0 dropped',
      met: t.factsDropped === 0 && t.unconsolidated === 0,
      detail: `${t.factsDropped} facts dropped, ${t.unconsolidated} sessions left waiting`,
    },
    { target: '0 lost', met: t.lost === 0, detail: `${t.lost} lost` },
    {
      target: `≥ ${(100 * CHAINS_RESOLVED_TARGET).toFixed(0)} % of chains resolved to the newest`,
      met: resolved >= CHAINS_RESOLVED_TARGET,
      detail: `${t.updatesResolved} of ${t.updates}, ${percent(resolved)}`,
    },
    ...(recall === undefined
      ? []
      : [
          {
            target: `recall hit@10 (fused) ≥ BM25 over raw turns + ${(100 * RECALL_LEAD_TARGET).toFixed(0)} points`,
            // Rounded to a tenth of a point, as printed: a lead of exactly 2.0 points meets it.
            met:
              Math.round(1000 * (recall.dreamd - recall.rawTurns)) >= Math.round(1000 * RECALL_LEAD_TARGET),
            detail: `${percent(recall.dreamd)} against ${percent(recall.rawTurns)}; tokens per query ${t.recallTokensPerQuery.fused.toFixed(0)}`,
          },
        ]),
    ...(rules === undefined ? [] : [rules]),
    ...instructionVerdicts(report),
    ...callVerdicts(report),
  ];
}

/** One line per target, both ways side by side: `- 0 lost: one run per session MET (0 lost); backlog MISSED (…)`. */
export function verdictLines(both: BothWays): string[] {
  const perSession = verdicts(both.perSession);
  const backlog = verdicts(both.backlog);
  const word = (verdict: Verdict) => `${verdict.met ? 'MET' : 'MISSED'} (${verdict.detail})`;
  // A target judged on the backlog only: one run per session prints its figure, no verdict.
  const perSessionWord = (verdict: Verdict) =>
    verdict.backlogOnly === true ? `figure only (${verdict.detail})` : word(verdict);
  return perSession.map(
    (verdict, index) =>
      `- ${verdict.target}: one run per session ${perSessionWord(verdict)}; backlog ${word(backlog[index]!)}`,
  );
}
