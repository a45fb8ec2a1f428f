import { describe, expect, it } from 'vitest';
import { GatesConfig } from '../../src/config/schema.js';
import { evaluateGates } from '../../src/core/gates.js';
import type { SpaceInspection } from '../../src/core/inspection.js';

const gates = GatesConfig.parse({});
const now = new Date('2025-06-02T12:00:00Z');
const inspection = (overrides: Partial<SpaceInspection> = {}): SpaceInspection => ({
  spaceId: 'alpha',
  settledNew: 5,
  live: 0,
  broken: [],
  lastSuccessfulRunAt: '2025-06-01T11:00:00Z',
  ...overrides,
});
/** The gates' decision on a space inspected as `overrides` say (the defaults above otherwise). */
const decide = (overrides: Partial<SpaceInspection> = {}, force = false) =>
  evaluateGates({ inspection: inspection(overrides), gates, now, force });

describe('evaluateGates', () => {
  it('opens with five settled sessions 25 hours after the last run and no lock', () => {
    expect(decide()).toEqual({
      open: true,
      reasons: [],
    });
  });

  it('says why live sessions wait, naming quietMinutes, when too few sessions are settled', () => {
    const waiting = evaluateGates({
      inspection: inspection({ settledNew: 0, live: 3 }),
      gates: { ...gates, quietMinutes: 45 },
      now,
      force: false,
    });
    expect(waiting.reasons).toEqual([
      '0 settled new sessions; 5 needed; 3 live sessions wait until unchanged for 45 min ' +
        '(gates.quietMinutes, DREAMD_QUIET_MINUTES)',
    ]);
  });

  it('opens an hour after the last run, for one session, when a session bigger than a run is part-way', () => {
    const continuing = { settledNew: 1, lastSuccessfulRunAt: '2025-06-02T11:00:00Z', continuing: true };
    expect(decide(continuing)).toEqual({ open: true, reasons: [] });
    const lock = { owner: 'w', pid: 1, host: 'h', startedAt: '2025-06-02T11:59:00Z' };
    expect(decide({ ...continuing, lock }).open).toBe(false);
  });

  it('stays closed with four settled sessions', () => {
    const decision = decide({ settledNew: 4 });
    expect(decision.open).toBe(false);
    expect(decision.reasons).toEqual(['4 settled new sessions; 5 needed']);
  });

  it('counts one session in the singular, settled and live', () => {
    expect(decide({ settledNew: 1, live: 1 }).reasons).toEqual([
      '1 settled new session; 5 needed; 1 live session waits until unchanged for 30 min ' +
        '(gates.quietMinutes, DREAMD_QUIET_MINUTES)',
    ]);
  });

  it('stays closed 23 hours after the last successful run', () => {
    const decision = decide({ lastSuccessfulRunAt: '2025-06-01T13:00:00Z' });
    expect(decision.open).toBe(false);
    expect(decision.reasons[0]).toMatch(/^23\.0 h since the last successful run/);
  });

  it('opens for a space that never ran', () => {
    const decision = decide({ lastSuccessfulRunAt: undefined });
    expect(decision.open).toBe(true);
  });

  it('stays closed while the lock is held, even when forced', () => {
    const lock = { owner: 'worker', pid: 42, host: 'box', startedAt: '2025-06-02T11:59:00Z' };
    const decision = decide({ lock, settledNew: 0 }, true);
    expect(decision).toEqual({
      open: false,
      reasons: ['locked by worker (pid 42 on box) since 2025-06-02T11:59:00Z'],
    });
  });

  it('stays closed while the monthly budget is spent, even when forced, and says until when', () => {
    const budget = {
      kind: 'monthly-budget' as const,
      spentUsd: 5.12,
      budgetUsd: 5,
      resumesAt: '2025-07-01T00:00:00.000Z',
    };
    const decision = decide({ budget }, true);
    expect(decision).toEqual({
      open: false,
      reasons: [
        'monthly budget reached: $5.12 of $5.00 spent; runs wait until 2025-07-01T00:00:00.000Z (raise limits.monthlyBudgetUsd to go on now)',
      ],
    });
  });

  it('skips the time and session gates when forced', () => {
    const decision = decide({ settledNew: 0, lastSuccessfulRunAt: '2025-06-02T11:00:00Z' }, true);
    expect(decision.open).toBe(true);
  });

  it('stays closed for a space that could not be inspected, even when forced', () => {
    const decision = decide({ error: 'sessions directory vanished' }, true);
    expect(decision.open).toBe(false);
    expect(decision.reasons[0]).toContain('sessions directory vanished');
  });
});
