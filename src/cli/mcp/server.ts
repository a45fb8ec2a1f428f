/**
 * `dreamd mcp`: dreamd's memory as an MCP server over stdio, on the official SDK. Five tools, each on the space
 * `chooseSpace` picks for the call (the client's roots, the working directory, a `space` argument):
 *
 * - `recall`: search memory through dreamd's recall (the agent kit's `recall` tool);
 * - `read_memory`: one fact by id, or a memory file through `read_memory`'s path checks;
 * - `remember`: a note through `write_memory`'s store and screen (`note-session.ts` says what the screen reads);
 * - `consolidate`: a manual run, through the daemon when one serves the space (as `dreamd consolidate`
 *   decides), else in this process;
 * - `status`: the last run, the rules taught again, what waits for review (`space-status.ts`).
 *
 * Every failure is a tool error (`isError: true`) whose text says which space and what to do. stdout is the
 * protocol's: logs go to stderr.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Config } from '../../config/schema.js';
import { packageVersion } from '../version.js';
import { registerConsolidateTool } from './consolidate-tool.js';
import { createOnSpace } from './on-space.js';
import { registerReadMemoryTool, registerRecallTool, registerStatusTool } from './read-tools.js';
import { registerRememberTool } from './remember-tool.js';

export interface DreamdMcpOptions {
  /** The config with the discovered spaces; called again when no space serves a call (a new repository). */
  readonly config: () => Promise<Config>;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where logs go (never stdout: it carries the protocol). */
  readonly stderr: (text: string) => void;
}

/** The MCP server of `dreamd mcp`: each tool registered by its own function, all on one way to find the space. */
export function createDreamdMcpServer(options: DreamdMcpOptions): McpServer {
  const server = new McpServer(
    { name: 'dreamd', version: packageVersion() },
    {
      instructions:
        "dreamd keeps this repository's long-term memory, consolidated from past sessions. Search it with recall " +
        'before answering from assumptions; save what the user tells you to remember with remember (their own ' +
        'words in userSaid).',
    },
  );
  const onSpace = createOnSpace(server, options);
  registerRecallTool(server, onSpace);
  registerReadMemoryTool(server, onSpace);
  registerRememberTool(server, onSpace);
  registerConsolidateTool(server, onSpace, options);
  registerStatusTool(server, onSpace);
  return server;
}
