/**
 * Figure 2: digest throughput, MB of transcript a second, through the Gather step a run takes
 * (`gatherSessions`: read, parse and digest every settled file, then plan the calls), against the limit:
 * `readFile` then plain `JSON.parse` of the same files, one after the other. Both read from the page cache.
 * The scan that finds the files is the scheduler's and is done once, outside the rounds. One uncounted round
 * of each first (it compiles both paths and fills the page cache), then rounds alternate and the median round
 * of each counts, so other load on the machine skews both alike and one lucky or unlucky round decides
 * nothing. The Gather step is the package as it ships (the `tsc` build, see `bundle.ts`), not the sources
 * through the benchmark's TypeScript loader, which wraps every closure it creates with a naming helper.
 *
 * Most of a round of either side is waiting on file system round trips (open, read, stat, close), which the
 * Gather step overlaps with its parsing by fetching the next files ahead; the CPU time of each side is shown
 * beside the figure, so what the digest itself costs is in view too.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type * as Gather from '../../src/consolidation/gather/gather.js';
import type * as Transcripts from '../../src/transcripts/index.js';
import { builtFile } from '../bundle.js';
import type { Figure } from '../report.js';
import { benchConfig, makeTempRoot, workloadSpace } from '../setup.js';
import { DEFAULT_WORKLOAD, writeWorkload, type WorkloadOptions } from '../workload.js';

export interface DigestThroughputOptions {
  readonly sessions: number;
  readonly rounds: number;
  readonly log: (line: string) => void;
}

interface Throughput {
  readonly megabytes: number;
  /** Median round of each side, and every counted round (ms). */
  readonly parseMs: number;
  readonly digestMs: number;
  readonly parseRounds: readonly number[];
  readonly digestRounds: readonly number[];
  /** Median CPU time (user + system) of a round of each side (ms). */
  readonly parseCpuMs: number;
  readonly digestCpuMs: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The functions measured, from the package as it ships. */
interface Built {
  readonly gatherSessions: typeof Gather.gatherSessions;
  readonly scanSessions: typeof Transcripts.scanSessions;
}

/** A ledger that knows no session: every file is new. */
const EMPTY_LEDGER = { get: () => undefined, getByFile: () => undefined };

/** Runs `round` and returns its wall-clock and CPU time (ms). */
async function timed(round: () => Promise<void>): Promise<{ ms: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await round();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000 };
}

async function measureKind(
  kind: WorkloadOptions['kind'],
  options: DigestThroughputOptions,
  { gatherSessions, scanSessions }: Built,
): Promise<Throughput> {
  const root = await makeTempRoot(`digest-${kind}`);
  try {
    const generated = await writeWorkload(root.path, {
      ...DEFAULT_WORKLOAD,
      sessionsPerSpace: options.sessions,
      kind,
    });
    const space = workloadSpace(root.path, 0);
    const files = generated.map((session) => `${session.id}.json`);
    const bytes = generated.reduce((sum, session) => sum + Buffer.byteLength(session.json), 0);
    const config = benchConfig(root.path, [space]);
    // Calls enough to carry every file: the figure is a run that reads them all.
    const limits = { ...config.limits, maxCallsPerRun: 10_000, maxSessionBytes: bytes };
    const scan = await scanSessions({
      space,
      ledger: EMPTY_LEDGER,
      now: new Date(Date.now() + 24 * 3_600_000),
      quietMinutes: config.gates.quietMinutes,
      maxBytes: limits.maxSessionBytes,
    });
    const parseRound = async (): Promise<void> => {
      for (const file of files) JSON.parse(await readFile(join(space.sessionsDir, file), 'utf8'));
    };
    let gathered: Awaited<ReturnType<typeof gatherSessions>> | undefined;
    const gatherRound = async (): Promise<void> => {
      gathered = await gatherSessions(scan, {
        ledger: EMPTY_LEDGER,
        limits,
        memoryDir: space.memoryDir,
        maxOutputTokens: config.model.maxOutputTokens,
        onProgress: () => undefined,
      });
    };
    await parseRound();
    await gatherRound();
    const parse: { ms: number; cpuMs: number }[] = [];
    const gather: { ms: number; cpuMs: number }[] = [];
    for (let round = 0; round < options.rounds; round += 1) {
      parse.push(await timed(parseRound));
      gather.push(await timed(gatherRound));
    }
    if (gathered?.sessions.length !== files.length) {
      throw new Error(
        `the Gather step read ${gathered?.sessions.length ?? 0} of ${files.length} sessions ` +
          `(problems: ${JSON.stringify(gathered?.problems ?? [])})`,
      );
    }
    if (gathered.batches.length === 0) throw new Error('the digests are empty');
    return {
      megabytes: bytes / 1e6,
      parseMs: median(parse.map((round) => round.ms)),
      digestMs: median(gather.map((round) => round.ms)),
      parseRounds: parse.map((round) => round.ms),
      digestRounds: gather.map((round) => round.ms),
      parseCpuMs: median(parse.map((round) => round.cpuMs)),
      digestCpuMs: median(gather.map((round) => round.cpuMs)),
    };
  } finally {
    await root.remove();
  }
}

export async function measureDigestThroughput(options: DigestThroughputOptions): Promise<Figure[]> {
  const figures: Figure[] = [];
  const built: Built = {
    gatherSessions: ((await import(await builtFile('src/consolidation/gather/gather.js'))) as typeof Gather)
      .gatherSessions,
    scanSessions: ((await import(await builtFile('src/transcripts/index.js'))) as typeof Transcripts)
      .scanSessions,
  };
  for (const kind of ['agent', 'dialogue'] as const) {
    options.log(`  ${kind} transcripts`);
    const result = await measureKind(kind, options, built);
    const digestRate = result.megabytes / (result.digestMs / 1000);
    const parseRate = result.megabytes / (result.parseMs / 1000);
    figures.push({
      key: `digest-throughput-${kind}`,
      name: `Digest throughput, ${kind} transcripts (${options.sessions} files, ${result.megabytes.toFixed(1)} MB)`,
      value: digestRate,
      unit: 'MB/s',
      target: '≥ 0.5 × JSON.parse',
      ratio: digestRate / parseRate,
      ratioOf: '× JSON.parse',
      met: digestRate / parseRate >= 0.5,
      details: {
        'readFile + JSON.parse (MB/s, median round)': parseRate,
        'Gather: read + parse + digest + plan (MB/s, median round)': digestRate,
        'readFile + JSON.parse rounds (ms)': result.parseRounds.map((ms) => Math.round(ms * 10) / 10),
        'Gather rounds (ms)': result.digestRounds.map((ms) => Math.round(ms * 10) / 10),
        'CPU of a round, readFile + JSON.parse (ms, median)': Math.round(result.parseCpuMs * 10) / 10,
        'CPU of a round, Gather (ms, median)': Math.round(result.digestCpuMs * 10) / 10,
      },
    });
  }
  return figures;
}
