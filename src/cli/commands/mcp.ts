import type { Config } from '../../config/schema.js';
import type { CommandRegistrar } from '../program.js';

export const registerMcp: CommandRegistrar = (program, context) => {
  program
    .command('mcp')
    .description(
      "serve memory to an MCP client over stdio (Claude Code, Codex, any client): recall, read_memory, remember, consolidate, status on the client's repository",
    )
    .action(async () => {
      const { io, config } = context();
      const base = config();
      // Loaded only here: the MCP SDK, the agent kit's tools, the status and run parts.
      const [{ createDreamdMcpServer }, { StdioServerTransport }] = await Promise.all([
        import('../mcp/server.js'),
        import('@modelcontextprotocol/sdk/server/stdio.js'),
      ]);
      const server = createDreamdMcpServer({
        // Called again when no space serves a call: a repository the agents started in after the server did is found.
        config: async (): Promise<Config> =>
          base.discover === undefined
            ? base
            : (await import('../../discovery/index.js')).withDiscoveredSpaces(base),
        cwd: io.cwd,
        env: io.env,
        stderr: io.stderr,
      });
      const transport = new StdioServerTransport();
      const closed = new Promise<void>((resolve) => {
        transport.onclose = () => resolve();
        // The client closing its end of the pipe ends the session.
        process.stdin.once('end', () => resolve());
      });
      await server.connect(transport);
      await closed;
      await server.close();
    });
};
