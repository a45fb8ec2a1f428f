/**
 * Figure 7: peak memory of a process that reads (and digests) one big transcript, measured in a child
 * process so nothing else is counted: a native JSON file and the same session as Claude Code JSONL, both
 * streamed (a native file over 8 MiB is parsed one message at a time; JSONL line by line), with the reader's
 * default read-time caps on each part. The peak is the whole process's (Node itself is about 45 MB), as an
 * operator would see it.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Figure } from '../report.js';
import { makeTempRoot } from '../setup.js';
import { DEFAULT_WORKLOAD, generateSession, toClaudeCodeJsonl } from '../workload.js';

const run = promisify(execFile);

/** Bytes of an agent-workload message on average (tool results of 4,000 characters), to size the file. */
const BYTES_PER_MESSAGE = 1_100;

interface ChildReport {
  readonly beforeMb: number;
  readonly peakMb: number;
  readonly bytes: number;
  readonly messages: number;
}

/**
 * The child as one plain JavaScript file, as a built dreamd runs: under tsx the process holds the
 * TypeScript loader and its compiler (about 45 MB more before a byte is read), which production does not.
 */
async function bundleChild(directory: string): Promise<string> {
  const { build } = await import('esbuild');
  const outfile = join(directory, 'peak-memory-child.mjs');
  await build({
    entryPoints: [join(import.meta.dirname, '..', 'peak-memory-child.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
    // CommonJS dependencies inside an ES module bundle need a `require`.
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
  });
  return outfile;
}

async function measureChild(
  child: string,
  sessionsDir: string,
  file: string,
  format: 'native' | 'claude-code',
): Promise<ChildReport> {
  const { stdout } = await run(process.execPath, [child, sessionsDir, file, format], {
    maxBuffer: 1024 * 1024,
  });
  return JSON.parse(stdout) as ChildReport;
}

export async function measurePeakMemory(megabytes: number, log: (line: string) => void): Promise<Figure[]> {
  const root = await makeTempRoot('memory');
  try {
    const sessionsDir = join(root.path, 'sessions');
    await mkdir(sessionsDir);
    const generated = generateSession(
      { ...DEFAULT_WORKLOAD, messagesPerSession: Math.ceil((megabytes * 1e6) / BYTES_PER_MESSAGE) },
      0,
      0,
    );
    await writeFile(join(sessionsDir, 'big.json'), generated.json);
    await writeFile(join(sessionsDir, 'big.jsonl'), toClaudeCodeJsonl(generated));
    log(`  native ${(generated.json.length / 1e6).toFixed(0)} MB`);
    const child = await bundleChild(root.path);
    const native = await measureChild(child, sessionsDir, 'big.json', 'native');
    log('  claude-code JSONL');
    const claudeCode = await measureChild(child, sessionsDir, 'big.jsonl', 'claude-code');
    const figure = (report: ChildReport, format: string): Figure => ({
      key: `peak-memory-${format}`,
      name: `Peak memory reading a ${(report.bytes / 1e6).toFixed(0)} MB transcript, ${format}`,
      value: report.peakMb,
      unit: 'MB',
      target: '≤ 150 MB',
      ratio: report.peakMb / 150,
      ratioOf: '× limit',
      met: report.peakMb <= 150,
      details: {
        'process before reading (MB)': report.beforeMb,
        'increase while reading (MB)': report.peakMb - report.beforeMb,
        messages: report.messages,
      },
    });
    return [figure(claudeCode, 'claude-code JSONL (streamed)'), figure(native, 'native JSON (streamed)')];
  } finally {
    await root.remove();
  }
}
