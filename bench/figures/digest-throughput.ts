/**
 * Figure 2: digest throughput, MB of transcript a second, read + parse + digest (`readSessionFile` then
 * `digestSession`, the Gather step's work for each file), against the limit: `readFile` then plain `JSON.parse` of the same files. Both read from
 * the page cache; rounds alternate and the best round of each counts, so other load on the machine skews
 * both alike.
 */
import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { digestSession } from '../../src/digest/index.js';
import { readSessionFile } from '../../src/transcripts/index.js';
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
  readonly parseMs: number;
  readonly digestMs: number;
}

async function measureKind(kind: WorkloadOptions['kind'], options: DigestThroughputOptions): Promise<Throughput> {
  const root = await makeTempRoot(`digest-${kind}`);
  try {
    const generated = await writeWorkload(root.path, { ...DEFAULT_WORKLOAD, sessionsPerSpace: options.sessions, kind });
    const { sessionsDir } = workloadSpace(root.path, 0);
    const files = generated.map((session) => `${session.id}.json`);
    const bytes = generated.reduce((sum, session) => sum + Buffer.byteLength(session.json), 0);
    // Resolved once, as `readSettledSessions` does for the files of one scan.
    const realSessionsDir = await realpath(sessionsDir);
    let parseMs = Infinity;
    let digestMs = Infinity;
    let digestedChars = 0;
    for (let round = 0; round < options.rounds; round += 1) {
      let started = performance.now();
      for (const file of files) JSON.parse(await readFile(join(sessionsDir, file), 'utf8'));
      parseMs = Math.min(parseMs, performance.now() - started);
      started = performance.now();
      digestedChars = 0;
      for (const file of files) {
        const { session } = await readSessionFile(file, { format: 'native', sessionsDir, realSessionsDir, maxBytes: bytes });
        digestedChars += digestSession(session).chars;
      }
      digestMs = Math.min(digestMs, performance.now() - started);
    }
    if (digestedChars === 0) throw new Error('the digests are empty');
    return { megabytes: bytes / 1e6, parseMs, digestMs };
  } finally {
    await root.remove();
  }
}

export async function measureDigestThroughput(options: DigestThroughputOptions): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const kind of ['agent', 'dialogue'] as const) {
    options.log(`  ${kind} transcripts`);
    const result = await measureKind(kind, options);
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
      details: { 'readFile + JSON.parse (MB/s)': parseRate, 'read + parse + digest (MB/s)': digestRate },
    });
  }
  return figures;
}
