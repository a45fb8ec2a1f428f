/**
 * `npm run eval [-- --dataset file.json] [--model] [--sessions-per-run N] [--json]`: dreamd's memory quality
 * on a dataset in the common long-term-memory format (default: eval/dataset/dreamd-small.json). Oracle mode
 * unless `--model`, which extracts with the model configured by the environment (ANTHROPIC_API_KEY, or
 * DREAMD_MODEL_PROVIDER=openai-compatible with DREAMD_MODEL_BASE_URL and DREAMD_MODEL).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Dataset } from './format.js';
import { HIT_AT, runEval, type EvalReport } from './harness.js';
import { SELECTOR_PICKS, SELECTOR_READ_BYTES, selectorRecall, type SelectorReport } from './selector.js';

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
    `| lost | ${t.lost} |`,
    `| wrongly merged | ${t.wronglyMerged} |`,
    `| wrongly superseded | ${t.wronglySuperseded} |`,
    `| planted updates resolved to the newest | ${t.updatesResolved} of ${t.updates} |`,
    `| relative dates resolved as expected | ${t.relativeDatesResolved} of ${t.relativeDates} |`,
    `| MEMORY.md coverage of the answers | ${percent(t.memoryMdCoverage)} |`,
    `| model calls (most for one session) | ${t.calls} (${t.mostCallsForOneSession}) |`,
    `| tokens per session (input incl. cache, + output) | ${t.tokensPerSession.toFixed(0)} |`,
    `| dollars per session | ${t.costPerSessionUsd === null ? 'unknown (no price)' : `$${t.costPerSessionUsd.toFixed(5)}`} |`,
    '',
    `| recall by category | questions | ${HIT_AT.map((k) => `dreamd hit@${k}`).join(' | ')} | ${HIT_AT.map((k) => `BM25 raw turns hit@${k}`).join(' | ')} |`,
    `|---|---|${HIT_AT.map(() => '---|').join('')}${HIT_AT.map(() => '---|').join('')}`,
    ...Object.entries(t.recall)
      .sort(([a], [b]) => (a === 'all' ? 1 : b === 'all' ? -1 : a.localeCompare(b)))
      .map(
        ([category, hits]) =>
          `| ${category} | ${hits.questions} | ${HIT_AT.map((k) => percent(hits.dreamd[`@${k}`] ?? 0)).join(' | ')} | ${HIT_AT.map((k) => percent(hits.bm25RawTurns[`@${k}`] ?? 0)).join(' | ')} |`,
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

async function main(): Promise<void> {
  const file = option('--dataset') ?? fileURLToPath(new URL('./dataset/dreamd-small.json', import.meta.url));
  const dataset = Dataset.parse(JSON.parse(await readFile(file, 'utf8')));
  const mode = process.argv.includes('--model') ? 'model' : 'oracle';
  const perRun = option('--sessions-per-run');
  const report = await runEval(dataset, {
    mode,
    env: process.env,
    ...(perRun !== undefined ? { sessionsPerRun: Number(perRun) } : {}),
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
