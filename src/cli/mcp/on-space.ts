/**
 * How a tool call of `dreamd mcp` finds its space: the client's roots, the working directory and the call's
 * `space` argument, against the config, which is read once and read again when no space serves the call.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ToolInputError } from '../../agent/tool.js';
import type { Config } from '../../config/schema.js';
import { ConfigError, errorMessage } from '../../errors.js';
import { chooseSpace, type ChosenSpace } from './mcp-space.js';
import { text, type OnSpace } from './tool-call.js';

/** How long the server waits for the client's list of roots, in milliseconds. */
const ROOTS_TIMEOUT_MS = 5_000;

/** Builds the {@link OnSpace} of a server, with the config it reads when first needed. */
export function createOnSpace(
  server: McpServer,
  options: { readonly config: () => Promise<Config>; readonly cwd: string },
): OnSpace {
  let config: Promise<Config> | undefined;

  /** The roots the client lists, or none when it lists none or does not answer in time. */
  async function clientRoots(): Promise<readonly { uri: string }[]> {
    if (server.server.getClientCapabilities()?.roots === undefined) return [];
    try {
      return (await server.server.listRoots(undefined, { timeout: ROOTS_TIMEOUT_MS })).roots;
    } catch {
      return [];
    }
  }

  /** The config and the call's space; discovery runs again once when no space is found. */
  async function resolve(argument: string | undefined): Promise<{ config: Config; chosen: ChosenSpace }> {
    const clues = { roots: await clientRoots(), cwd: options.cwd, argument };
    config ??= options.config();
    try {
      const loaded = await config;
      return { config: loaded, chosen: await chooseSpace(loaded, clues) };
    } catch (error) {
      if (!(error instanceof ConfigError) || error.field !== 'space') {
        config = undefined;
        throw error;
      }
      config = options.config();
      const loaded = await config;
      return { config: loaded, chosen: await chooseSpace(loaded, clues) };
    }
  }

  /** Runs a tool's work on its space; any error becomes a tool error naming the space. */
  return async function onSpace(
    argument: string | undefined,
    work: (config: Config, chosen: ChosenSpace) => Promise<CallToolResult>,
  ): Promise<CallToolResult> {
    let chosen: ChosenSpace | undefined;
    try {
      const resolved = await resolve(argument);
      chosen = resolved.chosen;
      return await work(resolved.config, resolved.chosen);
    } catch (error) {
      const where =
        chosen === undefined ? '' : `space ${chosen.space.id} (memory ${chosen.space.memoryDir}): `;
      const fix =
        error instanceof ToolInputError || error instanceof ConfigError
          ? ''
          : ' Run `dreamd doctor` in a terminal to see what is wrong.';
      return text(`${where}${errorMessage(error)}${fix}`, true);
    }
  };
}
