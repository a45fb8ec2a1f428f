/**
 * How long `dreamd --help` and `dreamd <command> --help` take, wall time of a fresh process, for every command
 * of the table: in this checkout (`node bin/dreamd.js`, the compiled source in .cache/) and, in full mode, in a
 * copy installed the way a user installs it (`npm pack`, then `npm install` of the tarball in an empty folder,
 * dependencies from npm's cache; `node_modules/dreamd/bin/dreamd.js`, which runs dist/). Rounds go over every
 * command in turn, so load on the machine falls on each alike; each command's median is reported, and the
 * figure is the slowest command's median, beside a Node process that does nothing (what the machine's load
 * makes of any start). The target, 300 ms, is what a help may take before it feels slow.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { entryName } from '../../src/cli/program.js';
import { COMMANDS } from '../../src/cli/run-cli.js';
import type { Figure } from '../report.js';
import { median } from '../stats.js';

const run = promisify(execFile);
const REPOSITORY = join(import.meta.dirname, '..', '..');
const TARGET_MS = 300;
/** The key of the bare Node process's median among a figure's details. */
const BARE_NODE = 'node -e "" (no dreamd)';

/** The command lines timed: dreamd itself, then each command of the table. */
const LINES: readonly string[][] = [[], ...COMMANDS.map((entry) => [entryName(entry)])];

/** Each line's median wall time (ms) of `rounds` runs of `node <bin> <line> --help`, keyed `dreamd <line>`. */
async function helpMedians(bin: string, rounds: number): Promise<Record<string, number>> {
  const samples = new Map<string, number[]>(LINES.map((line) => [line.join(' '), []]));
  const bare: number[] = [];
  // One run first, untimed: a checkout compiles what changed since its last start.
  await run(process.execPath, [bin, '--help']);
  for (let round = 0; round < rounds; round += 1) {
    for (const line of LINES) {
      const started = performance.now();
      await run(process.execPath, [bin, ...line, '--help'], { cwd: tmpdir() });
      samples.get(line.join(' '))!.push(performance.now() - started);
    }
    // A Node process that does nothing, in the same rounds: the floor under every help on this machine now.
    const started = performance.now();
    await run(process.execPath, ['-e', '']);
    bare.push(performance.now() - started);
  }
  return {
    ...Object.fromEntries(
      [...samples].map(([line, times]) => [`dreamd ${line}${line === '' ? '' : ' '}--help`, median(times)]),
    ),
    [BARE_NODE]: median(bare),
  };
}

/** The executable of dreamd packed and installed in an empty folder, as a user gets it. */
async function installedBin(): Promise<string> {
  const destination = mkdtempSync(join(tmpdir(), 'dreamd-bench-pack-'));
  // prepack builds dist/ first.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', destination], {
    cwd: REPOSITORY,
    maxBuffer: 64 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string }[];
  const project = mkdtempSync(join(tmpdir(), 'dreamd-bench-install-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'uses-dreamd', private: true }));
  await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', join(destination, packed!.filename)],
    { cwd: project, maxBuffer: 64 * 1024 * 1024 },
  );
  return join(project, 'node_modules', 'dreamd', 'bin', 'dreamd.js');
}

function helpFigure(key: string, where: string, medians: Record<string, number>, rounds: number): Figure {
  const [slowest, value] = Object.entries(medians).reduce((worst, entry) =>
    entry[1] > worst[1] ? entry : worst,
  );
  return {
    key,
    name: `--help of every command, ${where} (slowest command's median)`,
    value,
    unit: 'ms',
    target: `≤ ${TARGET_MS} ms`,
    ratio: value / TARGET_MS,
    ratioOf: '× target',
    met: value <= TARGET_MS,
    details: { slowest, rounds, ...medians },
  };
}

export async function measureCliHelp(
  options: { rounds: number; installed: boolean },
  log: (line: string) => void,
): Promise<Figure[]> {
  const checkout = await helpMedians(join(REPOSITORY, 'bin', 'dreamd.js'), options.rounds);
  const figures = [helpFigure('cli-help-checkout', 'in a checkout', checkout, options.rounds)];
  log(
    `  checkout: ${Object.entries(checkout)
      .map(([line, ms]) => `${line} ${ms.toFixed(0)} ms`)
      .join(', ')}`,
  );
  if (options.installed) {
    const installed = await helpMedians(await installedBin(), options.rounds);
    figures.push(
      helpFigure('cli-help-installed', 'installed from the packed tarball', installed, options.rounds),
    );
    log(
      `  installed: ${Object.entries(installed)
        .map(([line, ms]) => `${line} ${ms.toFixed(0)} ms`)
        .join(', ')}`,
    );
  }
  return figures;
}
