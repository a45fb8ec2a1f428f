/**
 * `npm run eval [-- --dataset long|small|file.json] [--size quick|full] [--seed N] [--model] [--sessions-per-run N]
 * [--json]`: dreamd's memory quality on a dataset in the common long-term-memory format (default: the generated
 * long dataset, full size, `generate.ts`; `small` is eval/dataset/dreamd-small.json). Oracle mode
 * unless `--model`, which extracts with the model configured by the environment (ANTHROPIC_API_KEY, or
 * DREAMD_MODEL_PROVIDER=openai-compatible with DREAMD_MODEL_BASE_URL and DREAMD_MODEL).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Dataset } from './format.js';
import { HIT_AT, runEval, type EvalReport, type FactMiss } from './harness.js';
import { SELECTOR_PICKS, SELECTOR_READ_BYTES, selectorRecall, type SelectorReport } from './selector.js';
import { DEFAULT_SEED, generateLongDataset, LONG_SIZES, type LongSize } from './generate.js';

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

function percent(value: number): string {
  return `${(100 * value).toFixed(1)} %`;
}

export function renderReport(report: EvalReport): string {
  const t = report.totals;
  const lines = [
    `dreamd eval (${report.mode} mode): ${report.conversations.length} conversations, ${t.sessions} sessions, ${t.referenceFacts} reference facts, ${t.questions} questions`,
    '',
    '| figure | value |',
    '|---|---|',
    `| reference facts kept once | ${t.keptOnce} of ${t.referenceFacts} |`,
    `| kept more than once | ${t.keptMoreThanOnce} |`,
    `| of them held inside a fact curation merged (text kept whole) | ${t.merged} |`,
    `| of them only in the archive, with a successor | ${t.archivedWithSuccessor} |`,
    `| lost | ${t.lost} |`,
    `| wrongly merged | ${t.wronglyMerged} |`,
    `| wrongly superseded | ${t.wronglySuperseded} |`,
    `| planted updates resolved to the newest | ${t.updatesResolved} of ${t.updates} |`,
    `| relative dates resolved as expected | ${t.relativeDatesResolved} of ${t.relativeDates} |`,
    `| MEMORY.md coverage of the answers | ${percent(t.memoryMdCoverage)} |`,
    `| model calls (most for one session) | ${t.calls} (${t.mostCallsForOneSession}) |`,
    `| of them curation calls | ${t.curationCalls} |`,
    `| most active facts of one type after any run (budget) | ${t.mostActiveOfOneType} (${report.budget ?? 'default'}) |`,
    `| tokens per session (input incl. cache, + output) | ${t.tokensPerSession.toFixed(0)} |`,
    `| dollars per session (priced as ${report.pricedAs}) | ${t.costPerSessionUsd === null ? 'unknown (no price)' : `$${t.costPerSessionUsd.toFixed(5)}`} |`,
    '',
    "Recall hit@1 / @5 / @10: dreamd (its memory, searched; then with the passages facts came from) beside BM25 over the raw turns, over every reference fact, and plain BM25 over dreamd's own facts.",
    '',
    "| category | questions | dreamd | dreamd + passages | BM25 raw turns | BM25 all reference facts | plain BM25, dreamd's facts |",
    '|---|---|---|---|---|---|---|',
    ...Object.entries(t.recall)
      .sort(([a], [b]) => (a === 'all' ? 1 : b === 'all' ? -1 : a.localeCompare(b)))
      .map(
        ([category, hits]) =>
          `| ${category} | ${hits.questions} | ${hitsAt(hits.dreamd)} | ${hitsAt(hits.dreamdPassages)} | ${hitsAt(hits.bm25RawTurns)} | ${hitsAt(hits.bm25AllFacts)} | ${hitsAt(hits.bm25SameFacts)} |`,
      ),
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
    `Planted updates not resolved to the newest (oldest first; the statuses of each text's copies in memory): ${report.misses.updates.length}`,
    ...report.misses.updates.map(
      (entry) =>
        `- ${entry.conversation}: ${entry.chain.map((link) => `${link.turn} "${link.text}" [${link.statuses.join('/') || 'missing'}]`).join(' -> ')}`,
    ),
    `Recall misses (no answering fact in dreamd's top 10): ${report.misses.recall.length}`,
    ...report.misses.recall.map(
      (entry) =>
        `- [${entry.conversation} ${entry.category}] "${entry.question}" wanted ${entry.expected.map((text) => `"${text}"`).join(' or ')} (${entry.evidence.join(', ')}); first came ${entry.first === undefined ? 'nothing' : `"${entry.first}"`}`,
    ),
  ];
  return lines.join('\n');
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
  const seed = Number(option('--seed') ?? DEFAULT_SEED);
  if (!Number.isInteger(seed)) throw new Error('--seed takes an integer');
  const file =
    name === 'small' ? fileURLToPath(new URL('./dataset/dreamd-small.json', import.meta.url)) : name;
  const dataset =
    name === 'long'
      ? generateLongDataset(size as LongSize, seed)
      : Dataset.parse(JSON.parse(await readFile(file, 'utf8')));
  const mode = process.argv.includes('--model') ? 'model' : 'oracle';
  const perRun = option('--sessions-per-run');
  const budgetOption = option('--budget');
  const budget =
    budgetOption === undefined ? undefined : budgetOption === 'none' ? Infinity : Number(budgetOption);
  if (budget !== undefined && !(budget === Infinity || (Number.isInteger(budget) && budget > 1)))
    throw new Error(`--budget ${budgetOption ?? ''}: active facts per type, a whole number above 1, or none`);
  const report = await runEval(dataset, {
    mode,
    env: process.env,
    ...(perRun !== undefined ? { sessionsPerRun: Number(perRun) } : {}),
    ...(budget !== undefined ? { budget } : {}),
    log: (line) => console.error(line),
  });
  const selector = await selectorRecall(dataset, { mode, env: process.env });
  console.log(
    process.argv.includes('--json')
      ? JSON.stringify({ ...report, selector }, null, 2)
      : `${renderReport(report)}\n\n${renderSelectorReport(selector)}`,
  );
}

await main();
