/**
 * Figure 2: digest throughput, MB of transcript a second, read + parse + digest (`readSessionFile` then
 * `digestSession`, the Gather step's work for each file), against the limit: `readFile` then plain
 * `JSON.parse` of the same files. Both read from the page cache. One uncounted round of each first (it
 * compiles both paths and fills the page cache), then rounds alternate and the median round of each counts,
 * so other load on the machine skews both alike and one lucky or unlucky round decides nothing. The digest and
 * the reader are the package as it ships (the `tsc` build, see `bundle.ts`), not the sources through the
 * benchmark's TypeScript loader, which wraps every closure it creates with a naming helper.
 */
import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type * as Digest from '../../src/digest/index.js';
import type * as Transcripts from '../../src/transcripts/index.js';
import { builtFile } from '../bundle.js';
import type { Figure } from '../report.js';
import { makeTempRoot, workloadSpace } from '../setup.js';
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
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The two functions measured, from the package as it ships. */
interface Built {
  readonly digestSession: typeof Digest.digestSession;
  readonly readSessionFile: typeof Transcripts.readSessionFile;
}

async function measureKind(
  kind: WorkloadOptions['kind'],
  options: DigestThroughputOptions,
  { digestSession, readSessionFile }: Built,
): Promise<Throughput> {
  const root = await makeTempRoot(`digest-${kind}`);
  try {
    const generated = await writeWorkload(root.path, {
      ...DEFAULT_WORKLOAD,
      sessionsPerSpace: options.sessions,
      kind,
    });
    const { sessionsDir } = workloadSpace(root.path, 0);
    const files = generated.map((session) => `${session.id}.json`);
    const bytes = generated.reduce((sum, session) => sum + Buffer.byteLength(session.json), 0);
    // Resolved once, as `readSettledSessions` does for the files of one scan.
    const realSessionsDir = await realpath(sessionsDir);
    const parseRound = async (): Promise<number> => {
      const started = performance.now();
      for (const file of files) JSON.parse(await readFile(join(sessionsDir, file), 'utf8'));
      return performance.now() - started;
    };
    let digestedChars = 0;
    const digestRound = async (): Promise<number> => {
      const started = performance.now();
      digestedChars = 0;
      for (const file of files) {
        const { session } = await readSessionFile(file, {
          format: 'native',
          sessionsDir,
          realSessionsDir,
          maxBytes: bytes,
        });
        digestedChars += digestSession(session).chars;
      }
      return performance.now() - started;
    };
    await parseRound();
    await digestRound();
    const parseRounds: number[] = [];
    const digestRounds: number[] = [];
    for (let round = 0; round < options.rounds; round += 1) {
      parseRounds.push(await parseRound());
      digestRounds.push(await digestRound());
    }
    if (digestedChars === 0) throw new Error('the digests are empty');
    return {
      megabytes: bytes / 1e6,
      parseMs: median(parseRounds),
      digestMs: median(digestRounds),
      parseRounds,
      digestRounds,
    };
  } finally {
    await root.remove();
  }
}

export async function measureDigestThroughput(options: DigestThroughputOptions): Promise<Figure[]> {
  const figures: Figure[] = [];
  const built: Built = {
    digestSession: ((await import(await builtFile('src/digest/index.js'))) as typeof Digest).digestSession,
    readSessionFile: ((await import(await builtFile('src/transcripts/index.js'))) as typeof Transcripts)
      .readSessionFile,
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
        'read + parse + digest (MB/s, median round)': digestRate,
        'readFile + JSON.parse rounds (ms)': result.parseRounds.map((ms) => Math.round(ms * 10) / 10),
        'read + parse + digest rounds (ms)': result.digestRounds.map((ms) => Math.round(ms * 10) / 10),
      },
    });
  }
  return figures;
}
