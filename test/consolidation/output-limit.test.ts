import { describe, expect, it } from 'vitest';
import { listRuns } from '../../src/space/index.js';
import { faults } from '../../harness/fake-anthropic-server.js';
import { EXAMPLE_ACTIVE_TITLES, EXAMPLE_FACTS, sessionsInPrompt } from '../../harness/scripted-extractor.js';
import { createTestSpace } from '../support/space.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { activeFacts, forcedRunAt } from './helpers.js';

/** An answer that stops at max_tokens: the batch is split and the run goes on; no request is sent twice. */

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });

describe('an answer cut off at the output limit', () => {
  it('splits the batch, goes on, never resends the identical request, and records what happened', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: true });
    // The first two answers stop at max_tokens (the whole batch, then its first half).
    fake.server.enqueue(faults.maxTokens(), faults.maxTokens());
    const summary = await forcedRunAt(test);

    expect(summary.status).toBe('completed');
    const prompts = fake.server.requests.map((request) => request.prompt);
    expect(new Set(prompts).size).toBe(prompts.length);
    // The sessions of the first request reached the model again, in smaller requests, each once.
    const first = sessionsInPrompt(prompts[0]!).map((session) => session.id);
    const answered = fake.server.requests
      .slice(2)
      .flatMap((request) => sessionsInPrompt(request.prompt).map((s) => s.id));
    expect([...answered].sort()).toEqual([...first].sort());
    expect(summary.calls).toBe(fake.server.requests.length);
    expect(summary.notes?.join('\n')).toMatch(/2 answer\(s\) stopped at the output limit .* split in two/);
    const [record] = await listRuns(test.space.memoryDir);
    expect(record?.summary.notes).toEqual(summary.notes);
    const titles = await activeFacts(test);
    expect(titles.map((fact) => fact.title).sort()).toEqual(EXAMPLE_ACTIVE_TITLES);
  });
});
