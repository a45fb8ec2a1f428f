/**
 * `dreamd mcp` as a client starts it: the repository's `bin/dreamd.js` as a child process, driven over stdio by
 * the MCP SDK's own `Client` and `StdioClientTransport`. A client with roots answers `roots/list` with them.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pathToFileURL } from 'node:url';
import { afterEach } from 'vitest';

export const BIN = new URL('../../bin/dreamd.js', import.meta.url).pathname;

export interface McpSession {
  readonly client: Client;
  /** Calls a tool; the text of its answer and whether it is a tool error. */
  call(name: string, args?: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
  /** What the server wrote on stderr so far. */
  stderr(): string;
}

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

/** Starts `dreamd mcp` in `cwd` with only `env` (and PATH, HOME) and connects a client; closed after the test. */
export async function connectMcp(options: {
  cwd: string;
  env?: Record<string, string>;
  /** Folders the client gives as its roots; none: the client has no roots capability. */
  roots?: readonly string[];
}): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: options.cwd, ...options.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += String(chunk);
  });
  const client = new Client(
    { name: 'dreamd-test', version: '1.0.0' },
    options.roots === undefined ? {} : { capabilities: { roots: { listChanged: false } } },
  );
  if (options.roots !== undefined) {
    const roots = options.roots.map((folder) => ({ uri: pathToFileURL(folder).href, name: folder }));
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots }));
  }
  await client.connect(transport);
  open.push(client);
  return {
    client,
    stderr: () => stderr,
    async call(name, args = {}) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
      return { text, isError: result.isError === true };
    },
  };
}
