import { ownResult } from './own-results.js';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import type { BetaMemoryTool20250818Command } from '@anthropic-ai/sdk/resources/beta';
import { BetaLocalFilesystemMemoryTool, betaMemoryTool } from '@anthropic-ai/sdk/tools/memory/node';
import { z } from 'zod';
import { PathEscapeError } from '../errors.js';
import { resolveMemoryPath } from './memory-path.js';
import { FACT_TYPES, type FactType } from '../memory/types.js';
import { describeOutcome } from './memory-tools.js';
import { checkMemoryOperation, requireClaudeCodeLockFree, type MemoryOperation } from './memory-rules.js';
import { createNoteStore, type NoteInput, type NoteStoreOptions } from './note-store.js';
import { splitFrontmatter } from './recall-documents.js';
import { ToolInputError, type AgentTool } from './tool.js';

/** The root Anthropic's memory tool shows the model; it maps to the space's memory directory. */
export const ANTHROPIC_MEMORY_ROOT = '/memories';

/** The commands of `memory_20250818`, validated before the SDK's handler sees them. */
const MemoryCommand = z.discriminatedUnion('command', [
  z.object({
    command: z.literal('view'),
    path: z.string(),
    view_range: z.tuple([z.int(), z.int()]).optional(),
  }),
  z.object({ command: z.literal('create'), path: z.string(), file_text: z.string() }),
  z.object({ command: z.literal('str_replace'), path: z.string(), old_str: z.string(), new_str: z.string() }),
  z.object({ command: z.literal('insert'), path: z.string(), insert_line: z.int(), insert_text: z.string() }),
  z.object({ command: z.literal('delete'), path: z.string() }),
  z.object({ command: z.literal('rename'), old_path: z.string(), new_path: z.string() }),
]);

/**
 * Builds the SDK's local-filesystem memory tool rooted at `memoryDir` itself. The SDK keeps its files in
 * `<basePath>/memories`; dreamd's memory directory has no such sub-folder, so the instance's root is pointed
 * at the directory after construction. The guard below fails loudly if a future SDK stores it differently.
 */
function createRootedSdkTool(memoryDir: string): BetaLocalFilesystemMemoryTool {
  const tool = new BetaLocalFilesystemMemoryTool(memoryDir);
  if (Reflect.get(tool, 'memoryRoot') !== path.join(memoryDir, 'memories')) {
    throw new Error(
      '@anthropic-ai/sdk changed BetaLocalFilesystemMemoryTool: cannot root it at the memory directory',
    );
  }
  Reflect.set(tool, 'memoryRoot', memoryDir);
  return tool;
}

/** Maps `/memories/a/b.md` to `a/b.md` (and `/memories` to `""`); anything else is refused. */
export function toMemoryRelative(modelPath: string): string {
  if (modelPath === ANTHROPIC_MEMORY_ROOT || modelPath === `${ANTHROPIC_MEMORY_ROOT}/`) return '';
  if (!modelPath.startsWith(`${ANTHROPIC_MEMORY_ROOT}/`)) {
    throw new PathEscapeError(
      `Refused memory path ${JSON.stringify(modelPath)}: it must start with /memories/.`,
      modelPath,
    );
  }
  return modelPath.slice(ANTHROPIC_MEMORY_ROOT.length + 1);
}

type Command = z.infer<typeof MemoryCommand>;

function pathsOf(command: Command): string[] {
  return command.command === 'rename' ? [command.old_path, command.new_path] : [command.path];
}

/** The command as an operation of the shared rules (`memory-rules.ts`). */
function operationOf(command: Command): MemoryOperation {
  switch (command.command) {
    case 'view':
      return { kind: 'read', path: toMemoryRelative(command.path) };
    case 'create':
      return { kind: 'write', path: toMemoryRelative(command.path), text: command.file_text };
    case 'str_replace':
      return { kind: 'write', path: toMemoryRelative(command.path), text: command.new_str };
    case 'insert':
      return { kind: 'write', path: toMemoryRelative(command.path), text: command.insert_text };
    case 'delete':
      return { kind: 'delete', path: toMemoryRelative(command.path) };
    case 'rename':
      return {
        kind: 'rename',
        from: toMemoryRelative(command.old_path),
        to: toMemoryRelative(command.new_path),
      };
  }
}

/** A fact's type from a note's frontmatter `type`, else its first folder (`feedback/x.md`), else `project`. */
function typeOfNote(relative: string, declared: unknown): FactType {
  const known = (value: unknown): value is FactType =>
    typeof value === 'string' && (FACT_TYPES as readonly string[]).includes(value);
  if (known(declared)) return declared;
  const folder = relative.split('/')[0];
  return relative.includes('/') && known(folder) ? folder : 'project';
}

/** A note file's text as a fact: its `name` or first heading is the title, the rest the body. */
export function noteAsFact(relative: string, fileText: string): NoteInput {
  const { data, body } = splitFrontmatter(fileText);
  const lines = body.split('\n');
  const headingAt = lines.findIndex((line) => /^#{1,6}\s/.test(line.trim()));
  const heading = headingAt === -1 ? undefined : lines[headingAt]!.trim().replace(/^#{1,6}\s+/, '');
  const rest = (headingAt === -1 ? lines : lines.filter((_, index) => index !== headingAt)).join('\n').trim();
  const fileName = path.basename(relative, '.md').replace(/[-_]+/g, ' ');
  const title = (data.name ?? heading ?? fileName).slice(0, 80);
  return {
    type: typeOfNote(relative, Reflect.get(data, 'type')),
    title,
    body: rest === '' ? (data.description ?? title) : rest,
  };
}

const EDITS_REFUSED =
  'Memory is kept as facts that dreamd curates (the topic files user.md, feedback.md, project.md, reference.md, ' +
  'or one file per fact in a Claude Code folder), and notes written by earlier versions are kept as they are: files are not edited, deleted or renamed ' +
  'with this tool. To correct a fact, create a new note that says what is true now; to forget one, use ' +
  'forget_memory with its id if you have it, or ask the user to run `dreamd memory forget <id>`.';

/**
 * Anthropic's memory tool (`memory_20250818`: view, create, str_replace, insert, delete, rename) over the
 * space's memory directory, shown to the model as `/memories`, mapped onto the one store consolidation uses:
 *
 * - `view` runs on the SDK's own `BetaLocalFilesystemMemoryTool` (real paths, symlink escapes blocked): the
 *   index, the topic files with their facts, notes earlier versions wrote.
 * - `create` of a new `.md` note becomes a fact, through the same path as `write_memory` (`note-store.ts`:
 *   screen, topic file of its type, dreamd's block of `MEMORY.md`, one transaction under the space's lock).
 *   Its type is the frontmatter's `type`, else its first folder when that names a type, else `project`;
 *   its title the frontmatter's `name` or the first heading. No file is made at the path the model gave.
 * - `str_replace`, `insert`, `delete` and `rename` are refused with what to do instead: the topic files are
 *   dreamd's (as before), and an old note file is never edited.
 *
 * Before any command, every path passes dreamd's stricter `resolveMemoryPath` (encoded, NUL, lookalike and
 * `.dreamd/` tricks refused) and the rules of `memory-rules.ts` (Markdown notes only, the curated files never
 * written, 100 KB a write). Only `view` may name the root itself.
 */
export function createAnthropicMemoryTool(options: NoteStoreOptions): AgentTool {
  const memoryDir = path.resolve(options.memoryDir);
  const runnable = betaMemoryTool(createRootedSdkTool(memoryDir));
  const store = createNoteStore({ ...options, memoryDir });
  const definition: Anthropic.MemoryTool20250818 = { type: 'memory_20250818', name: 'memory' };
  return {
    definition,
    handler: async (input, context) => {
      const parsed = MemoryCommand.safeParse(input);
      if (!parsed.success)
        throw new ToolInputError(`Invalid memory command: ${z.prettifyError(parsed.error)}`);
      const command = parsed.data;
      const resolved = [];
      for (const modelPath of pathsOf(command)) {
        resolved.push(
          await resolveMemoryPath(memoryDir, toMemoryRelative(modelPath), {
            allowRoot: command.command === 'view',
          }),
        );
      }
      const operation = operationOf(command);
      checkMemoryOperation(operation);
      if (operation.kind === 'read') {
        const result = await runnable.run(command as BetaMemoryTool20250818Command);
        // Memory read back: the note screen knows it as such by this mark, not by the tool's name.
        return ownResult(typeof result === 'string' ? result : JSON.stringify(result));
      }
      await requireClaudeCodeLockFree(memoryDir);
      if (command.command !== 'create') throw new ToolInputError(EDITS_REFUSED);
      if ((await stat(resolved[0]!.absolute).catch(() => undefined)) !== undefined) {
        throw new ToolInputError(`${command.path} already exists. ${EDITS_REFUSED}`);
      }
      const outcome = await store.save(
        noteAsFact(resolved[0]!.relative, command.file_text),
        context?.messages,
      );
      return `${describeOutcome(outcome)} (View /memories/MEMORY.md for the index of every fact.)`;
    },
  };
}
