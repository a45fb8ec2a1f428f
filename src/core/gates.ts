import type { GatesConfig } from '../config/schema.js';
import type { SpaceInspection } from './inspection.js';
import { counted } from '../util/plural.js';

export interface GateDecision {
  /** True when a run may start now. */
  readonly open: boolean;
  /** Why the gates are closed (one line per closed gate); empty when open. */
  readonly reasons: readonly string[];
}

export interface EvaluateGatesInput {
  readonly inspection: SpaceInspection;
  readonly gates: GatesConfig;
  readonly now: Date;
  /** Skip the time and session-count gates; never the lock. */
  readonly force: boolean;
}

const HOUR_MS = 3_600_000;

/**
 * The three gates of a run, as a pure function of the space's state:
 * 1. at least `gates.minHours` since the last successful run (open when there never was one),
 * 2. at least `gates.minSessions` settled new sessions,
 * 3. the space's lock is free, and Claude Code's `.consolidate-lock` too.
 * A space that could not be inspected stays closed. `force` skips 1 and 2.
 */
export function evaluateGates({ inspection, gates, now, force: forced }: EvaluateGatesInput): GateDecision {
  // A session consolidated part by part continues without waiting (SpaceInspection.continuing).
  const force = forced || inspection.continuing === true;
  const reasons: string[] = [];
  if (inspection.error !== undefined) {
    reasons.push(`space "${inspection.spaceId}" could not be inspected: ${inspection.error}`);
  }
  if (!force && inspection.lastSuccessfulRunAt !== undefined) {
    const last = Date.parse(inspection.lastSuccessfulRunAt);
    if (Number.isNaN(last)) {
      reasons.push(`last successful run time "${inspection.lastSuccessfulRunAt}" is not a date`);
    } else {
      const hours = (now.getTime() - last) / HOUR_MS;
      if (hours < gates.minHours) {
        reasons.push(
          `${hours.toFixed(1)} h since the last successful run (${inspection.lastSuccessfulRunAt}); ` +
            `${gates.minHours} h needed`,
        );
      }
    }
  }
  if (!force && inspection.settledNew < gates.minSessions) {
    reasons.push(
      `${counted(inspection.settledNew, 'settled new session')}; ${gates.minSessions} needed` +
        waitingLive(inspection.live, gates.quietMinutes),
    );
  }
  if (inspection.budget !== undefined) {
    const { spentUsd, budgetUsd, resumesAt } = inspection.budget;
    reasons.push(
      `monthly budget reached: $${spentUsd.toFixed(2)} of $${budgetUsd.toFixed(2)} spent; runs wait until ${resumesAt} ` +
        '(raise limits.monthlyBudgetUsd to go on now)',
    );
  }
  if (inspection.lock !== undefined) {
    const { owner, pid, host, startedAt } = inspection.lock;
    reasons.push(`locked by ${owner} (pid ${pid} on ${host}) since ${startedAt}`);
  }
  if (inspection.claudeCodeLock !== undefined) {
    const { pid, since, ageMs } = inspection.claudeCodeLock;
    reasons.push(
      `Claude Code holds .consolidate-lock (pid ${pid}, for ${Math.round(ageMs / 60_000)} min, since ${since})`,
    );
  }
  return { open: reasons.length === 0, reasons };
}

/**
 * What a skip says of live sessions: they are read once unchanged for `gates.quietMinutes` (Claude Code's files
 * say nothing of their end, so a Claude Code session is live until then). Empty when there are none.
 */
export function waitingLive(live: number, quietMinutes: number): string {
  if (live <= 0) return '';
  return (
    `; ${counted(live, 'live session')} ${live === 1 ? 'waits' : 'wait'} until unchanged for ${quietMinutes} min ` +
    '(gates.quietMinutes, DREAMD_QUIET_MINUTES)'
  );
}
