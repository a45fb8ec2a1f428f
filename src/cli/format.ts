/** Small text formatters shared by the commands' human output. */
import {
  HELD_BACK_KINDS,
  HELD_BACK_LABELS,
  type BatchRecord,
  type HeldBackKind,
  type RunSummary,
} from '../core/run.js';
import { formatUsd } from '../cost/prices.js';
import type { TokenUsage } from '../model/types.js';
import { counted } from '../util/plural.js';

/** 1536 → "1.5 KB"; binary units, one decimal above bytes. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'] as const;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** 850 → "850 ms", 12_300 → "12.3 s", 125_000 → "2 min 5 s". */
export function formatDuration(milliseconds: number): string {
  if (milliseconds < 1000) return `${Math.round(milliseconds)} ms`;
  if (milliseconds < 60_000) return `${(milliseconds / 1000).toFixed(1)} s`;
  const seconds = Math.round(milliseconds / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** A time as `YYYY-MM-DD HH:MM` (UTC), short enough for a table column. */
export function formatTime(time: number | string): string {
  const date = new Date(time);
  return Number.isNaN(date.getTime())
    ? String(time)
    : `${date.toISOString().slice(0, 16).replace('T', ' ')}Z`;
}

/** "+2 ~1 ⇢1 !0": added, updated, superseded, quarantined. */
export function formatChanges(
  summary: Pick<RunSummary, 'added' | 'updated' | 'superseded' | 'quarantined'>,
): string {
  return `+${summary.added} ~${summary.updated} ⇢${summary.superseded} !${summary.quarantined}`;
}

/** "1,234 in, 56 out, 0 cache read". */
export function formatUsage(usage: TokenUsage): string {
  const number = (value: number): string => value.toLocaleString('en-US');
  return `${number(usage.inputTokens)} in, ${number(usage.outputTokens)} out, ${number(usage.cacheReadTokens)} cache read`;
}

/** Total tokens of a run, for a table column. */
export function totalTokens(usage: TokenUsage): number {
  return usage.inputTokens + usage.outputTokens;
}

/** `msgbatch_… : 3 of 4 calls batched at 0.5 × list ($0.0012 instead of $0.0024)`. */
export function describeBatch(batch: BatchRecord): string {
  if (batch.outcome === 'failed')
    return `${batch.id}: failed; its ${counted(batch.requests, 'request')} wait for the next run`;
  const price =
    batch.costUsd === undefined
      ? ''
      : ` (${formatUsd(batch.costUsd)} instead of ${formatUsd(batch.listCostUsd)} at list price)`;
  return `${batch.id}: ${counted(batch.batchedCalls, 'call')} answered by the batch at ${batch.priceFactor ?? 0.5} × list price${price}, submitted ${batch.submittedAt}`;
}

/**
 * Held-back facts by what the screen saw, most first: "2 from a tool result, 1 with a secret". Empty when there
 * are none.
 */
export function formatHeldBack(counts: Readonly<Partial<Record<HeldBackKind, number>>>): string {
  return HELD_BACK_KINDS.flatMap((kind) => {
    const count = counts[kind] ?? 0;
    return count > 0 ? [{ kind, count }] : [];
  })
    .sort((a, b) => b.count - a.count)
    .map(({ kind, count }) => `${count} ${HELD_BACK_PREPOSITIONS[kind]} ${HELD_BACK_LABELS[kind]}`)
    .join(', ');
}

/** How a count reads before each kind: facts read "from" a source, held "with" a secret, "as" an instruction. */
const HELD_BACK_PREPOSITIONS = {
  secret: 'with',
  instruction: 'as',
  assistant: 'from',
  tool: 'from',
  'sub-agent': 'from',
  read: 'from',
  other: 'for',
} as const satisfies Record<HeldBackKind, string>;
