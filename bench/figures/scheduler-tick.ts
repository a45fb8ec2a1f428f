/**
 * Figure 1: the scheduler's tick (`inspectSpaceDetailed` for every space, one after the other as the
 * scheduler runs them) over spaces whose sessions are all in the ledger, then with five new sessions per
 * space; against plain `readFile` + `JSON.parse` of every session file (what a scheduler without a ledger does
 * at the least), timed in rounds that alternate with the ticks, so both see the same page cache and load.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createInspectReads,
  inspectSpaceDetailed,
  type InspectReads,
} from '../../src/consolidation/inspect.js';
import type { Config, Space } from '../../src/config/schema.js';
import {
  emptyLedger,
  LEDGER_FILE,
  newRunId,
  nextLedgerContent,
  RUNS_DIR,
  serializeRunRecord,
} from '../../src/space/index.js';
import type { LedgerEntry } from '../../src/memory/types.js';
import type { Figure } from '../report.js';
import { benchConfig, makeTempRoot, workloadSpace } from '../setup.js';
import { median, timeMs } from '../stats.js';
import { DEFAULT_WORKLOAD, generateSession, sessionIdOf, type WorkloadOptions } from '../workload.js';

export interface SchedulerTickOptions {
  readonly spaces: number;
  readonly sessionsPerSpace: number;
  /** Run records per space (each holding `runRecordBeforeChars` of old file bytes, as real ones do). */
  readonly runsPerSpace: number;
  readonly log: (line: string) => void;
}

const NEW_SESSIONS_PER_SPACE = 5;
const TICKS = 5;
const RUN_RECORD_BEFORE_CHARS = 50_000;

/**
 * Short agent sessions (20 messages, tool results of 2,000 characters: about 16 kB, where the default
 * workload's are 41 kB): 100,000 of them make 1.6 GB, which a CI disk holds. The tick never opens them; a
 * smaller file only makes parsing every session cheaper, so the ratio errs against dreamd.
 */
const TICK_WORKLOAD: WorkloadOptions = {
  ...DEFAULT_WORKLOAD,
  messagesPerSession: 20,
  toolResultChars: 2_000,
  factsPerSession: 1,
  secretsPerSession: 0,
};

async function writeSessions(
  space: Space,
  spaceIndex: number,
  from: number,
  count: number,
): Promise<LedgerEntry[]> {
  const entries: LedgerEntry[] = [];
  for (let index = from; index < from + count; index += 1) {
    const generated = generateSession(TICK_WORKLOAD, spaceIndex, index);
    const file = `${generated.id}.json`;
    const path = join(space.sessionsDir, file);
    await writeFile(path, generated.json);
    const stats = await stat(path);
    entries.push({
      sessionId: generated.id,
      file,
      messageCount: generated.messageCount,
      size: stats.size,
      mtimeMs: stats.mtimeMs,
      runId: 'run-bench',
      consolidatedAt: new Date().toISOString(),
    });
  }
  return entries;
}

/** Completed consolidation records, oldest first, as `commitMemoryChanges` writes them. */
async function writeRunRecords(space: Space, count: number): Promise<void> {
  await mkdir(join(space.memoryDir, RUNS_DIR), { recursive: true });
  for (let seq = 1; seq <= count; seq += 1) {
    const committedAt = new Date(Date.UTC(2026, 10, seq, 3));
    const runId = newRunId(committedAt);
    const record = {
      version: 1 as const,
      runId,
      kind: 'consolidation' as const,
      seq,
      committedAt: committedAt.toISOString(),
      rollbackOf: undefined,
      summary: {
        runId,
        spaceId: space.id,
        status: 'completed' as const,
        reason: undefined,
        sessions: [],
        added: 1,
        updated: 0,
        superseded: 0,
        quarantined: 0,
        calls: 1,
        retries: 0,
        model: 'bench',
        durationMs: 1,
        diff: '',
        problems: [],
        usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
      files: { 'user.md': { before: 'x'.repeat(RUN_RECORD_BEFORE_CHARS), afterHash: 'bench' } },
    };
    await writeFile(join(space.memoryDir, RUNS_DIR, `${runId}.json`), serializeRunRecord(record));
  }
}

/**
 * One tick of the scheduler: every space inspected, one after the other, with the readers a daemon keeps from
 * tick to tick (a ledger or run record unchanged since the last tick is not read again).
 */
async function tick(
  spaces: readonly Space[],
  config: Config,
  now: Date,
  reads: InspectReads,
): Promise<{ ms: number; settled: number }> {
  let settled = 0;
  const ms = await timeMs(async () => {
    for (const space of spaces) {
      const { inspection } = await inspectSpaceDetailed(space, { config, now: () => now, reads });
      if (inspection.error !== undefined) throw new Error(`${space.id}: ${inspection.error}`);
      settled += inspection.settledNew;
    }
  });
  return { ms, settled };
}

export async function measureSchedulerTick(options: SchedulerTickOptions): Promise<Figure[]> {
  const root = await makeTempRoot('tick');
  try {
    const spaces = Array.from({ length: options.spaces }, (_, index) => workloadSpace(root.path, index));
    const config = benchConfig(root.path, spaces);
    options.log(`  writing ${options.spaces} × ${options.sessionsPerSpace} sessions and their ledgers`);
    for (const [index, space] of spaces.entries()) {
      await mkdir(space.sessionsDir, { recursive: true });
      await mkdir(join(space.memoryDir, '.dreamd'), { recursive: true });
      const entries = await writeSessions(space, index, 0, options.sessionsPerSpace);
      await writeFile(join(space.memoryDir, LEDGER_FILE), nextLedgerContent(emptyLedger(), entries));
      await writeRunRecords(space, options.runsPerSpace);
    }
    // An hour on: every file is past the quiet period, as in a daemon that has been up a while.
    const now = new Date(Date.now() + 3_600_000);
    // One set of readers for every tick, as a daemon keeps them.
    const reads = createInspectReads();

    let bytes = 0;
    const parseAll = (): Promise<number> =>
      timeMs(async () => {
        bytes = 0;
        for (const [spaceIndex, space] of spaces.entries()) {
          for (let index = 0; index < options.sessionsPerSpace; index += 1) {
            const text = await readFile(
              join(space.sessionsDir, `${sessionIdOf(spaceIndex, index)}.json`),
              'utf8',
            );
            JSON.parse(text);
            bytes += text.length;
          }
        }
      });

    // Rounds alternate: plain JSON.parse of every session, then one tick; each tick is divided by its own round's parse.
    options.log(`  ${TICKS} rounds of JSON.parse of every session, each followed by an idle tick`);
    const parseRounds: number[] = [];
    const idleTicks: number[] = [];
    for (let round = 0; round < TICKS; round += 1) {
      parseRounds.push(await parseAll());
      const result = await tick(spaces, config, now, reads);
      if (result.settled !== 0) throw new Error(`an idle tick found ${result.settled} new sessions`);
      idleTicks.push(result.ms);
    }
    const parseAllMs = median(parseRounds);
    const idleRatio = median(idleTicks.map((ms, round) => ms / parseRounds[round]!));

    for (const [index, space] of spaces.entries()) {
      await writeSessions(space, index, options.sessionsPerSpace, NEW_SESSIONS_PER_SPACE);
    }
    const newTicks: number[] = [];
    for (let round = 0; round < TICKS; round += 1) {
      const result = await tick(spaces, config, now, reads);
      const expected = NEW_SESSIONS_PER_SPACE * spaces.length;
      if (result.settled !== expected)
        throw new Error(`a tick found ${result.settled} new sessions, not ${expected}`);
      newTicks.push(result.ms);
    }

    const idle = median(idleTicks);
    const withNew = median(newTicks);
    const scale = `${options.spaces} spaces × ${options.sessionsPerSpace.toLocaleString('en')} sessions`;
    const details = {
      'readFile + JSON.parse of every session, by round (ms)': parseRounds.map((ms) => Math.round(ms)),
      'tick / parse of the same round, by round': idleTicks.map((ms, round) =>
        (ms / parseRounds[round]!).toFixed(3),
      ),
      'bytes parsed (MB)': bytes / 1e6,
      'idle ticks (ms)': idleTicks.map((ms) => Math.round(ms)),
      'ticks with new sessions (ms)': newTicks.map((ms) => Math.round(ms)),
      'run records per space': options.runsPerSpace,
    };
    return [
      {
        key: 'scheduler-tick-idle',
        name: `Scheduler tick, ${scale}, nothing new`,
        value: idle,
        unit: 'ms',
        target: '≤ 1/20 of parsing every session',
        ratio: idleRatio,
        ratioOf: '× JSON.parse of every session (median of paired rounds)',
        met: idleRatio <= 1 / 20,
        details,
      },
      {
        key: 'scheduler-tick-new',
        name: `Scheduler tick, ${scale}, 5 new sessions a space`,
        value: withNew,
        unit: 'ms',
        target: '≤ 1/20 of parsing every session; grows with new sessions only',
        ratio: withNew / parseAllMs,
        ratioOf: '× JSON.parse of every session (median round)',
        met: withNew / parseAllMs <= 1 / 20,
        details: { 'growth over the idle tick (ms)': withNew - idle },
      },
    ];
  } finally {
    await root.remove();
  }
}
