/**
 * A consolidation run in its own process, for the crash and concurrency cases. The test owns this script: the
 * crash reaches the pipeline through `createConsolidator`'s `faultInjection` callback, never through anything in
 * src/ that knows it is under test.
 *
 * Usage: node --import tsx run-child.ts <config path> <space id> <mode> [step] [release file]
 *   kill <step>                SIGKILL this process when the run reaches <step> (a real kill -9: no finally runs)
 *   hold <step> <release file> at <step>, print "holding" and block until <release file> exists
 *   run                        run to the end
 * Prints one line `result <json>`: the run summary, or `{ "error": name, "message": … }`.
 */
import { existsSync, writeSync } from 'node:fs';
import { loadConfig } from '../../../src/config/load.js';
import type { RunStep } from '../../../src/consolidation/run.js';
import { consolidatorFor, MANUAL } from './harness.js';

const [configPath, spaceId, mode, step, releaseFile] = process.argv.slice(2);
if (configPath === undefined || spaceId === undefined || mode === undefined) {
  throw new Error('usage: run-child.ts <config path> <space id> kill|hold|run [step] [release file]');
}
const config = loadConfig({ path: configPath, env: {} });
const space = config.spaces.find((candidate) => candidate.id === spaceId);
if (space === undefined) throw new Error(`no space ${spaceId} in ${configPath}`);

/** Blocks the whole process (the hook is synchronous) until the file appears; checks every 20 ms. */
function blockUntilExists(file: string): void {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  while (!existsSync(file)) Atomics.wait(cell, 0, 0, 20);
}

const faultInjection = (reached: RunStep): void => {
  if (reached !== step) return;
  if (mode === 'kill') process.kill(process.pid, 'SIGKILL');
  if (mode === 'hold' && releaseFile !== undefined) {
    writeSync(1, 'holding\n');
    blockUntilExists(releaseFile);
  }
};

const consolidate = consolidatorFor(config, { faultInjection, owner: `reliability child ${process.pid}` });
consolidate(space, MANUAL).then(
  (summary) => process.stdout.write(`result ${JSON.stringify(summary)}\n`),
  (error: unknown) => {
    const failure =
      error instanceof Error ? { error: error.name, message: error.message } : { error: String(error) };
    process.stdout.write(`result ${JSON.stringify(failure)}\n`);
    process.exitCode = 1;
  },
);
