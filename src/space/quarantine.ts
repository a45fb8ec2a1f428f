/**
 * Quarantine (`.dreamd/quarantine.md`): candidate facts held back for a person because they read like an
 * instruction to the agent or carry a secret. Human-readable, append-only; nothing here reaches memory.
 * Callers redact secrets before quarantining: this file is plain text on disk.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { QUARANTINE_FILE, readTextIfExists } from './paths.js';
import { stripInvisibleControls } from '../memory/visible-text.js';

export interface QuarantineEntry {
  readonly title: string;
  readonly text: string;
  /** Why it was held back, e.g. "reads as an instruction to the agent". */
  readonly reason: string;
  readonly session: string;
  /** `YYYY-MM-DD`. */
  readonly date: string;
  readonly runId?: string | undefined;
}

const HEADER =
  '# Quarantine\n\n' +
  'Candidate facts dreamd held back for a person to review: they read like instructions to the agent or carry a secret.\n' +
  'Nothing here reaches memory. To keep one, write it into a topic file by hand; to dismiss it, delete it here.\n';

function quote(text: string): string {
  return text
    .replace(/\r\n/g, '\n')
    .trim()
    .split('\n')
    .map((line) => (line === '' ? '>' : `> ${line}`))
    .join('\n');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The quarantine file's content after appending these entries (pure). */
export function renderQuarantine(existing: string | null, entries: readonly QuarantineEntry[]): string {
  let out = existing ?? HEADER;
  for (const entry of entries) {
    if (!out.endsWith('\n')) out += '\n';
    out +=
      `\n## ${oneLine(entry.date)} · ${oneLine(entry.title)}\n` +
      `- Reason: ${oneLine(entry.reason)}\n` +
      `- Session: ${oneLine(entry.session)}\n` +
      (entry.runId ? `- Run: ${oneLine(entry.runId)}\n` : '') +
      `\n${quote(entry.text)}\n`;
  }
  return out;
}

/** Append entries to `.dreamd/quarantine.md` (temp file and rename). Use `renderQuarantine` inside a run's transaction instead. */
export async function appendQuarantine(
  memoryDir: string,
  entries: readonly QuarantineEntry[],
): Promise<void> {
  if (entries.length === 0) return;
  const file = path.join(memoryDir, QUARANTINE_FILE);
  const existing = await readTextIfExists(file);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, stripInvisibleControls(renderQuarantine(existing, entries)), { fsync: true });
}
