import type Anthropic from '@anthropic-ai/sdk';
import type { z } from 'zod';

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
 * Defines a custom tool from a zod schema: the JSON schema sent to the model is derived from it (the
 * schema's `toJSONSchema`), and the input is validated with it before `run` sees it. Uses the schema's own
 * methods, so the agent kit loads no schema library of its own for it.
 */
export function defineTool<Schema extends z.ZodObject>(spec: {
  name: string;
  description: string;
  input: Schema;
  run: (input: z.infer<Schema>, context?: ToolCallContext) => Promise<string>;
}): AgentTool {
  const { $schema: _ignored, ...jsonSchema } = spec.input.toJSONSchema() as Record<string, unknown>;
  return checkedTool(
    { name: spec.name, description: spec.description, input_schema: { ...jsonSchema, type: 'object' } },
    spec.input,
    spec.run,
  );
}

/**
 * A tool whose definition is given as data and whose input is checked with `schema` (of the same shape)
 * before `run` sees it: a bad input is a ToolInputError naming the tool and what was wrong.
 */
export function checkedTool<Schema extends z.ZodType>(
  definition: Anthropic.Tool,
  schema: Schema,
  run: (input: z.infer<Schema>, context?: ToolCallContext) => Promise<string>,
): AgentTool {
  return {
    definition,
    handler: async (input, context) => {
      const parsed = schema.safeParse(input);
      if (!parsed.success) {
        throw new ToolInputError(`Invalid input for ${definition.name}: ${describeIssues(parsed.error)}`);
      }
      return run(parsed.data, context);
    },
  };
}

/** A failed check's issues, one per line, each with where it is (the form of zod's prettifyError). */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const at = issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');
      return at === '' ? `✖ ${issue.message}` : `✖ ${issue.message}\n  → at ${at.replace(/^\./, '')}`;
    })
    .join('\n');
}

/** Name the model uses in `tool_use.name` for a definition (custom tools and server-defined ones alike). */
export function toolName(definition: Anthropic.ToolUnion): string {
  return 'name' in definition && typeof definition.name === 'string'
    ? definition.name
    : (definition.type ?? 'custom');
}
