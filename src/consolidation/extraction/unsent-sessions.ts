/**
 * What of each session an extraction did not send or could not keep: the first message of the first part not
 * sent, and why it waits. A session is never consolidated past a part not read, so its later parts wait too
 * and the ledger's progress stays a prefix.
 */
import type { Batch } from '../../digest/index.js';
import type { WaitReason } from '../../core/run.js';

/** Why each session waits: the first reason it met. */
export type WaitingMap = Map<string, { reason: WaitReason; detail: string }>;

/** The sessions of an extraction that wait, from where and why, and those with at least one part answered. */
export interface UnsentState {
  readonly firstUnsent: Map<string, number>;
  readonly waiting: WaitingMap;
  /** Sessions with at least one part answered. */
  readonly answered: Set<string>;
}

/** An extraction's unsent state before its first call: nothing waits, nothing answered. */
export function createUnsentState(): UnsentState {
  return { firstUnsent: new Map(), waiting: new Map(), answered: new Set() };
}

/**
 * First message of each session in a batch that was not sent, merged into `firstUnsent` (lowest wins), and
 * why it waits (the first reason a session meets stays: its later parts wait because of it). A session none
 * of whose parts was answered waits whole (0), even when its first digest line is a later message (the
 * messages before it were noise): it is not consolidated in part up to there.
 */
export function markUnsent(
  batch: Batch,
  state: UnsentState,
  reason: WaitReason,
  detail: string,
  only?: ReadonlySet<string>,
): void {
  const { firstUnsent, waiting, answered } = state;
  for (const segment of batch.segments) {
    if (only !== undefined && !only.has(segment.sessionId)) continue;
    const line = segment.lines[0]?.message;
    if (line === undefined) continue;
    const first = answered.has(segment.sessionId) ? line : 0;
    const known = firstUnsent.get(segment.sessionId);
    if (known === undefined || first < known) firstUnsent.set(segment.sessionId, first);
    if (!waiting.has(segment.sessionId)) waiting.set(segment.sessionId, { reason, detail });
  }
}

/** Whether a batch holds a part of a session that lost an earlier part: it waits too, so progress is a prefix. */
export function blockedByUnsent(batch: Batch, firstUnsent: ReadonlyMap<string, number>): boolean {
  return batch.segments.some((segment) => {
    const stop = firstUnsent.get(segment.sessionId);
    return stop !== undefined && (segment.lines[0]?.message ?? Number.POSITIVE_INFINITY) >= stop;
  });
}
