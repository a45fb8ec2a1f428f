import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import type { BetaMemoryTool20250818Command } from '@anthropic-ai/sdk/resources/beta';
import { BetaLocalFilesystemMemoryTool, betaMemoryTool } from '@anthropic-ai/sdk/tools/memory/node';
import { z } from 'zod';
import { PathEscapeError } from '../errors.js';
import { resolveMemoryPath } from './memory-path.js';
import { checkMemoryOperation, requireClaudeCodeLockFree, type MemoryOperation } from './memory-rules.js';
import { syncNoteIndex } from './note-index.js';
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

/**
 * Anthropic's memory tool (`memory_20250818`: view, create, str_replace, insert, delete, rename) over the
 * space's memory directory, shown to the model as `/memories`. Commands run on the SDK's own
 * `BetaLocalFilesystemMemoryTool` (real paths, symlink escapes blocked, no overwrite on create or rename,
 * atomic edits); before it, every path passes dreamd's stricter `resolveMemoryPath` (encoded, NUL, lookalike
 * and `.dreamd/` tricks refused) and the rules `write_memory` and `forget_memory` apply (`memory-rules.ts`:
 * Markdown notes only, the curated files never edited, deleted or renamed, 100 KB a write). Only `view` may
 * name the root itself. The notes it writes get a line in `MEMORY.md` (and lose it when deleted or renamed),
 * so the next session and consolidation see them.
 */
export function createAnthropicMemoryTool(options: { memoryDir: string }): AgentTool {
  const memoryDir = path.resolve(options.memoryDir);
  const runnable = betaMemoryTool(createRootedSdkTool(memoryDir));
  const definition: Anthropic.MemoryTool20250818 = { type: 'memory_20250818', name: 'memory' };
  return {
    definition,
    handler: async (input) => {
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
      if (operation.kind !== 'read') await requireClaudeCodeLockFree(memoryDir);
      if (operation.kind === 'delete' || operation.kind === 'rename') {
        const info = await stat(resolved[0]!.absolute).catch(() => undefined);
        if (info?.isDirectory() === true)
          throw new ToolInputError('Folders are not deleted or renamed with this tool: one note at a time.');
      }
      const result = await runnable.run(command as BetaMemoryTool20250818Command);
      if (operation.kind === 'write') {
        const text = await readFile(resolved[0]!.absolute, 'utf8');
        await syncNoteIndex(memoryDir, { present: [{ relative: operation.path, text }] });
      } else if (operation.kind === 'delete') {
        await syncNoteIndex(memoryDir, { gone: [operation.path] });
      } else if (operation.kind === 'rename') {
        const text = await readFile(resolved[1]!.absolute, 'utf8');
        await syncNoteIndex(memoryDir, {
          gone: [operation.from],
          present: [{ relative: operation.to, text }],
        });
      }
      return typeof result === 'string' ? result : JSON.stringify(result);
    },
  };
}
