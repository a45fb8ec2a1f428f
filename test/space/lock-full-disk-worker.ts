// Child process for the lock tests, started with `ulimit -f 0` (no file may grow past 0 bytes, as on a full
// disk): tries to take the lock and prints the error code it got.
import { acquireLock } from '../../src/space/lock.js';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

// Without a handler the kernel's SIGXFSZ ends the process; with one, the write fails with EFBIG.
process.on('SIGXFSZ', () => undefined);
const [memoryDir = ''] = process.argv.slice(2);
await mkdir(path.join(memoryDir, '.dreamd'), { recursive: true });
try {
  await acquireLock(memoryDir, { owner: 'full disk', staleMs: 60_000 });
  process.stdout.write('won\n');
} catch (error) {
  process.stdout.write(`${(error as NodeJS.ErrnoException).code ?? 'no code'}\n`);
}
