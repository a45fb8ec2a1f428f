import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TranscriptError } from '../../src/errors.js';
import { digestSession } from '../../src/digest/index.js';
import { parseNativeTranscript, parseNativeTranscriptStream } from '../../src/transcripts/native-reader.js';
import { DEFAULT_PART_CAPS } from '../../src/transcripts/normalize-message.js';
import { STREAM_NATIVE_ABOVE_BYTES, readSessionFile } from '../../src/transcripts/read-session.js';
import type { Session } from '../../src/transcripts/types.js';
import { EXAMPLE_SESSIONS, HOSTILE_FIXTURES, MAX_BYTES } from './helpers.js';
import { useTempDir } from '../support/fixtures.js';

const CONTEXT = { file: '/s/x.json', stem: 'x', fromMessage: 0, mtime: new Date('2026-11-20T00:00:00Z') };

async function* chunksOf(text: string, size: number): AsyncGenerator<string> {
  for (let index = 0; index < text.length; index += size) yield text.slice(index, index + size);
}

/**
 * The outcome of a parse: the Session, or the error's reason and where it is (line and column). The wording
 * of a syntax error may differ: the streamed parser words its own structural errors like V8's.
 */
async function outcome(run: () => Session | Promise<Session>): Promise<unknown> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof TranscriptError)) throw error;
    const place = /line \d+ column \d+/.exec(error.message)?.[0];
    const detail = error.reason === 'invalid-json' ? place : error.message;
    return { reason: error.reason, detail };
  }
}

describe('the streamed native parser gives what the whole parse gives', () => {
  const documents: Record<string, string> = {
    plain: JSON.stringify({
      id: 'plain',
      startedAt: '2026-11-20T10:00:00Z',
      agent: 'a',
      messages: [
        { role: 'user', content: 'I prefer "tea" \\ not coffee\n', ts: '2026-11-20T10:01:00Z' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Noted \u00e9\u{1f600} [x] {y}' },
            { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls "a,b"', nested: [[{}], []] } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
        { role: 'tool', tool_call_id: 'c', content: 'done' },
      ],
    }),
    spaced:
      '\n {\n  "messages" : [ \n {"role":"user","content":"a"} , {"role":"user","content":"b"}\n ] ,\n "id":"sp"\n}\n',
    escapes: '{"messages":[{"role":"user","content":"\\u0041\\\\\\"\\/\\b\\f\\n\\r\\t\\ud83d\\ude00"}]}',
    repeatedMessages:
      '{"messages":[{"role":"user","content":"first"}],"messages":[{"role":"user","content":"second"}]}',
    messagesThenObject: '{"messages":[{"role":"user","content":"a"}],"messages":{"role":"user"}}',
    protoKey: '{"__proto__":{"polluted":1},"messages":[{"role":"user","content":"x","__proto__":{"y":1}}]}',
    emptyMessages: '{"messages":[]}',
    emptyObject: '{}',
    arrayTop: '[{"role":"user","content":"x"}]',
    stringTop: '"hello"',
    nullTop: 'null',
    badRole: '{"startedAt":"2026-11-20","messages":[{"role":"user","content":"a"},{"role":"wizard"}]}',
    badTopAndMessage: '{"startedAt":"not a date","messages":[{"role":"wizard"}]}',
    trailingCommaInArray: '{\n  "startedAt": "2026-11-20",\n  "messages": [,]\n}',
    trailingComma: '{"messages":[{"role":"user","content":"a"},]}',
    trailingMemberComma: '{"messages":[],}',
    missingColon: '{"messages" []}',
    twoDocuments: '{"messages":[]}\n{"messages":[]}',
    truncated: '{"messages":[{"role":"user","content":"unfinished',
    truncatedAfterElement: '{"messages":[{"role":"user","content":"a"}',
    badInsideElement: '{"messages":[\n{"role":"user",\n  "content": tru}]}',
    singleQuotes: "{'messages':[]}",
    nan: '{"messages":[],"x":NaN}',
    whitespace: ' \n\t ',
    nbsp: '\u00a0',
    deep: `{"messages":[],"x":${'['.repeat(1001)}${']'.repeat(1001)}}`,
    deepInMessage: `{"messages":[{"role":"user","content":"a","x":${'['.repeat(999)}${']'.repeat(999)}}]}`,
    notDeep: `{"messages":[{"role":"user","content":"a","x":${'['.repeat(997)}${']'.repeat(997)}}]}`,
    numbers: '{"messages":[1,2.5e3,-0]}',
  };

  for (const [name, text] of Object.entries(documents)) {
    it(`${name}: same Session or same error, whatever the chunk size`, async () => {
      const whole = await outcome(() => parseNativeTranscript(text, CONTEXT));
      for (const size of [1, 2, 3, 7, 64, 1 << 16]) {
        const streamed = await outcome(() => parseNativeTranscriptStream(chunksOf(text, size), CONTEXT));
        expect(streamed, `chunks of ${size}`).toEqual(whole);
      }
    });
  }

  it('names line and column of invalid JSON as the whole parse does', async () => {
    const streamed = await outcome(() =>
      parseNativeTranscriptStream(chunksOf(documents.trailingCommaInArray!, 5), CONTEXT),
    );
    expect(streamed).toEqual({ reason: 'invalid-json', detail: 'line 3 column 16' });
    const inside = await outcome(() =>
      parseNativeTranscriptStream(chunksOf(documents.badInsideElement!, 4), CONTEXT),
    );
    expect(inside).toEqual({ reason: 'invalid-json', detail: 'line 3 column 17' });
    await expect(parseNativeTranscriptStream(chunksOf(documents.deep!, 9), CONTEXT)).rejects.toThrow(
      /invalid JSON: line 1 column \d+: nested deeper than 1000 levels; fix the JSON/,
    );
  });

  it('agrees with the whole parse on generated documents cut at random places', async () => {
    const message = fc.record({
      role: fc.constantFrom('user', 'assistant', 'tool', 'wizard'),
      content: fc.oneof(
        fc.string({ unit: 'binary' }),
        fc.array(fc.record({ type: fc.constant('text'), text: fc.string({ unit: 'grapheme' }) })),
      ),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.record({ id: fc.option(fc.constantFrom('a', 'b.c', '../x')), messages: fc.array(message) }),
        fc.integer({ min: 1, max: 40 }),
        fc.boolean(),
        async (document, size, pretty) => {
          const text = JSON.stringify(document, null, pretty ? 2 : undefined);
          const whole = await outcome(() => parseNativeTranscript(text, CONTEXT));
          const streamed = await outcome(() => parseNativeTranscriptStream(chunksOf(text, size), CONTEXT));
          expect(streamed).toEqual(whole);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('readSessionFile streams a native file over the threshold', () => {
  const directory = useTempDir('stream');

  it('reads a generated file over 8 MiB to the same Session as a whole parse, modulo caps', async () => {
    const messages: unknown[] = [];
    for (let index = 0; messages.length < 4_000; index += 1) {
      const ts = new Date(Date.UTC(2026, 10, 20, 10, 0, index)).toISOString();
      messages.push({
        role: 'user',
        ts,
        content: `message ${index}: I prefer tea ${'and biscuits '.repeat(20)}`,
      });
      messages.push({
        role: 'assistant',
        ts,
        content: [
          { type: 'text', text: `Checking ${index}.` },
          {
            type: 'tool_use',
            id: `t${index}`,
            name: 'Write',
            input: { file_path: `f${index}.txt`, content: 'x'.repeat(3_000) },
          },
        ],
      });
      messages.push({
        role: 'user',
        ts,
        content: [
          { type: 'tool_result', tool_use_id: `t${index}`, content: `line\n${'output '.repeat(500)}` },
        ],
      });
    }
    const text = JSON.stringify({ id: 'big', startedAt: '2026-11-20T10:00:00Z', messages });
    expect(text.length).toBeGreaterThan(STREAM_NATIVE_ABOVE_BYTES);
    await writeFile(join(directory.path, 'big.json'), text);
    const options = { format: 'native' as const, sessionsDir: directory.path, maxBytes: MAX_BYTES };
    const streamed = await readSessionFile('big.json', options);
    const whole = await readSessionFile('big.json', {
      ...options,
      streamNativeAboveBytes: Number.POSITIVE_INFINITY,
    });
    expect(streamed).toEqual(whole);
    expect(streamed.session.messageCount).toBe(messages.length);
    const later = await readSessionFile('big.json', { ...options, fromMessage: 3_000 });
    const laterWhole = await readSessionFile('big.json', {
      ...options,
      fromMessage: 3_000,
      streamNativeAboveBytes: Number.POSITIVE_INFINITY,
    });
    expect(later).toEqual(laterWhole);
    expect(later.session.messages[0]?.index).toBe(3_000);

    // The caps cut the 3,000-character input and the 3,505-character results; nothing the digest shows changes.
    const uncapped = await readSessionFile('big.json', {
      ...options,
      maxPartChars: Number.POSITIVE_INFINITY,
      maxToolResultChars: Number.POSITIVE_INFINITY,
      maxToolInputChars: Number.POSITIVE_INFINITY,
    });
    const result = streamed.session.messages[2]?.parts[0];
    expect(result).toMatchObject({ kind: 'tool-result' });
    expect((result as { text: string }).text).toMatch(/ \[\.\.\. 1505 chars not kept\]$/);
    const input = streamed.session.messages[1]?.parts[1] as { input: { content: string; file_path: string } };
    expect(input.input.file_path).toBe('f0.txt');
    expect(input.input.content).toBe(
      `${'x'.repeat(DEFAULT_PART_CAPS.toolInputChars)} [... 1000 chars not kept]`,
    );
    const digestOf = (session: Session) =>
      digestSession(session).text.replace(/\[cut \d+ chars\]/g, '[cut N chars]');
    expect(digestOf(streamed.session)).toEqual(digestOf(uncapped.session));
  });

  it('gives every file of the hostile corpus the same outcome streamed as read whole', async () => {
    const names = (await readdir(HOSTILE_FIXTURES)).filter((name) => name.endsWith('.json'));
    expect(names.length).toBeGreaterThan(30);
    for (const name of names) {
      const options = { format: 'native' as const, sessionsDir: HOSTILE_FIXTURES, maxBytes: MAX_BYTES };
      const read = (streamNativeAboveBytes: number) =>
        readSessionFile(name, { ...options, streamNativeAboveBytes }).then(
          (result) => result.session,
          (error: unknown) => {
            if (!(error instanceof TranscriptError)) throw error;
            return { reason: error.reason };
          },
        );
      const whole = await read(Number.POSITIVE_INFINITY);
      const streamed = await read(0);
      expect(streamed, name).toEqual(whole);
    }
  });

  it('digests the example sessions the same with and without the caps', async () => {
    const names = (await readdir(EXAMPLE_SESSIONS)).filter((name) => name.endsWith('.json'));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const options = { format: 'native' as const, sessionsDir: EXAMPLE_SESSIONS, maxBytes: MAX_BYTES };
      const capped = await readSessionFile(name, { ...options, streamNativeAboveBytes: 0 });
      const uncapped = await readSessionFile(name, {
        ...options,
        maxPartChars: Number.POSITIVE_INFINITY,
        maxToolResultChars: Number.POSITIVE_INFINITY,
        maxToolInputChars: Number.POSITIVE_INFINITY,
      });
      expect(digestSession(capped.session).text, name).toBe(digestSession(uncapped.session).text);
    }
  });
});
