import path from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import type { BetaMemoryTool20250818Command } from '@anthropic-ai/sdk/resources/beta';
import { BetaLocalFilesystemMemoryTool, betaMemoryTool } from '@anthropic-ai/sdk/tools/memory/node';
import { z } from 'zod';
import { PathEscapeError } from '../errors.js';
import { resolveMemoryPath } from './memory-path.js';
import { MAX_NOTE_BYTES } from './memory-tools.js';
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

function pathsOf(command: z.infer<typeof MemoryCommand>): string[] {
  return command.command === 'rename' ? [command.old_path, command.new_path] : [command.path];
}

function requireSmall(command: z.infer<typeof MemoryCommand>): void {
  const text =
    command.command === 'create'
      ? command.file_text
      : command.command === 'str_replace'
        ? command.new_str
        : command.command === 'insert'
          ? command.insert_text
          : '';
  if (Buffer.byteLength(text) > MAX_NOTE_BYTES) {
    throw new ToolInputError(`Memory text is limited to ${MAX_NOTE_BYTES} bytes per write.`);
  }
}

/**
 * Anthropic's memory tool (`memory_20250818`: view, create, str_replace, insert, delete, rename) over the
 * space's memory directory, shown to the model as `/memories`. Commands run on the SDK's own
 * `BetaLocalFilesystemMemoryTool` (real paths, symlink escapes blocked, no overwrite on create or rename,
 * atomic edits); before it, every path passes dreamd's stricter `resolveMemoryPath` (encoded, NUL, lookalike
 * and `.dreamd/` tricks refused), and a write over 100 KB is refused. Only `view` may name the root itself.
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
      for (const modelPath of pathsOf(command)) {
        await resolveMemoryPath(memoryDir, toMemoryRelative(modelPath), {
          allowRoot: command.command === 'view',
        });
      }
      requireSmall(command);
      const result = await runnable.run(command as BetaMemoryTool20250818Command);
      return typeof result === 'string' ? result : JSON.stringify(result);
    },
  };
}
