/**
 * What the project already tells its agents: the `CLAUDE.md` and `AGENTS.md` of the working directory a
 * session's transcript names (Claude Code records `cwd` on every line). Memory that repeats them wastes every
 * session's context, so the extraction call is shown them as already known, and a candidate fact they already
 * state is not kept (counted in the run summary). They are read, never edited.
 */
import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import { tokenize } from '../../search/bm25.js';
import type { ExtractedFact } from './extraction.js';
import { ALREADY_STATED_SHARE, MAX_DOC_BYTES, MAX_SHOWN_CHARS, MIN_STATEMENT_CHARS } from './tunables.js';

/** The files read in each working directory, in order. */
export const PROJECT_DOC_NAMES = ['CLAUDE.md', '.claude/CLAUDE.md', 'AGENTS.md'] as const;

export interface ProjectDoc {
  /** Absolute path. */
  readonly file: string;
  /** Its statements: the lines that say something (headings, fences and blank lines left out). */
  readonly statements: readonly string[];
}

/** The statements of an instruction file: bullet and paragraph lines, outside code fences. */
export function docStatements(text: string): string[] {
  const statements: string[] = [];
  let fenced = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('```') || line.startsWith('~~~')) {
      fenced = !fenced;
      continue;
    }
    if (
      fenced ||
      line === '' ||
      line.startsWith('#') ||
      line.startsWith('<!--') ||
      /^[-*_]{3,}$/.test(line)
    ) {
      continue;
    }
    const statement = line.replace(/^(?:[-*+]|\d+[.)])\s+/, '').trim();
    if (statement.length >= MIN_STATEMENT_CHARS) statements.push(statement);
  }
  return statements;
}

/** The instruction files of these working directories that exist and are plain files (links not followed). */
export async function readProjectDocs(directories: readonly string[]): Promise<ProjectDoc[]> {
  const docs: ProjectDoc[] = [];
  for (const directory of [...new Set(directories)].sort()) {
    if (!path.isAbsolute(directory)) continue;
    for (const name of PROJECT_DOC_NAMES) {
      const file = path.join(directory, name);
      try {
        const info = await lstat(file);
        if (!info.isFile() || info.size > MAX_DOC_BYTES) continue;
        docs.push({ file, statements: docStatements(await readFile(file, 'utf8')) });
      } catch {
        // Absent or unreadable: nothing the project says there.
      }
    }
  }
  return docs;
}

/** The statements to show an extraction call, within {@link MAX_SHOWN_CHARS}. */
export function shownStatements(docs: readonly ProjectDoc[]): string[] {
  const shown: string[] = [];
  let chars = 0;
  for (const statement of docs.flatMap((doc) => doc.statements)) {
    if (chars + statement.length + 3 > MAX_SHOWN_CHARS) break;
    shown.push(statement);
    chars += statement.length + 3;
  }
  return shown;
}

/** Candidates a project file already states, and the rest. */
export function splitAlreadyStated(
  candidates: readonly ExtractedFact[],
  docs: readonly ProjectDoc[],
): { kept: ExtractedFact[]; stated: { candidate: ExtractedFact; file: string }[] } {
  const statements = docs.flatMap((doc) =>
    doc.statements.map((statement) => ({ file: doc.file, words: new Set(tokenize(statement)) })),
  );
  const kept: ExtractedFact[] = [];
  const stated: { candidate: ExtractedFact; file: string }[] = [];
  for (const candidate of candidates) {
    const words = new Set(tokenize(`${candidate.title} ${candidate.body}`));
    const match =
      words.size === 0
        ? undefined
        : statements.find((statement) => {
            let shared = 0;
            for (const word of words) if (statement.words.has(word)) shared += 1;
            return shared / words.size >= ALREADY_STATED_SHARE;
          });
    if (match === undefined) kept.push(candidate);
    else stated.push({ candidate, file: match.file });
  }
  return { kept, stated };
}
