import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { listRuns } from '../../src/space/index.js';
import { MAX_WRITABLE_FILE_BYTES } from '../../src/memory/read-memory-file.js';
import { type AnthropicReply, type RecordedAnthropicRequest } from '../../harness/fake-anthropic-server.js';
import { startFakeOpenAIServer, type RecordedChatRequest } from '../../harness/fake-openai-server.js';
import {
  EXAMPLE_ACTIVE_TITLES,
  EXAMPLE_FACTS,
  scriptedExtractor,
  sessionsInPrompt,
} from '../../harness/scripted-extractor.js';
import { createTestSpace } from '../support/space.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { activeTitles, forcedRunAt, rawFact, withLimits } from './helpers.js';

/**
 * A model answer is data, read within `limits.*`: each fact is checked on its own, a fact that breaks the
 * schema or a limit is dropped and counted by reason, and the rest of the answer is kept; an answer past a fact
 * limit is asked again smaller, and one with no valid fact leaves its sessions waiting: nothing is cut and no
 * session is marked consolidated past a fact not read. The answers come from the fake servers through the
 * real SDKs.
 */

/** Its default answer is the scripted extractor over the example facts; a test may answer otherwise. */
const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });

/** The scripted facts of a request, with `extra` after them. */
function scriptedWith(extra: (request: { prompt: string }) => unknown[]) {
  const scripted = scriptedExtractor(EXAMPLE_FACTS);
  return (request: { prompt: string }): AnthropicReply => {
    const reply = scripted(request as RecordedAnthropicRequest) as { json: { facts: unknown[] } };
    return { json: { facts: [...reply.json.facts, ...extra(request)] } };
  };
}

/** Every file under the memory directory with its size in bytes. */
function fileSizes(directory: string): Map<string, number> {
  const sizes = new Map<string, number>();
  const walk = (current: string): void => {
    for (const name of readdirSync(current)) {
      const path = join(current, name);
      const info = statSync(path);
      if (info.isDirectory()) walk(path);
      else sizes.set(path, info.size);
    }
  };
  walk(directory);
  return sizes;
}

const SCRIPTED_TITLES = EXAMPLE_ACTIVE_TITLES;

describe('facts checked one by one', () => {
  it('keeps the good facts of an Anthropic answer with one fact of an unknown type, and counts that one', async () => {
    fake.server.setDefault(scriptedWith(() => [rawFact(1, { type: 'opinion' })]));
    const test = createTestSpace({ modelUrl: fake.url, examples: true });

    const summary = await forcedRunAt(test);

    expect(summary.status).toBe('completed');
    expect(summary.factsDropped).toEqual({ schema: 1 });
    expect(summary.unconsolidated).toEqual([]);
    expect(summary.notes?.join('\n')).toMatch(
      /1 fact\(s\) of the answers were dropped as invalid \(1 schema\)/,
    );
    // An error of the run, shown with the session's file, not only a note.
    expect(summary.problems.map((problem) => problem.reason).join('\n')).toMatch(
      /held invalid facts, dropped \(1 schema\)/,
    );
    expect(fake.server.requests).toHaveLength(1); // not retried: the answer was good but for one fact
    expect(await activeTitles(test)).toEqual(SCRIPTED_TITLES);
    const [record] = await listRuns(test.space.memoryDir);
    expect(record?.summary.factsDropped).toEqual({ schema: 1 });
    // The model is still asked for strict facts: the JSON schema sent names the four types.
    const format = fake.server.requests[0]!.body.output_config as { format: { schema: unknown } };
    expect(JSON.stringify(format.format.schema)).toContain(
      '"enum":["user","feedback","project","reference"]',
    );
  });

  it('keeps the good facts of an OpenAI-compatible answer with one broken fact, and counts it', async () => {
    const server = await startFakeOpenAIServer();
    onTestFinished(() => server.close());
    const scripted = scriptedWith(() => [{ title: 'No type, no body' }]);
    server.setDefault((request: RecordedChatRequest) => scripted(request) as { json: unknown });
    const test = createTestSpace({
      modelUrl: server.url,
      examples: true,
      env: {
        DREAMD_MODEL_PROVIDER: 'openai-compatible',
        DREAMD_MODEL_API_KEY: 'k',
        DREAMD_MODEL: 'llama3.2',
      },
    });

    const summary = await forcedRunAt(test);

    expect(summary.status).toBe('completed');
    expect(summary.factsDropped).toEqual({ schema: 1 });
    expect(await activeTitles(test)).toEqual(SCRIPTED_TITLES);
    const sent = JSON.stringify(server.requests[0]!.body.response_format);
    expect(sent).toContain('"strict":true');
    expect(sent).toContain('"howToApply"');
  });

  it('drops a fact with a 20 MB body and keeps the rest; no memory file passes its limit', async () => {
    const body = 'The user said so. '.repeat(Math.ceil((20 * 1024 * 1024) / 18));
    fake.server.setDefault(scriptedWith(() => [rawFact(1, { type: 'user', title: 'Everything', body })]));
    const test = createTestSpace({ modelUrl: fake.url, examples: true });

    // The answer is read (the limit on its size is raised past it); the fact is not kept.
    const summary = await forcedRunAt(
      test,
      test.space,
      withLimits(test.config, { maxAnswerChars: 64 * 1024 * 1024 }),
    );

    expect(summary.status).toBe('completed');
    expect(summary.factsDropped).toEqual({ 'fact-too-large': 1 });
    expect(await activeTitles(test)).toEqual(SCRIPTED_TITLES);
    for (const [file, size] of fileSizes(test.space.memoryDir)) {
      expect(size, file).toBeLessThan(MAX_WRITABLE_FILE_BYTES);
    }
    expect(Math.max(...fileSizes(test.space.memoryDir).values())).toBeLessThan(1024 * 1024);
  });

  it('asks again in halves for an answer past maxFactsPerAnswer, and keeps every fact of the halves', async () => {
    // The first answer (all seven sessions in one batch) overflows; the halves answer as the model would.
    fake.server.enqueue({ json: { facts: Array.from({ length: 150 }, (_, index) => rawFact(index)) } });
    const test = createTestSpace({ modelUrl: fake.url, examples: true });

    const summary = await forcedRunAt(test);

    expect(summary.status).toBe('completed');
    expect(summary.factsDropped).toBeUndefined();
    expect(summary.unconsolidated).toEqual([]);
    // The overflowing call and its halves, split again before they are sent when the 150 facts it claimed
    // for its lines say they would overflow too (beside them, perhaps, the update check and curation).
    const extraction = fake.server.requests.filter((request) => sessionsInPrompt(request.prompt).length > 0);
    expect(extraction.length).toBeGreaterThanOrEqual(3);
    expect(summary.answersAskedAgain).toBe(1);
    expect(summary.notes?.join('\n')).toMatch(/held more facts than limits\.maxFactsPerAnswer \(100\)/);
    // Nothing of the overflowing answer was kept, nothing of the halves was cut.
    expect(await activeTitles(test)).toEqual(SCRIPTED_TITLES);
  });

  it('leaves a session waiting at a message whose answer alone passes maxFactsPerAnswer, and names the fix', async () => {
    const flood = Array.from({ length: 2_000 }, (_, index) => rawFact(index));
    fake.server.setDefault(() => ({ json: { facts: flood } }));
    const test = createTestSpace({ modelUrl: fake.url, examples: ['2026-11-02-lisbon-delivery.json'] });

    const summary = await forcedRunAt(
      test,
      test.space,
      withLimits(test.config, { maxAnswerChars: 64 * 1024 * 1024 }),
    );

    expect(summary.added).toBe(0);
    expect(summary.factsDropped).toBeUndefined();
    expect(summary.unconsolidated?.map((entry) => entry.reason)).toEqual(['answer-fact-limit']);
    expect(summary.problems.map((problem) => problem.reason).join('\n')).toMatch(
      /raise limits\.maxFactsPerAnswer \(the session waits at that message\)/,
    );
    // Halved down to one message before giving up: more than one call, each one answer read as a count.
    expect(fake.server.requests.length).toBeGreaterThan(1);
    for (const [file, size] of fileSizes(test.space.memoryDir)) {
      expect(size, file).toBeLessThan(MAX_WRITABLE_FILE_BYTES);
    }
    // The session was not consolidated: the next run (a model that answers sensibly now) reads it.
    fake.server.setDefault(() => ({ json: { facts: [rawFact(1)] } }));
    const next = await forcedRunAt(test);
    expect(next.status).toBe('completed');
    expect(next.sessions).toHaveLength(1);
    expect(next.added).toBe(1);
  });

  it('asks again smaller when one answer alone passes maxFactsPerSession for a session', async () => {
    fake.server.setDefault((request) => ({
      json: {
        facts: Array.from({ length: 10 }, (_, index) =>
          rawFact(index, { sources: sessionsInPrompt(request.prompt).map((session) => session.id) }),
        ),
      },
    }));
    const test = createTestSpace({ modelUrl: fake.url, examples: ['2026-11-02-lisbon-delivery.json'] });

    const summary = await forcedRunAt(test, test.space, withLimits(test.config, { maxFactsPerSession: 3 }));

    // Every half still answers ten facts: halved to one message, which waits with the setting to raise.
    expect(summary.added).toBe(0);
    expect(summary.factsDropped).toBeUndefined();
    expect(summary.unconsolidated?.map((entry) => entry.reason)).toEqual(['answer-fact-limit']);
    expect(summary.problems.map((problem) => problem.reason).join('\n')).toMatch(
      /raise limits\.maxFactsPerSession/,
    );
  });

  it('refuses an answer whose every fact is invalid: its sessions wait and the next run takes them', async () => {
    fake.server.enqueue({
      json: { facts: [rawFact(1, { type: 'opinion' }), rawFact(2, { type: 'opinion' })] },
    });
    const test = createTestSpace({ modelUrl: fake.url, examples: true });

    const first = await forcedRunAt(test);
    expect(first.added).toBe(0);
    expect(first.unconsolidated?.map((entry) => entry.reason)).toEqual(Array(7).fill('answer-invalid'));
    expect(first.unconsolidated?.[0]?.detail).toMatch(/none valid \(2 schema\)/);

    const second = await forcedRunAt(test);
    expect(second.status).toBe('completed');
    expect(second.sessions).toHaveLength(7);
    expect(await activeTitles(test)).toEqual(SCRIPTED_TITLES);
  });

  it('drops an answer over maxAnswerChars unread; its sessions wait and the next run takes them', async () => {
    fake.server.enqueue({ json: { facts: [rawFact(1, { body: 'x'.repeat(2_000) })] } });
    const test = createTestSpace({ modelUrl: fake.url, examples: true });

    const first = await forcedRunAt(test, test.space, withLimits(test.config, { maxAnswerChars: 1_000 }));
    expect(first.status).toBe('skipped');
    expect(first.unconsolidated?.map((entry) => entry.reason)).toEqual(Array(7).fill('answer-dropped'));
    expect(fake.server.requests).toHaveLength(1);

    const second = await forcedRunAt(test);
    expect(second.status).toBe('completed');
    expect(second.sessions).toHaveLength(7);
    expect(await activeTitles(test)).toEqual(SCRIPTED_TITLES);
  });
});
