import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { ForgetMemoryInput, ReadMemoryInput, WriteMemoryInput } from '../../src/agent/memory-tools.js';
import { RecallInput } from '../../src/agent/recall.js';
import { FORGET_MEMORY, READ_MEMORY, RECALL, WRITE_MEMORY } from '../../src/agent/tool-definitions.js';
import { defineTool } from '../../src/agent/tool.js';

/** A JSON schema without its `description`s: what the zod schema, which carries none, says. */
function withoutDescriptions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDescriptions);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'description')
      .map(([key, inner]) => [key, withoutDescriptions(inner)]),
  );
}

function jsonSchemaOf(schema: z.ZodType): unknown {
  const { $schema: _ignored, ...rest } = schema.toJSONSchema() as Record<string, unknown>;
  return rest;
}

describe("dreamd's tool definitions", () => {
  it.each([
    { definition: READ_MEMORY, input: ReadMemoryInput },
    { definition: WRITE_MEMORY, input: WriteMemoryInput },
    { definition: FORGET_MEMORY, input: ForgetMemoryInput },
    { definition: RECALL, input: RecallInput },
  ])(
    '$definition.name: the definition the model sees has the shape its input is checked against',
    ({ definition, input }) => {
      expect(withoutDescriptions(definition.input_schema)).toEqual(jsonSchemaOf(input));
      for (const property of Object.values(definition.input_schema.properties)) {
        expect(property.description).toMatch(/\w/);
      }
    },
  );

  it('catches a definition that drifted from its schema', () => {
    const drifted = { ...WRITE_MEMORY.input_schema, required: ['type', 'title'] };
    expect(withoutDescriptions(drifted)).not.toEqual(jsonSchemaOf(WriteMemoryInput));
  });

  it('derives a custom tool definition from its schema and names the tool in a bad input error', async () => {
    const tool = defineTool({
      name: 'weather',
      description: 'Weather of a city.',
      input: RecallInput,
      run: async ({ query }) => query,
    });
    expect(tool.definition).toMatchObject({ name: 'weather', input_schema: jsonSchemaOf(RecallInput) });
    await expect(tool.handler({ query: '' })).rejects.toThrow(
      /Invalid input for weather: ✖ .+\n {2}→ at query/,
    );
  });
});
