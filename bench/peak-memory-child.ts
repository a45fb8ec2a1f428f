/**
 * Child process of figure 7: reads one transcript (and digests it) and prints its peak resident memory, so
 * the figure is this process's high-water mark and nothing else's. Usage:
 * `tsx bench/peak-memory-child.ts <sessionsDir> <file> <native|claude-code>`.
 */
import { readFileSync } from 'node:fs';
import { digestSession } from '../src/digest/index.js';
import { readSessionFile } from '../src/transcripts/index.js';

/** Peak resident set in MB: VmHWM from /proc where there is one, else the kernel's maxrss. */
function peakMb(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match?.[1] !== undefined) return Number(match[1]) / 1024;
  } catch {
    // not Linux: fall through
  }
  return process.resourceUsage().maxRSS / 1024;
}

const [sessionsDir, file, format] = process.argv.slice(2);
if (sessionsDir === undefined || file === undefined || (format !== 'native' && format !== 'claude-code')) {
  console.error('usage: peak-memory-child.ts <sessionsDir> <file> <native|claude-code>');
  process.exit(2);
}
const before = peakMb();
const { session, size } = await readSessionFile(file, {
  format,
  sessionsDir,
  maxBytes: Number.MAX_SAFE_INTEGER,
});
const digest = digestSession(session);
console.log(
  JSON.stringify({
    beforeMb: before,
    peakMb: peakMb(),
    bytes: size,
    messages: session.messageCount,
    digestChars: digest.chars,
  }),
);
