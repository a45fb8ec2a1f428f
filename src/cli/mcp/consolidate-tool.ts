/**
 * The `consolidate` tool of `dreamd mcp`: a manual run, through the daemon when one serves the space (as
 * `dreamd consolidate` decides), else in this process. The run's parts load at the first call, so a server that
 * only recalls never loads them.
 */
import { Writable } from 'node:stream';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { SPACE, spaceArgument, text, type OnSpace } from './tool-call.js';
import { describeRun } from './tool-text.js';

/** What the in-process run needs from the server's options. */
export interface ConsolidateToolOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where the run's logs go (never stdout: it carries the protocol). */
  readonly stderr: (text: string) => void;
}

/** Registers `consolidate`; its text says whether the daemon or this process ran it. */
export function registerConsolidateTool(
  server: McpServer,
  onSpace: OnSpace,
  options: ConsolidateToolOptions,
): void {
  server.registerTool(
    'consolidate',
    {
      title: 'Consolidate now',
      description:
        "Consolidate this repository's new sessions into memory now: queued to the dreamd daemon when one serves " +
        'the space, else run here (it calls the model configured for dreamd). Without force the gates decide as ' +
        'for a scheduled run; force skips the time and session-count gates (never the lock). Use it when the ' +
        'user asks to consolidate or "dream" now.',
      inputSchema: {
        force: z.boolean().optional().describe('Skip the time and session-count gates. Default false.'),
        space: SPACE,
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    async (input) =>
      onSpace(spaceArgument(input), async (loaded, { space }) => {
        const force = input.force === true;
        const [
          { createDaemonClient },
          { consolidateQueued },
          { consolidateInProcess },
          { createDreamd },
          { createLogger },
        ] = await Promise.all([
          import('../daemon-client.js'),
          import('../consolidate-queued.js'),
          import('../consolidate-in-process.js'),
          import('../../dreamd.js'),
          import('../../daemon/logger.js'),
        ]);
        const daemon = createDaemonClient(loaded);
        const match = await daemon.serves([space]);
        const [outcome] = match.use
          ? await consolidateQueued({ client: daemon, spaces: [space], force, dryRun: false, wait: true })
          : await consolidateInProcess({
              dreamd: createDreamd({
                getConfig: () => loaded,
                env: options.env,
                logger: createLogger({
                  pretty: false,
                  level: 'warn',
                  env: options.env,
                  destination: new Writable({
                    write(chunk: Buffer, _encoding, done) {
                      options.stderr(String(chunk));
                      done();
                    },
                  }),
                }),
              }),
              spaces: [space],
              force,
              dryRun: false,
            });
        const via = match.use ? `via the daemon at ${daemon.baseUrl}` : 'in the MCP server';
        const described = describeRun(outcome!, via);
        return text(described.text, !described.ok);
      }),
  );
}
