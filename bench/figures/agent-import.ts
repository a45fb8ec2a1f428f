/**
 * The agent kit's import (`import … from 'dreamd/agent'`): wall time and resident memory of a fresh Node process
 * that imports it, paired in the same run with a process that imports `@anthropic-ai/sdk` alone (what any agent
 * that talks to Claude loads anyway) and a bare Node process. The kit is built the way the package ships it
 * (`tsc`, dependencies loaded from node_modules, no TypeScript loader; see bench/bundle.ts). Rounds alternate the three imports so
 * that load on the machine falls on each alike; the medians are reported.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { builtFile } from '../bundle.js';
import type { Figure } from '../report.js';
import { median } from '../stats.js';

const run = promisify(execFile);
const REPOSITORY = join(import.meta.dirname, '..', '..');

interface ImportCost {
  readonly ms: number;
  readonly rssMb: number;
}

async function importCost(specifier: string | undefined): Promise<ImportCost> {
  const body =
    specifier === undefined
      ? 'const started = performance.now();'
      : `const started = performance.now(); await import(${JSON.stringify(specifier)});`;
  const { stdout } = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `${body} console.log(JSON.stringify({ ms: performance.now() - started, rssMb: process.memoryUsage().rss / 1e6 }));`,
    ],
    { cwd: REPOSITORY },
  );
  return JSON.parse(stdout) as ImportCost;
}

export async function measureAgentImport(rounds: number, log: (line: string) => void): Promise<Figure[]> {
  const kit = await builtFile('src/agent-kit.js');
  const kitUrl = new URL(`file://${kit}`).href;
  const samples = { kit: [] as ImportCost[], sdk: [] as ImportCost[], bare: [] as ImportCost[] };
  for (let round = 0; round < rounds; round += 1) {
    samples.kit.push(await importCost(kitUrl));
    samples.sdk.push(await importCost('@anthropic-ai/sdk'));
    samples.bare.push(await importCost(undefined));
  }
  const ms = (list: ImportCost[]) => median(list.map((sample) => sample.ms));
  const rss = (list: ImportCost[]) => median(list.map((sample) => sample.rssMb));
  const kitMs = ms(samples.kit);
  const sdkMs = ms(samples.sdk);
  const kitRss = rss(samples.kit);
  const bareRss = rss(samples.bare);
  const sdkRss = rss(samples.sdk);
  log(
    `  agent kit ${kitMs.toFixed(0)} ms, ${kitRss.toFixed(1)} MB; @anthropic-ai/sdk alone ${sdkMs.toFixed(0)} ms, ` +
      `${sdkRss.toFixed(1)} MB; bare Node ${bareRss.toFixed(1)} MB (medians of ${rounds})`,
  );
  return [
    {
      key: 'agent-import-time',
      name: "Agent kit import ('dreamd/agent'), time",
      value: kitMs,
      unit: 'ms',
      target: '≤ 1.5 × importing @anthropic-ai/sdk alone',
      ratio: kitMs / sdkMs,
      ratioOf: '× @anthropic-ai/sdk',
      met: kitMs <= 1.5 * sdkMs,
      details: { '@anthropic-ai/sdk alone (ms)': sdkMs, rounds },
    },
    {
      key: 'agent-import-rss',
      name: "Agent kit import ('dreamd/agent'), resident memory",
      value: kitRss,
      unit: 'MB',
      target: '≤ 60 MB',
      ratio: kitRss / sdkRss,
      ratioOf: '× @anthropic-ai/sdk',
      met: kitRss <= 60,
      details: {
        '@anthropic-ai/sdk alone (MB)': sdkRss,
        'bare Node (MB)': bareRss,
        'above bare Node (MB)': kitRss - bareRss,
        rounds,
      },
    },
  ];
}
