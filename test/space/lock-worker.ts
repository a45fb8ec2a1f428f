// Child process for the lock tests. Prints "ready", waits for the start file, tries to take the lock, prints
// "won" or the error name, then holds on (so a winner's pid stays alive) until the end file appears.
import { existsSync } from 'node:fs';
import { acquireLock } from '../../src/space/lock.js';
import { eventually } from '../support/eventually.js';

const [memoryDir = '', startFile = '', endFile = '', staleMs = '60000'] = process.argv.slice(2);
const waitFor = (file: string): Promise<void> => eventually(() => existsSync(file), 60_000, file, 2);
process.stdout.write('ready\n');
await waitFor(startFile);
try {
  await acquireLock(memoryDir, { owner: `child ${process.pid}`, staleMs: Number(staleMs) });
  process.stdout.write('won\n');
} catch (error) {
  process.stdout.write(`${error instanceof Error ? error.name : 'error'}\n`);
}
await waitFor(endFile);
