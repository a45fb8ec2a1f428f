import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ModelError } from '../../src/errors.js';
import { parseJsonOutput, unwrapJsonText } from '../../src/model/output.js';

const Facts = z.object({ facts: z.array(z.string()) });
const json = '{"facts":["Prefers pnpm"]}';

describe('unwrapJsonText', () => {
  it('takes the JSON out of a ```json fence', () => {
    expect(unwrapJsonText('```json\n' + json + '\n```')).toBe(json);
  });

  it('takes the JSON out of a fence without a language tag, with blank space around it', () => {
    expect(unwrapJsonText('\n  ```\n' + json + '\n```  \n')).toBe(json);
  });

  it('drops a leading <think> block, and several reasoning blocks in a row', () => {
    expect(unwrapJsonText('<think>\nThe user said pnpm.\n</think>\n' + json)).toBe(json);
    expect(unwrapJsonText('<think>a</think><Thinking>b</Thinking>\n' + json)).toBe(json);
  });

  it('drops a <think> block and then a fence', () => {
    expect(unwrapJsonText('<think>Reasoning {"not":"this"}</think>\n\n```json\n' + json + '\n```')).toBe(
      json,
    );
  });

  it('leaves plain JSON, prose, and a fence in the middle of prose as they are', () => {
    expect(unwrapJsonText(json)).toBe(json);
    const prose = 'Here you go:\n```json\n' + json + '\n```\nHope it helps.';
    expect(unwrapJsonText(prose)).toBe(prose);
    const unclosed = '<think>still thinking ' + json;
    expect(unwrapJsonText(unclosed)).toBe(unclosed);
  });
});

describe('parseJsonOutput', () => {
  it('validates the JSON inside the wrappers', () => {
    expect(parseJsonOutput(Facts, '<think>ok</think>```json\n' + json + '\n```', 'facts', 'test')).toEqual({
      facts: ['Prefers pnpm'],
    });
  });

  it('still calls prose around the JSON "not JSON", a retryable bad-output error', () => {
    let caught: unknown;
    try {
      parseJsonOutput(Facts, 'Sure! ' + json, 'facts', 'test');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ModelError);
    expect((caught as ModelError).details).toMatchObject({ kind: 'bad-output', retryable: true });
    expect((caught as ModelError).message).toContain('not JSON');
  });

  it('says when only a reasoning block came back', () => {
    expect(() => parseJsonOutput(Facts, '<think>hmm</think>', 'facts', 'test')).toThrow(/held no JSON/);
  });
});
