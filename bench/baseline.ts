/**
 * The naive consolidation of the course material (shared/reference/001): take the last five session files,
 * re-read them whole, cut every message to 500 characters, and send all of it in one model call.
 * Measured side by side with dreamd in the same benchmark run.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';

/** Characters the baseline keeps of each message. */
export const BASELINE_MESSAGE_CHARS = 500;

export interface BaselinePrompt {
  readonly text: string;
  readonly sessions: readonly string[];
  /** Calls the baseline makes for this run: always one. */
  readonly calls: 1;
}

function messageText(message: unknown): string {
  if (typeof message !== 'object' || message === null) return '';
  const { role, content } = message as { role?: unknown; content?: unknown };
  const body = typeof content === 'string' ? content : JSON.stringify(content ?? '');
  return `${String(role)}: ${body.slice(0, BASELINE_MESSAGE_CHARS)}`;
}

/** Builds the baseline's single prompt from the sorted session files (the last five are used). */
export async function buildBaselinePrompt(sortedFiles: readonly string[]): Promise<BaselinePrompt> {
  const recent = sortedFiles.slice(-5);
  const parts: string[] = [
    'Extract the important facts, decisions, files touched and errors from these sessions.',
  ];
  for (const file of recent) {
    const data = JSON.parse(await readFile(file, 'utf8')) as { messages?: unknown[] };
    parts.push(`## ${basename(file)}`);
    for (const message of data.messages ?? []) parts.push(messageText(message));
  }
  return { text: parts.join('\n'), sessions: recent.map((file) => basename(file)), calls: 1 };
}
