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

export interface Verdict {
  readonly target: string;
  readonly met: boolean;
  /** The figures judged, in words. */
  readonly detail: string;
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

/** The four targets, and the rules target when the dataset plants rules, judged on one way's report. */
export function verdicts(report: EvalReport): Verdict[] {
  const t = report.totals;
  if (t.referenceFacts === 0)
    throw new Error(`the ${report.way} report holds no reference fact: nothing to judge as dropped or lost`);
  if (t.updates === 0)
    throw new Error(
      `the ${report.way} report holds no planted update chain: the chains target cannot be judged`,
    );
  const recall = recallAt10(report);
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
    {
      target: `recall hit@10 (fused) ≥ BM25 over raw turns + ${(100 * RECALL_LEAD_TARGET).toFixed(0)} points`,
      // Rounded to a tenth of a point, as printed: a lead of exactly 2.0 points meets it.
      met: Math.round(1000 * (recall.dreamd - recall.rawTurns)) >= Math.round(1000 * RECALL_LEAD_TARGET),
      detail: `${percent(recall.dreamd)} against ${percent(recall.rawTurns)}; tokens per query ${t.recallTokensPerQuery.fused.toFixed(0)}`,
    },
    ...(rules === undefined ? [] : [rules]),
  ];
}

/** One line per target, both ways side by side: `- 0 lost: one run per session MET (0 lost); backlog MISSED (…)`. */
export function verdictLines(both: BothWays): string[] {
  const perSession = verdicts(both.perSession);
  const backlog = verdicts(both.backlog);
  const word = (verdict: Verdict) => `${verdict.met ? 'MET' : 'MISSED'} (${verdict.detail})`;
  return perSession.map(
    (verdict, index) =>
      `- ${verdict.target}: one run per session ${word(verdict)}; backlog ${word(backlog[index]!)}`,
  );
}
