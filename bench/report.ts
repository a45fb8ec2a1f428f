/**
 * One benchmark figure, and the table and files they end up in (`bench/results.md`, `bench/results.json`).
 */
import { writeFile } from 'node:fs/promises';
import type { Machine } from './machine.js';

export interface Figure {
  /** Short stable key, e.g. `scheduler-tick-idle`. */
  readonly key: string;
  /** What is measured, as the table shows it. */
  readonly name: string;
  /** The measured value in `unit`. */
  readonly value: number;
  readonly unit: string;
  /** The target, as the README's benchmark table states it. */
  readonly target: string;
  /** Value compared with the baseline or the limit, e.g. 0.03 (× parse every session). */
  readonly ratio: number | undefined;
  /** What the ratio is against, e.g. "× parse every session". */
  readonly ratioOf: string;
  /** Whether the target is met; undefined when the figure has no target of its own. */
  readonly met: boolean | undefined;
  /** Anything else worth keeping (other sizes, the baseline's own figure). */
  readonly details?: Readonly<Record<string, unknown>>;
  /** Why a figure is missing or what limits it. */
  readonly note?: string;
}

export interface Results {
  readonly date: string;
  readonly mode: 'quick' | 'full';
  readonly machine: Machine;
  readonly durationSeconds: number;
  readonly figures: readonly Figure[];
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const magnitude = Math.abs(value);
  if (magnitude >= 100) return value.toFixed(0);
  if (magnitude >= 10) return value.toFixed(1);
  if (magnitude >= 1) return value.toFixed(2);
  return value.toPrecision(2);
}

function verdict(met: boolean | undefined): string {
  return met === undefined ? '–' : met ? 'met' : 'NOT met';
}

function row(figure: Figure): string[] {
  return [
    figure.name,
    `${formatNumber(figure.value)} ${figure.unit}`,
    figure.ratio === undefined ? '–' : `${formatNumber(figure.ratio)} ${figure.ratioOf}`,
    figure.target,
    verdict(figure.met),
  ];
}

const HEADER = ['figure', 'value', 'ratio', 'target', 'verdict'];

/** The plain-text table printed at the end of a run. */
export function renderTable(figures: readonly Figure[]): string {
  const rows = [HEADER, ...figures.map(row)];
  const widths = HEADER.map((_, column) => Math.max(...rows.map((cells) => (cells[column] ?? '').length)));
  return rows
    .map((cells) =>
      cells
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `bench/results.md`: machine, date, the table, then each figure's details and notes. */
export function renderMarkdown(results: Results): string {
  const { machine } = results;
  const lines = [
    '# dreamd benchmark results',
    '',
    `Written by \`npm run bench${results.mode === 'quick' ? ' -- --quick' : ''}\` on ${results.date} in ${results.durationSeconds.toFixed(0)} s.`,
    '',
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb.toFixed(1)} GB memory, ` +
      `Node ${machine.node}, ${machine.platform}; load average ${machine.loadAverage.map((load) => load.toFixed(2)).join(' ')} at start.`,
    '',
    `| ${HEADER.join(' | ')} |`,
    `|${HEADER.map(() => '---').join('|')}|`,
    ...results.figures.map((figure) => `| ${row(figure).join(' | ')} |`),
    '',
    '## Details',
    '',
  ];
  for (const figure of results.figures) {
    lines.push(`### ${figure.name}`);
    if (figure.note !== undefined) lines.push('', figure.note);
    if (figure.details !== undefined) {
      lines.push('');
      for (const [key, value] of Object.entries(figure.details)) {
        lines.push(`- ${key}: ${typeof value === 'number' ? formatNumber(value) : JSON.stringify(value)}`);
      }
    }
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/** Writes `results.md` and `results.json` next to each other (`base` without extension). */
export async function writeResults(base: string, results: Results): Promise<void> {
  await writeFile(`${base}.md`, renderMarkdown(results));
  await writeFile(`${base}.json`, `${JSON.stringify(results, null, 2)}\n`);
}
