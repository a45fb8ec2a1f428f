/**
 * The targets the eval judges dreamd by, each way (one run per session, the backlog): nothing dropped, nothing
 * lost, chains resolved to the newest, recall above plain BM25 over the raw turns. A missed target is printed
 * MISSED, not an exit code: the eval measures, CI does not gate on a figure. A figure whose input is missing
 * (no planted chain, no question) throws, so a target is never met for want of anything to judge.
 */
import type { BothWays, EvalReport } from './harness.js';

/** Share of planted update chains whose newest fact must be the one active (older ones superseded). */
export const CHAINS_RESOLVED_TARGET = 0.95;
/** Points of hit@10 dreamd's recall must lead BM25 over the raw turns by: 2 points, one question in 50. */
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

/** hit@10 of dreamd and of BM25 over the raw turns, over every question; throws when there is none. */
export function recallAt10(report: EvalReport): { dreamd: number; rawTurns: number } {
  const all = report.totals.recall.all;
  const dreamd = all?.dreamd['@10'];
  const rawTurns = all?.bm25RawTurns['@10'];
  if (all === undefined || all.questions === 0 || dreamd === undefined || rawTurns === undefined)
    throw new Error(
      `the ${report.way} report holds no recall over questions: the recall target cannot be judged`,
    );
  return { dreamd, rawTurns };
}

/** The four targets, judged on one way's report. */
export function verdicts(report: EvalReport): Verdict[] {
  const t = report.totals;
  if (t.referenceFacts === 0)
    throw new Error(`the ${report.way} report holds no reference fact: nothing to judge as dropped or lost`);
  if (t.updates === 0)
    throw new Error(
      `the ${report.way} report holds no planted update chain: the chains target cannot be judged`,
    );
  const recall = recallAt10(report);
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
      target: `recall hit@10 ≥ BM25 over raw turns + ${(100 * RECALL_LEAD_TARGET).toFixed(0)} points`,
      // Rounded to a tenth of a point, as printed: a lead of exactly 2.0 points meets it.
      met: Math.round(1000 * (recall.dreamd - recall.rawTurns)) >= Math.round(1000 * RECALL_LEAD_TARGET),
      detail: `${percent(recall.dreamd)} against ${percent(recall.rawTurns)}`,
    },
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
