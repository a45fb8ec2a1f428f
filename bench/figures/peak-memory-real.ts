/**
 * Peak RSS of one real `dreamd consolidate --force` process, built as the package ships (`tsc`, its
 * dependencies loaded from node_modules as an installed dreamd loads them, no TypeScript loader; see
 * bench/bundle.ts), on one big transcript: native JSON and the same session as Claude Code JSONL. The model is the fake
 * Anthropic server in this process (no facts), so what is measured is read, digest, every extraction request,
 * reconcile and write. The peak is the kernel's maximum resident set of the child (`/usr/bin/time -f %M`).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startFakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { builtFile } from '../bundle.js';
import type { Figure } from '../report.js';
import { makeTempRoot } from '../setup.js';
import { DEFAULT_WORKLOAD, generateSession, toClaudeCodeJsonl } from '../workload.js';

const run = promisify(execFile);
const BYTES_PER_MESSAGE = 1_100;
const TIME = '/usr/bin/time';

export async function measureRealPeakMemory(
  megabytes: number,
  log: (line: string) => void,
): Promise<Figure[]> {
  if (!existsSync(TIME))
    throw new Error(`${TIME} is missing (apt-get install time): the real-process peak needs it`);
  const root = await makeTempRoot('real-peak');
  const server = await startFakeAnthropicServer();
  server.setDefault({ json: { facts: [] } });
  try {
    const cli = await builtFile('src/cli/main.js');
    const generated = generateSession(
      { ...DEFAULT_WORKLOAD, messagesPerSession: Math.ceil((megabytes * 1e6) / BYTES_PER_MESSAGE) },
      0,
      0,
    );
    const figures: Figure[] = [];
    for (const format of ['native', 'claude-code'] as const) {
      const text = format === 'native' ? generated.json : toClaudeCodeJsonl(generated);
      const name = format === 'native' ? 'big.json' : 'big.jsonl';
      const sessions = join(root.path, `sessions-${format}`);
      await mkdir(sessions, { recursive: true });
      await writeFile(join(sessions, name), text);
      const dayAgo = new Date(Date.now() - 86_400_000);
      await utimes(join(sessions, name), dayAgo, dayAgo);
      log(`  dreamd consolidate, ${format} ${(Buffer.byteLength(text) / 1e6).toFixed(0)} MB`);
      const before = server.requests.length;
      const peak = await peakOfExisting(cli, root.path, format, sessions, server.url);
      figures.push({
        key: `peak-memory-real-${format}`,
        name: `Peak RSS of a real built \`dreamd consolidate\`, ${(Buffer.byteLength(text) / 1e6).toFixed(0)} MB ${format === 'native' ? 'native JSON' : 'Claude Code JSONL'}`,
        value: peak,
        unit: 'MB',
        target: '≤ 150 MB',
        ratio: peak / 150,
        ratioOf: '× limit',
        met: peak <= 150,
        details: { 'model calls': server.requests.length - before },
      });
    }
    return figures;
  } finally {
    await server.close();
    await root.remove();
  }
}

async function peakOfExisting(
  cli: string,
  root: string,
  format: 'native' | 'claude-code',
  sessions: string,
  modelUrl: string,
): Promise<number> {
  const memory = join(root, `memory-${format}`);
  await mkdir(memory, { recursive: true });
  const config = join(root, `dreamd-${format}.json`);
  await writeFile(config, JSON.stringify({ spaces: [{ id: 'big', sessions, memory, format }] }));
  // Exit 3 is a run that completed with part of the session left for the next run (the call budget): a
  // 50 MB session needs several runs, and the first is the one measured. Any other failure is an error.
  const { stderr } = await run(
    TIME,
    ['-f', '%M', process.execPath, cli, 'consolidate', 'big', '--force', '--config', config],
    {
      env: {
        ...process.env,
        ANTHROPIC_API_KEY: 'sk-ant-bench-key',
        DREAMD_MODEL_BASE_URL: modelUrl,
        DREAMD_MODEL_MAX_RETRIES: '0',
      },
      maxBuffer: 16 * 1024 * 1024,
    },
  ).catch((error: unknown) => {
    const failed = error as { code?: unknown; stderr?: unknown };
    if (failed.code === 3 && typeof failed.stderr === 'string') return { stderr: failed.stderr };
    throw error;
  });
  const kilobytes = Number(stderr.trim().split('\n').at(-1));
  if (!Number.isFinite(kilobytes)) throw new Error(`no peak RSS from ${TIME}: ${stderr.slice(-500)}`);
  return kilobytes / 1024;
}
