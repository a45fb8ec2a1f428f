import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';

/**
 * A tool the agent loop can offer the model: the definition sent in `tools` and the function that runs
 * a `tool_use` for it. A handler that throws is answered as an `is_error` tool result; it never ends the loop.
 */
export interface AgentTool {
  /** A custom tool (`name`, `description`, `input_schema`) or a server-defined one such as `memory_20250818`. */
  readonly definition: Anthropic.ToolUnion;
  /**
   * Runs one call. `input` is the model's raw input; validate it (see `defineTool`). `context` is the session
   * so far (`runAgent` passes it; a loop of your own should too, for the memory tools' screen).
   */
  readonly handler: (input: unknown, context?: ToolCallContext) => Promise<string>;
}

/** What a tool call may know of its session. */
export interface ToolCallContext {
  /** The session's messages before this call, in order (Anthropic shape), the call's own assistant turn last. */
  readonly messages: readonly Anthropic.MessageParam[];
}

/** Thrown by a tool for a bad input; the loop answers the model with its message as an error result. */
export class ToolInputError extends Error {
  override readonly name = 'ToolInputError';
}

/**
 * Defines a custom tool from a zod schema: the JSON schema sent to the model is derived from it
 * (`z.toJSONSchema`), and the input is validated with it before `run` sees it.
 */
export function defineTool<Schema extends z.ZodObject>(spec: {
  name: string;
  description: string;
  input: Schema;
  run: (input: z.infer<Schema>, context?: ToolCallContext) => Promise<string>;
}): AgentTool {
  const { $schema: _ignored, ...jsonSchema } = z.toJSONSchema(spec.input) as Record<string, unknown>;
  return {
    definition: {
      name: spec.name,
      description: spec.description,
      input_schema: { ...jsonSchema, type: 'object' },
    },
    handler: async (input, context) => {
      const parsed = spec.input.safeParse(input);
      if (!parsed.success) {
        throw new ToolInputError(`Invalid input for ${spec.name}: ${z.prettifyError(parsed.error)}`);
      }
      return spec.run(parsed.data, context);
    },
  };
}

/** Name the model uses in `tool_use.name` for a definition (custom tools and server-defined ones alike). */
export function toolName(definition: Anthropic.ToolUnion): string {
  return 'name' in definition && typeof definition.name === 'string'
    ? definition.name
    : (definition.type ?? 'custom');
}
