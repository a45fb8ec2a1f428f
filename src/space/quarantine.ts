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

const ENTRY_HEAD = /^## (\S+) · (.*)$/u;
const FIELD = /^- (Reason|Session|Run): (.*)$/u;

/**
 * The entries of a quarantine file as {@link renderQuarantine} writes them (pure): what was held back before,
 * so a run can hold a fact said again in other words with it. A section a person edited out of shape is read
 * as far as it goes; one without a title, a reason or text is left out.
 */
export function parseQuarantine(text: string | null): QuarantineEntry[] {
  if (text === null) return [];
  const entries: QuarantineEntry[] = [];
  for (const section of text.replace(/\r\n/g, '\n').split(/\n(?=## )/u)) {
    const lines = section.split('\n');
    const head = ENTRY_HEAD.exec(lines[0] ?? '');
    if (head === null) continue;
    const fields = new Map<string, string>();
    const quoted: string[] = [];
    for (const line of lines.slice(1)) {
      const field = FIELD.exec(line);
      if (field !== null) fields.set(field[1] as string, field[2] as string);
      else if (line === '>' || line.startsWith('> ')) quoted.push(line.slice(2));
    }
    const reason = fields.get('Reason');
    const body = quoted.join('\n').trim();
    if (reason === undefined || body === '' || (head[2] ?? '').trim() === '') continue;
    entries.push({
      title: (head[2] as string).trim(),
      text: body,
      reason,
      session: fields.get('Session') ?? '',
      date: head[1] as string,
      runId: fields.get('Run'),
    });
  }
  return entries;
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
