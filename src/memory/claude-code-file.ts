/**
 * One memory file as Claude Code writes its own (pure): one fact per Markdown file, e.g. `feedback_testing.md`.
 *
 * Variants read (every one Claude Code has written):
 *   - recent: frontmatter `name`, `description`, `metadata: { type, modified }`;
 *   - older: frontmatter `name`, `description`, top-level `type`;
 *   - frontmatter that is not strict YAML (an unquoted `: ` or ` #` in a value, which Claude Code's own loader
 *     tolerates): read line by line as `key: value`, each value kept whole;
 *   - no frontmatter at all (free-form notes), and bodies with `[[links]]` to other memories.
 * The type comes from the frontmatter, else from a `<type>_` file-name prefix, else `project`. The body is
 * the rule, then `**Why:**` and `**How to apply:**` lines for feedback and project.
 */
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { derivedFactId } from './fact-id.js';
import { FACT_TYPES, factFromFile, type Fact, type FactOwner, type FactType } from './types.js';
import { splitContent } from './topic-entry.js';

const ClaudeCodeFrontmatter = z.looseObject({
  name: z.string().optional(),
  description: z.string().optional(),
  type: z.string().optional(),
  metadata: z.looseObject({ type: z.string().optional(), modified: z.unknown().optional() }).optional(),
});

/** Type used for a file that names none (a free-form note is most often about the work). */
const FALLBACK_TYPE: FactType = 'project';

export interface ParsedMemoryFile {
  readonly fact: Fact;
  /** Frontmatter `name`, for the duplicate-name check. */
  readonly name: string | undefined;
  /** Problems a person should know, with the fix; the file is still read. */
  readonly warnings: readonly string[];
}

function asType(value: string | undefined): FactType | undefined {
  return FACT_TYPES.find((type) => type === value?.trim().toLowerCase());
}

function typeFromName(relative: string): FactType | undefined {
  const base = relative.split('/').at(-1) ?? relative;
  return asType(/^([a-z]+)_/.exec(base)?.[1]);
}

function titleFromName(relative: string): string {
  const base = (relative.split('/').at(-1) ?? relative).replace(/\.md$/i, '');
  const words = base
    .replace(/^[a-z]+_/, '')
    .replace(/[_-]+/g, ' ')
    .trim();
  return words === '' ? base : words.charAt(0).toUpperCase() + words.slice(1);
}

function dateOf(value: unknown): string | undefined {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString().slice(0, 10);
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value)) return value.slice(0, 10);
  return undefined;
}

/** `[[other memory]]` links read as their text, so search and the hook see words. */
function plainLinks(text: string): string {
  return text.replace(
    /\[\[([^\]|]+)(?:\|([^\]]+))?\]\]/g,
    (_all, target: string, label: string | undefined) => label ?? target,
  );
}

/** Split `---\nyaml\n---\n` from the body; null data when there is no frontmatter. */
function splitFront(text: string): { yaml: string | null; body: string } {
  const match = /^---[ \t]*\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/.exec(text);
  if (match === null) return { yaml: null, body: text };
  return { yaml: match[1] ?? '', body: text.slice(match[0].length) };
}

/** A value as a person typed it: surrounding quotes of one kind taken off, nothing else. */
function unquote(value: string): string {
  const trimmed = value.trim();
  const quoted = /^(["'])([\s\S]*)\1$/.exec(trimmed);
  return quoted === null ? trimmed : (quoted[2] ?? '');
}

const KEY_LINE = /^([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(.*)|[ \t]*)$/;

/**
 * Frontmatter read line by line, for what is not strict YAML but is what people and Claude Code write: a
 * value with an unquoted `: ` or ` #` is kept whole (Claude Code's own loader tolerates both). Top-level
 * `key: value` lines, and `key: value` lines indented under a key with no value (`metadata:` and its `type`).
 * Returns the lines it could not read, so a file of free text between `---` lines is still reported.
 */
function parseFrontmatterLines(yaml: string): { data: Record<string, unknown>; unread: number } {
  const data: Record<string, unknown> = {};
  let parent: Record<string, unknown> | undefined;
  let unread = 0;
  for (const rawLine of yaml.split('\n')) {
    const line = rawLine.replace(/\r$/, '');
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    const indented = /^[ \t]/.test(line);
    const match = KEY_LINE.exec(line.trim());
    if (match === null) {
      unread += 1;
      continue;
    }
    const key = match[1] ?? '';
    const value = match[2];
    if (indented && parent !== undefined) {
      parent[key] = unquote(value ?? '');
    } else if (value === undefined || value.trim() === '') {
      parent = {};
      data[key] = parent;
    } else {
      parent = undefined;
      data[key] = unquote(value);
    }
  }
  return { data, unread };
}

/** Strict YAML first; what it cuts (` # …` read as a comment) or cannot read at all is read line by line. */
function parseFrontmatter(yaml: string): {
  data: unknown;
  byLine: Record<string, unknown>;
  problem: string | undefined;
} {
  const byLine = parseFrontmatterLines(yaml);
  let strict: unknown;
  try {
    strict = parseYaml(yaml) ?? {};
  } catch (error) {
    const detail = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
    const readable = byLine.unread === 0 && Object.keys(byLine.data).length > 0;
    return { data: byLine.data, byLine: byLine.data, problem: readable ? undefined : detail };
  }
  if (typeof strict !== 'object' || strict === null || Array.isArray(strict)) {
    const problem = byLine.unread > 0 ? 'its lines are not `key: value` pairs' : undefined;
    return { data: byLine.data, byLine: byLine.data, problem };
  }
  // A plain value holding ` #` loses its end to YAML's comment rule: the person's whole text is kept.
  const kept: Record<string, unknown> = { ...(strict as Record<string, unknown>) };
  for (const key of ['name', 'description'] as const) {
    const strictValue = kept[key];
    const lineValue = byLine.data[key];
    if (
      typeof strictValue === 'string' &&
      typeof lineValue === 'string' &&
      lineValue.length > strictValue.length &&
      lineValue.startsWith(strictValue) &&
      /^\s+#/.test(lineValue.slice(strictValue.length))
    ) {
      kept[key] = lineValue;
    }
  }
  return { data: kept, byLine: byLine.data, problem: undefined };
}

/** The frontmatter fields a memory file may carry, read tolerantly (see {@link parseMemoryFile}). */
export type MemoryFrontmatter = z.infer<typeof ClaudeCodeFrontmatter>;

/**
 * A Markdown file's frontmatter and body, read as tolerantly as Claude Code reads them: strict YAML, else
 * line by line. `problems` says what could not be read (the file is still read; the body is never lost).
 */
export function readFrontmatter(text: string): {
  data: MemoryFrontmatter;
  body: string;
  hasFrontmatter: boolean;
  problems: readonly ('unclosed' | 'shape' | { readonly notYaml: string })[];
} {
  const { yaml, body } = splitFront(text);
  if (yaml === null) {
    return {
      data: {},
      body,
      hasFrontmatter: false,
      problems: /^---[ \t]*\r?\n/.test(text) ? ['unclosed'] : [],
    };
  }
  const { data, byLine, problem } = parseFrontmatter(yaml);
  // Fields YAML typed otherwise (`name: 2024` is a number) are read as the text the person wrote.
  const strict = ClaudeCodeFrontmatter.safeParse(data);
  const parsed = strict.success ? strict : ClaudeCodeFrontmatter.safeParse(byLine);
  const problems: ('shape' | { notYaml: string })[] = [];
  if (problem !== undefined) problems.push({ notYaml: problem });
  if (!parsed.success) problems.push('shape');
  return { data: parsed.success ? parsed.data : {}, body, hasFrontmatter: true, problems };
}

export interface ParseMemoryFileContext {
  /** Path relative to the memory directory. */
  readonly relative: string;
  /** Date of the file's last change, `YYYY-MM-DD`. */
  readonly modified: string;
  readonly owner: FactOwner;
}

/** Read one memory file as a fact. Never throws: what cannot be read is reported and the body read as it is. */
export function parseMemoryFile(text: string, context: ParseMemoryFileContext): ParsedMemoryFile {
  const warnings: string[] = [];
  const { data, body: content, problems } = readFrontmatter(text);
  for (const problem of problems) {
    if (problem === 'unclosed') {
      warnings.push(
        `${context.relative}: frontmatter starts with '---' but never ends; read as plain text. Add the closing '---' line.`,
      );
    } else if (problem === 'shape') {
      warnings.push(
        `${context.relative}: frontmatter fields have the wrong shape; read as plain text. Give name, description and type strings.`,
      );
    } else {
      warnings.push(
        `${context.relative}: frontmatter could not be read as YAML or as \`key: value\` lines (${problem.notYaml}); ` +
          "what could be read is kept and the body is read as it is. Fix the lines between the two '---'.",
      );
    }
  }
  const declared = data.metadata?.type ?? data.type;
  const type = asType(declared) ?? typeFromName(context.relative) ?? FALLBACK_TYPE;
  if (declared !== undefined && asType(declared) === undefined) {
    warnings.push(
      `${context.relative}: type "${declared}" is not one of ${FACT_TYPES.join(', ')}; read as ${type}.`,
    );
  }
  const heading = /^#\s+(.+)$/m.exec(content)?.[1]?.trim();
  const title = data.name?.trim() || heading || titleFromName(context.relative);
  const { body: rule, why, howToApply } = splitContent(plainLinks(content));
  const date = dateOf(data.metadata?.modified) ?? context.modified;
  const description = data.description?.trim();
  const fact = factFromFile(
    {
      id: derivedFactId(`file\n${context.relative}`),
      type,
      title,
      body: rule === '' && description !== undefined ? description : rule,
      why,
      howToApply,
    },
    { date, editedByHand: true, owner: context.owner, file: context.relative, description },
  );
  return { fact, name: data.name?.trim(), warnings };
}
