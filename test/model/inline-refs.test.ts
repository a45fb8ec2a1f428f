import { describe, expect, it } from 'vitest';
import { zodOutputFormat } from '@anthropic-ai/sdk/helpers/zod';
import { ExtractionOutput } from '../../src/consolidation/extraction/extraction.js';
import { inlineLocalRefs } from '../../src/model/output.js';

describe('inlineLocalRefs', () => {
  it('replaces every $ref by its definition, so the schema says the same in fewer bytes', () => {
    const original = zodOutputFormat(ExtractionOutput).schema;
    const inlined = inlineLocalRefs(original);
    const text = JSON.stringify(inlined);
    expect(text).not.toContain('$ref');
    expect(text).not.toContain('$defs');
    expect(text.length).toBeLessThan(JSON.stringify(original).length);
    const fact = (inlined.properties as { facts: { items: Record<string, unknown> } }).facts.items;
    expect(fact).toMatchObject({ type: 'object', additionalProperties: false });
    expect((fact.properties as Record<string, unknown>).why).toEqual({
      anyOf: [{ type: 'string' }, { type: 'null' }],
      description: expect.any(String),
    });
  });

  it('leaves a recursive schema as it is', () => {
    const recursive = {
      $defs: { node: { type: 'object', properties: { child: { $ref: '#/$defs/node' } } } },
      $ref: '#/$defs/node',
    };
    expect(inlineLocalRefs(recursive)).toBe(recursive);
  });
});
