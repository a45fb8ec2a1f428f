/**
 * `npm run eval [-- --dataset long|small|memorycode|file.json] [--size quick|full] [--seed N] [--model]
 * [--sessions-per-run N | --backlog] [--json]`: dreamd's memory quality on a dataset in the common long-term-memory
 * format (default: the generated long dataset, full size, `generate.ts`; `small` is
 * eval/dataset/dreamd-small.json; `memorycode` is MemoryCode's sample, `memorycode.ts`). Oracle mode unless `--model`, which extracts with the model configured by the
 * environment (ANTHROPIC_API_KEY, or DREAMD_MODEL_PROVIDER=openai-compatible with DREAMD_MODEL_BASE_URL and
 * DREAMD_MODEL). Both ways by default (one run per session, and the backlog a first run reads), side by side
 * with a verdict per target; `--sessions-per-run N` or `--backlog` runs one way only.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Dataset } from './format.js';
import {
  HIT_AT,
  runEval,
  runEvalBothWays,
  type BothWays,
  type EvalReport,
  type FactMiss,
} from './harness.js';
import { recallAt10, verdictLines } from './verdict.js';
import { FAR_BACK_FACTS } from './plant-figures.js';
import { SELECTOR_PICKS, SELECTOR_READ_BYTES, selectorRecall, type SelectorReport } from './selector.js';
import { DEFAULT_SEED, generateLongDataset, LONG_SIZES, type LongSize } from './generate.js';
import { memoryCodeDataset, type MemoryCodeSize } from './memorycode.js';
import type { CrossMerge, InstructionMiss } from './instruction-figures.js';

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

function percent(value: number): string {
  return `${(100 * value).toFixed(1)} %`;
}

/** How a report's way is named in what is printed. */
export function wayName(report: EvalReport): string {
  if (report.way === 'backlog') return 'backlog: every session waiting for the first run';
  return report.sessionsPerRun === 1
    ? 'one run per session'
    : `one run per ${report.sessionsPerRun} sessions`;
}

/** Rules memory counts as taught again after they were saved, of the planted rules. */
function repeatCorrection(report: EvalReport): string {
  const t = report.totals;
  return t.rules === 0
    ? 'no rules planted'
    : `${t.rulesTaughtAgain} of ${t.rules} (${percent(t.rulesTaughtAgain / t.rules)})`;
}

/** Rules taught two times or more that `MEMORY.md` lists after the last run. */
function rulesInIndex(report: EvalReport): string {
  const t = report.totals;
  return t.rulesTaughtTwice === 0
    ? 'no rules planted'
    : `${t.rulesTaughtTwiceInIndex} of ${t.rulesTaughtTwice} (${percent(t.rulesTaughtTwiceInIndex / t.rulesTaughtTwice)})`;
}

/** n of m (p %), or `none` when there is nothing to count. */
function share(count: number, of: number): string {
  return of === 0 ? 'none planted' : `${count} of ${of} (${percent(count / of)})`;
}

/** Calls by kind: extraction / update check / curation (total). */
function callsByKind(report: EvalReport): string {
  const { extraction, updateCheck, curation } = report.totals.callsByKind;
  const all = extraction + updateCheck + curation;
  return `${extraction} / ${updateCheck} / ${curation} (${all}, ${extraction === 0 ? '–' : (all / extraction).toFixed(2)} × extraction)`;
}

/** Extraction answers thrown away and asked again in halves, of the extraction calls. */
function halved(report: EvalReport): string {
  const { outputLimit, factLimit } = report.totals.answersHalved;
  const extraction = report.totals.callsByKind.extraction;
  return `${outputLimit + factLimit} of ${extraction} (${percent(extraction === 0 ? 0 : (outputLimit + factLimit) / extraction)}; output limit ${outputLimit}, fact limit ${factLimit})`;
}

/** The rows of the instruction, near-twin and reworded-update figures a dataset plants (none when it plants none). */
function plantedRows(report: EvalReport): [string, (r: EvalReport) => string][] {
  const t = report.totals;
  return [
    ...(t.instructions === 0
      ? []
      : ([
          [
            'instructions changed: only the newest version active',
            (r) => share(r.totals.instructionsNewestOnly, r.totals.instructionsChanged),
          ],
          [
            'instructions lost (a version nowhere in memory or archive)',
            (r) => `${r.totals.instructionsLost} of ${r.totals.instructions}`,
          ],
          [
            'instructions given once still active',
            (r) => share(r.totals.instructionsGivenOnceActive, r.totals.instructionsGivenOnce),
          ],
          ['merges across instructions (pairs joined)', (r) => `${r.totals.instructionMerges}`],
        ] as [string, (r: EvalReport) => string][])),
    ...(t.twinPairs === 0
      ? []
      : ([
          ['near-twin rules both active', (r) => share(r.totals.twinsBothActive, r.totals.twinPairs)],
          ['near-twin rules merged or superseded across', (r) => `${r.totals.twinsJoined}`],
        ] as [string, (r: EvalReport) => string][])),
    ...(t.rewordedUpdates === 0
      ? []
      : ([
          [
            'chains reworded (≤ 1 word shared) resolved to the newest',
            (r) => share(r.totals.rewordedUpdatesResolved, r.totals.rewordedUpdates),
          ],
        ] as [string, (r: EvalReport) => string][])),
    ['model calls by kind: extraction / update check / curation', callsByKind],
    ['extraction answers thrown away (asked again in halves)', halved],
  ];
}

function instructionMissList(name: string, misses: readonly InstructionMiss[]): string[] {
  return [
    `Instructions ${name}: ${misses.length}`,
    ...misses.map(
      (entry) =>
        `- ${entry.conversation}: ${entry.versions.map((version) => `${version.turn} "${version.text}" [${version.statuses.join('/') || 'missing'}]`).join(' -> ')}`,
    ),
  ];
}

function mergeList(name: string, misses: readonly CrossMerge[]): string[] {
  return [
    `${name}: ${misses.length}`,
    ...misses.map(
      (entry) =>
        `- ${entry.conversation} (${entry.how}): "${entry.texts[0]}" / "${entry.texts[1]}" in "${entry.fact}"`,
    ),
  ];
}

export function renderReport(report: EvalReport): string {
  const t = report.totals;
  const lines = [
    `dreamd eval (${report.mode} mode, ${wayName(report)}): ${report.conversations.length} conversations, ${t.sessions} sessions, ${t.referenceFacts} reference facts, ${t.questions} questions`,
    '',
    '| figure | value |',
    '|---|---|',
    `| runs (sessions the first consolidated) | ${t.runs} (${t.sessionsInFirstRun}) |`,
    `| facts dropped from answers (by reason) | ${droppedFacts(report)} |`,
    `| sessions left waiting after the last run | ${t.unconsolidated} |`,
    `| reference facts kept once | ${t.keptOnce} of ${t.referenceFacts} |`,
    `| kept more than once | ${t.keptMoreThanOnce} |`,
    `| of them held inside a fact curation merged (text kept whole) | ${t.merged} |`,
    `| of them only in the archive, with a successor | ${t.archivedWithSuccessor} |`,
    `| lost | ${t.lost} |`,
    `| wrongly merged | ${t.wronglyMerged} |`,
    `| wrongly superseded | ${t.wronglySuperseded} |`,
    `| planted updates resolved to the newest | ${t.updatesResolved} of ${t.updates} |`,
    `| of them far back (older fact ${FAR_BACK_FACTS}+ facts earlier) | ${t.farUpdatesResolved} of ${t.farUpdates} |`,
    `| older fact of an update in the model's view (memory list or update check) | ${olderInView(report)} |`,
    `| reworded duplicates kept as two active facts | ${t.duplicatesKept} of ${t.duplicatePairs} pairs |`,
    `| rules taught again after saved (repeat-correction rate) | ${repeatCorrection(report)} |`,
    `| re-teachings counted (planted) | ${t.reteachesCounted} (${t.reteachesPlanted}) |`,
    `| rules taught ≥ 2 times in MEMORY.md | ${rulesInIndex(report)} |`,
    `| relative dates resolved as expected | ${t.relativeDatesResolved} of ${t.relativeDates} |`,
    `| MEMORY.md coverage of the answers | ${percent(t.memoryMdCoverage)} |`,
    `| model calls (most for one session) | ${t.calls} (${t.mostCallsForOneSession}) |`,
    ...plantedRows(report).map(([figure, value]) => `| ${figure} | ${value(report)} |`),
    `| of them curation calls | ${t.curationCalls} |`,
    `| most active facts of one type after any run (budget) | ${t.mostActiveOfOneType} (${report.budget ?? 'default'}) |`,
    `| tokens per session (input incl. cache, + output) | ${t.tokensPerSession.toFixed(0)} |`,
    `| dollars per session (priced as ${report.pricedAs}) | ${t.costPerSessionUsd === null ? 'unknown (no price)' : `$${t.costPerSessionUsd.toFixed(5)}`} |`,
    '',
    "Recall hit@1 / @5 / @10: dreamd fused (its facts and its transcripts' passages, as the recall tool returns them), dreamd's facts alone, beside BM25 over the raw turns, over every reference fact, and plain BM25 over dreamd's own facts.",
    '',
    "| category | questions | dreamd fused | dreamd facts only | BM25 raw turns | BM25 all reference facts | plain BM25, dreamd's facts |",
    '|---|---|---|---|---|---|---|',
    ...Object.entries(t.recall)
      .sort(([a], [b]) => (a === 'all' ? 1 : b === 'all' ? -1 : a.localeCompare(b)))
      .map(
        ([category, hits]) =>
          `| ${category} | ${hits.questions} | ${hitsAt(hits.dreamdFused)} | ${hitsAt(hits.dreamd)} | ${hitsAt(hits.bm25RawTurns)} | ${hitsAt(hits.bm25AllFacts)} | ${hitsAt(hits.bm25SameFacts)} |`,
      ),
    '',
    `Tokens recall returned per question (top 10, as the recall tool formats it): ${recallTokens(report)}.`,
    '',
    "Growth: active facts and bytes (dreamd's own, all types) after every tenth session, beside the reference facts learned.",
    '',
    '| conversation | sessions | facts learned | active facts | active bytes |',
    '|---|---|---|---|---|',
    ...report.conversations.flatMap((conversation) =>
      conversation.curve.map(
        (point) =>
          `| ${conversation.id} | ${point.sessions} | ${point.factsLearned} | ${point.activeFacts} | ${point.activeBytes} |`,
      ),
    ),
    '',
    ...missList('lost', report.misses.lost),
    ...missList('kept more than once', report.misses.duplicated),
    ...missList('wrongly merged', report.misses.wronglyMerged),
    ...missList('wrongly superseded', report.misses.wronglySuperseded),
    `Reworded duplicates kept as two active facts: ${report.misses.duplicates.length}`,
    ...report.misses.duplicates.map(
      (entry) =>
        `- ${entry.conversation}: ${entry.pair.map((copy) => `${copy.sessionId} ${copy.turn} "${copy.text}"`).join(' = ')}`,
    ),
    `Rules taught two times or more that MEMORY.md does not list: ${report.misses.rules.length}`,
    ...report.misses.rules.map(
      (entry) =>
        `- ${entry.conversation}: ${entry.texts.map((text) => `"${text}"`).join(' = ')} (counted taught again ${entry.counted}×)`,
    ),
    ...(t.instructions === 0
      ? []
      : [
          ...instructionMissList(
            "changed whose newest version is not the only one active (oldest first; statuses of each text's copies)",
            report.misses.instructionsNotNewestOnly,
          ),
          ...instructionMissList('lost', report.misses.instructionsLost),
          ...instructionMissList(
            'given once and no longer active',
            report.misses.instructionsGivenOnceInactive,
          ),
          ...mergeList('Merges across instructions', report.misses.instructionMerges),
        ]),
    ...(t.twinPairs === 0
      ? []
      : [
          `Near-twin rules not both active apart: ${report.misses.twinsNotBothActive.length}`,
          ...report.misses.twinsNotBothActive.map(
            (entry) => `- ${entry.conversation}: ${entry.texts.map((text) => `"${text}"`).join(' / ')}`,
          ),
          ...mergeList('Near-twin rules merged or superseded across', report.misses.twinsJoined),
        ]),
    `Planted updates not resolved to the newest (oldest first; the statuses of each text's copies in memory): ${report.misses.updates.length}`,
    ...report.misses.updates.map(
      (entry) =>
        `- ${entry.conversation}: ${entry.chain.map((link) => `${link.turn} "${link.text}" [${link.statuses.join('/') || 'missing'}]`).join(' -> ')}`,
    ),
    `Recall misses (no answering fact or passage in dreamd's fused top 10): ${report.misses.recall.length}`,
    ...report.misses.recall.map(
      (entry) =>
        `- [${entry.conversation} ${entry.category}] "${entry.question}" wanted ${entry.expected.map((text) => `"${text}"`).join(' or ')} (${entry.evidence.join(', ')}); first came ${entry.first === undefined ? 'nothing' : `"${entry.first}"`}`,
    ),
  ];
  return lines.join('\n');
}

/** Tokens of what recall returned per question, fused and facts only. */
function recallTokens(report: EvalReport): string {
  const tokens = report.totals.recallTokensPerQuery;
  return `${tokens.fused.toFixed(0)} fused, ${tokens.facts.toFixed(0)} facts only`;
}

function droppedFacts(report: EvalReport): string {
  const reasons = Object.entries(report.totals.factsDroppedByReason).filter(([, count]) => count > 0);
  return reasons.length === 0
    ? `${report.totals.factsDropped}`
    : `${report.totals.factsDropped} (${reasons.map(([reason, count]) => `${reason} ${count}`).join(', ')})`;
}

/** seen / (seen + missed) of the oracle; model mode cannot tell. */
function olderInView(report: EvalReport): string {
  const seen = report.totals.olderInView;
  const missed = report.totals.olderOutOfView;
  if (seen === null || missed === null) return 'unknown (model mode)';
  return `${seen} of ${seen + missed} (${percent(seen + missed === 0 ? 0 : seen / (seen + missed))})`;
}

function dollars(report: EvalReport): string {
  return report.totals.costUsd === null ? 'unknown (no price)' : `$${report.totals.costUsd.toFixed(4)}`;
}

/**
 * The two ways side by side (the figures the targets read, and what they cost), then a verdict line per
 * target, both ways. Throws when a figure's input is missing (see `verdict.ts`).
 */
export function renderBothWays(both: BothWays): string {
  const { perSession, backlog } = both;
  const t = perSession.totals;
  const row = (figure: string, value: (report: EvalReport) => string) =>
    `| ${figure} | ${value(perSession)} | ${value(backlog)} |`;
  const recall = (report: EvalReport) => {
    if (report.totals.questions === 0) return 'no questions asked';
    const hits = recallAt10(report);
    return `${percent(hits.dreamd)} vs ${percent(hits.rawTurns)} (facts only ${percent(hits.factsOnly)})`;
  };
  return [
    `dreamd eval both ways (${perSession.mode} mode): ${perSession.conversations.length} conversations, ${t.sessions} sessions, ${t.referenceFacts} reference facts, ${t.questions} questions, ${t.updates} update chains (${t.farUpdates} far back), ${t.duplicatePairs} reworded duplicate pairs, ${t.rules} rules (${t.rulesTaughtTwice} taught ≥ 2 times)`,
    '',
    '| figure | one run per session | backlog (every session waiting for the first run) |',
    '|---|---|---|',
    row('runs (sessions the first consolidated)', (r) => `${r.totals.runs} (${r.totals.sessionsInFirstRun})`),
    row('facts dropped (factsDropped of the runs)', droppedFacts),
    row('sessions left unconsolidated at the end', (r) => `${r.totals.unconsolidated}`),
    row('lost (nowhere in memory or archive)', (r) => `${r.totals.lost}`),
    row('wrongly merged', (r) => `${r.totals.wronglyMerged}`),
    row(
      'duplicates kept (reworded pairs both active)',
      (r) => `${r.totals.duplicatesKept} of ${r.totals.duplicatePairs}`,
    ),
    row('chains resolved to the newest', (r) => `${r.totals.updatesResolved} of ${r.totals.updates}`),
    row(
      `of them far back (${FAR_BACK_FACTS}+ facts earlier)`,
      (r) => `${r.totals.farUpdatesResolved} of ${r.totals.farUpdates}`,
    ),
    row("older fact in the model's view", olderInView),
    row('rules taught again after saved (repeat-correction rate)', repeatCorrection),
    row(
      're-teachings counted (planted)',
      (r) => `${r.totals.reteachesCounted} (${r.totals.reteachesPlanted})`,
    ),
    row('rules taught ≥ 2 times in MEMORY.md', rulesInIndex),
    row('recall hit@10, dreamd fused vs BM25 over raw turns', recall),
    row('recall tokens per query (top 10)', recallTokens),
    row('model calls (of them curation)', (r) => `${r.totals.calls} (${r.totals.curationCalls})`),
    row('tokens (input incl. cache, + output)', (r) => `${r.totals.inputTokens + r.totals.outputTokens}`),
    ...plantedRows(perSession).map(([figure, value]) => row(figure, value)),
    row(`dollars (priced as ${perSession.pricedAs})`, dollars),
    '',
    'Verdicts:',
    ...verdictLines(both),
  ].join('\n');
}

export function renderSelectorReport(report: SelectorReport): string {
  return [
    `Claude Code's selector (BM25 over file name and description, at most ${SELECTOR_PICKS} files, first ${SELECTOR_READ_BYTES.toLocaleString('en')} bytes read), the whole dataset in one memory:`,
    '',
    '| layout | memory files | largest file | answer in what was read | the same, 5 files picked whatever their score |',
    '|---|---|---|---|---|',
    ...report.layouts.map(
      (figure) =>
        `| ${figure.layout} | ${figure.files} | ${figure.largestFileBytes.toLocaleString('en')} bytes | ${figure.recalled} of ${figure.questions} (${percent(figure.questions === 0 ? 0 : figure.recalled / figure.questions)}) | ${figure.recalledAlwaysPicking} of ${figure.questions} (${percent(figure.questions === 0 ? 0 : figure.recalledAlwaysPicking / figure.questions)}) |`,
    ),
  ].join('\n');
}

function hitsAt(hits: Record<string, number>): string {
  return HIT_AT.map((k) => percent(hits[`@${k}`] ?? 0)).join(' / ');
}

function missList(name: string, misses: readonly FactMiss[]): string[] {
  return [
    `Facts ${name}: ${misses.length}`,
    ...misses.map(
      (entry) =>
        `- ${entry.conversation} ${entry.sessionId} ${entry.turn}: "${entry.text}"${entry.detail === undefined ? '' : ` (${entry.detail})`}`,
    ),
  ];
}

async function main(): Promise<void> {
  const name = option('--dataset') ?? 'long';
  const size = option('--size') ?? 'full';
  if (!(size in LONG_SIZES)) throw new Error(`--size ${size}: use ${Object.keys(LONG_SIZES).join(' or ')}`);
  if (option('--size') !== undefined && name !== 'long' && name !== 'memorycode')
    throw new Error(`--size applies to the long and memorycode datasets, not ${name}`);
  const seed = Number(option('--seed') ?? DEFAULT_SEED);
  if (!Number.isInteger(seed)) throw new Error('--seed takes an integer');
  const file =
    name === 'small' ? fileURLToPath(new URL('./dataset/dreamd-small.json', import.meta.url)) : name;
  const dataset =
    name === 'long'
      ? generateLongDataset(size as LongSize, seed)
      : name === 'memorycode'
        ? memoryCodeDataset(size as MemoryCodeSize)
        : Dataset.parse(JSON.parse(await readFile(file, 'utf8')));
  const mode = process.argv.includes('--model') ? 'model' : 'oracle';
  const perRun = option('--sessions-per-run');
  const budgetOption = option('--budget');
  const budget =
    budgetOption === undefined ? undefined : budgetOption === 'none' ? Infinity : Number(budgetOption);
  if (budget !== undefined && !(budget === Infinity || (Number.isInteger(budget) && budget > 1)))
    throw new Error(`--budget ${budgetOption ?? ''}: active facts per type, a whole number above 1, or none`);
  const backlog = process.argv.includes('--backlog');
  if (backlog && perRun !== undefined)
    throw new Error('--backlog and --sessions-per-run: give one way or neither');
  if (perRun !== undefined && !(Number.isInteger(Number(perRun)) && Number(perRun) > 0))
    throw new Error(`--sessions-per-run ${perRun}: a whole number of sessions, 1 or more`);
  const options = {
    mode,
    env: process.env,
    ...(budget !== undefined ? { budget } : {}),
    log: (line: string) => console.error(line),
  } as const;
  const json = process.argv.includes('--json');
  // One way when asked for; both by default, side by side, then each way's full report.
  const oneWay =
    backlog || perRun !== undefined
      ? await runEval(dataset, {
          ...options,
          backlog,
          ...(perRun !== undefined ? { sessionsPerRun: Number(perRun) } : {}),
        })
      : undefined;
  const both = oneWay === undefined ? await runEvalBothWays(dataset, options) : undefined;
  // Claude Code's selector is judged by questions: a dataset that asks none (MemoryCode) has no such figure.
  const asks = dataset.some((conversation) => conversation.qa.length > 0);
  const selector = asks ? await selectorRecall(dataset, { mode, env: process.env }) : undefined;
  if (json) {
    console.log(
      JSON.stringify(oneWay !== undefined ? { ...oneWay, selector } : { ...both, selector }, null, 2),
    );
    return;
  }
  const reports =
    oneWay !== undefined
      ? renderReport(oneWay)
      : [renderBothWays(both!), renderReport(both!.perSession), renderReport(both!.backlog)].join('\n\n');
  console.log(selector === undefined ? reports : `${reports}\n\n${renderSelectorReport(selector)}`);
}

// Run as `npm run eval`, not when a test imports the renderers (it would run the full eval first).
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1]))
  await main();
