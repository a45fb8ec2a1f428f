/**
 * One memory file as Claude Code writes its own (pure): one fact per Markdown file, e.g. `feedback_testing.md`.
 *
 * Variants read (every one Claude Code has written):
 *   - recent: frontmatter `name`, `description`, `metadata: { type, modified }`;
 *   - older: frontmatter `name`, `description`, top-level `type`;
 *   - no frontmatter at all (free-form notes), and bodies with `[[links]]` to other memories.
 * The type comes from the frontmatter, else from a `<type>_` file-name prefix, else `project`. The body is
 * the rule, then `**Why:**` and `**How to apply:**` lines for feedback and project.
 */
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { derivedFactId } from './fact-id.js';
import { FACT_TYPES, type Fact, type FactOwner, type FactType } from './types.js';
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

export interface ParseMemoryFileContext {
  /** Path relative to the memory directory. */
  readonly relative: string;
  /** Date of the file's last change, `YYYY-MM-DD`. */
  readonly modified: string;
  readonly owner: FactOwner;
}

/** Read one memory file as a fact. Never throws: broken frontmatter is reported and the text read as the body. */
export function parseMemoryFile(text: string, context: ParseMemoryFileContext): ParsedMemoryFile {
  const warnings: string[] = [];
  const { yaml, body } = splitFront(text);
  let data: z.infer<typeof ClaudeCodeFrontmatter> = {};
  let content = body;
  if (yaml === null && /^---[ \t]*\r?\n/.test(text)) {
    warnings.push(
      `${context.relative}: frontmatter starts with '---' but never ends; read as plain text. Add the closing '---' line.`,
    );
  } else if (yaml !== null) {
    try {
      const parsed = ClaudeCodeFrontmatter.safeParse(parseYaml(yaml) ?? {});
      if (parsed.success) data = parsed.data;
      else
        warnings.push(
          `${context.relative}: frontmatter fields have the wrong shape; read as plain text. Give name, description and type strings.`,
        );
    } catch (error) {
      const detail = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
      warnings.push(
        `${context.relative}: frontmatter is not valid YAML (${detail}); the file is read as plain text. Fix the lines between the two '---'.`,
      );
      content = text;
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
  const fact: Fact = {
    id: derivedFactId(`file\n${context.relative}`),
    type,
    title,
    body: rule === '' && description !== undefined ? description : rule,
    why,
    howToApply,
    observed: date,
    updated: date,
    sources: [],
    status: 'active',
    supersededBy: undefined,
    supersededOn: undefined,
    editedByHand: true,
    owner: context.owner,
    file: context.relative,
    ...(description ? { description } : {}),
  };
  return { fact, name: data.name?.trim(), warnings };
}
