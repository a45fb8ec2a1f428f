/**
 * What every tool of `dreamd mcp` shares: the optional `space` argument, a text result, and the way a tool's
 * work runs on the space the call picked.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Config } from '../../config/schema.js';
import type { ChosenSpace } from './mcp-space.js';

export const SPACE = z
  .string()
  .optional()
  .describe(
    'Space id or repository path. Leave it out: the space is the one of the client’s root or the folder the server runs in.',
  );

/** Runs a tool's work on the space a call names (or the one the client's roots pick); errors become tool errors. */
export type OnSpace = (
  argument: string | undefined,
  work: (config: Config, chosen: ChosenSpace) => Promise<CallToolResult>,
) => Promise<CallToolResult>;

/** The `space` a tool call named, if any. */
export function spaceArgument(input: { space?: string | undefined }): string | undefined {
  const trimmed = input.space?.trim() ?? '';
  return trimmed === '' ? undefined : trimmed;
}

/** A tool result of one text, marked as an error when it is one. */
export function text(body: string, isError = false): CallToolResult {
  return { content: [{ type: 'text', text: body }], ...(isError ? { isError: true } : {}) };
}
