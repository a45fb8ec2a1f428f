import { describe, expect, it } from 'vitest';
import { createConsolidator } from '../../src/consolidation/run.js';
import { createModel } from '../../src/model/index.js';
import type { RunRequest } from '../../src/core/run.js';
import { listRuns, BATCH_IN_FLIGHT_FILE, readLedger, readBatchInFlight } from '../../src/space/index.js';
import {
  faults,
  type FakeAnthropicServer,
  type RecordedAnthropicRequest,
} from '../../harness/fake-anthropic-server.js';
import { startFakeOpenAIServer, type ChatReply } from '../../harness/fake-openai-server.js';
import type { FakeBatchBehaviour } from '../../harness/fake-anthropic-server.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  describeBatchInFlight,
  independentBatches,
  runBatches,
} from '../../src/consolidation/batch/batch.js';
import type { Batch } from '../../src/digest/index.js';
import { BatchResultsUnreadableError, MemoryFormatError } from '../../src/errors.js';
import { spaceStatus } from '../../src/cli/space-status.js';
import { EXAMPLE_FACTS, scriptedExtractor } from '../../harness/scripted-extractor.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import {
  createTestSpace,
  fastConsolidator,
  snapshotDirectory,
  type TestSpace,
  FORCED_RUN,
} from '../support/space.js';
import { activeFacts } from './helpers.js';

const scheduled: RunRequest = { force: true, dryRun: false, trigger: 'schedule' };
const NOW = new Date('2026-11-29T12:00:00Z');
const USAGE = { inputTokens: 2000, outputTokens: 300, cacheReadTokens: 0, cacheWriteTokens: 0 };

function space(url: string, env: Record<string, string> = {}): TestSpace {
  return createTestSpace({
    modelUrl: url,
    examples: true,
    env: { DREAMD_BATCH_POLL_SECONDS: '0.01', DREAMD_DIGEST_TOKENS_PER_CALL: '60000', ...env },
  });
}

function consolidator(test: TestSpace, faultInjection?: (step: string) => void) {
  return fastConsolidator(test.config, {
    now: () => NOW,
    ...(faultInjection === undefined ? {} : { faultInjection }),
  });
}

/** Type, title and body of each active fact, sorted. */
async function activeLines(test: TestSpace): Promise<string[]> {
  return (await activeFacts(test)).map((fact) => `${fact.type}: ${fact.title}: ${fact.body}`).sort();
}

/**
 * After a batch was given up: the next scheduled run, the batch API well again, sends the sessions in a second
 * batch and consolidates them.
 */
async function expectSentAgain(server: FakeAnthropicServer, test: TestSpace): Promise<void> {
  server.setBatchBehaviour({});
  const next = await consolidator(test)(test.space, scheduled);
  expect(next.status).toBe('completed');
  expect(server.batches).toHaveLength(2);
  expect(await activeLines(test)).toHaveLength(6);
}

describe('batch mode', () => {
  const fake = useFakeAnthropic({ usage: USAGE, facts: EXAMPLE_FACTS });

  it('consolidates a scheduled run through a message batch like a synchronous run, at half the cost', async () => {
    const server = fake.server;
    const synchronous = space(server.url);
    const sync = await consolidator(synchronous)(synchronous.space, FORCED_RUN);
    expect(sync.status).toBe('completed');
    expect(server.batches).toHaveLength(0);
    const syncRequests = server.requests.length;

    server.setBatchBehaviour({ pollsBeforeEnd: 2 });
    const batched = space(server.url);
    const run = await consolidator(batched)(batched.space, scheduled);
    expect(run.status).toBe('completed');
    expect(server.batches).toHaveLength(1);
    // Three looks, the third finds it ended; the SDK's results() looks once more for the results URL.
    expect(server.batches[0]!.retrieves).toBe(4);
    expect(server.requests.length - syncRequests).toBe(sync.calls);
    expect(run.calls).toBe(sync.calls);
    expect(run.batch).toMatchObject({
      id: server.batches[0]!.id,
      batchedCalls: sync.calls,
      outcome: 'collected',
    });
    expect(run.costUsd).toBeCloseTo(sync.costUsd! / 2, 9);
    expect(run.batch!.listCostUsd).toBeCloseTo(sync.costUsd!, 9);
    // A batched request asks what the synchronous call asked (structured output included).
    const [syncRequest] = server.requests.filter((request) => request.path === '/v1/messages');
    const [batchRequest] = server.batches[0]!.requests;
    expect(batchRequest!.body.output_config?.format?.schema).toBeDefined();
    expect(batchRequest!.body).toEqual(syncRequest!.body);
    expect(await activeLines(batched)).toEqual(await activeLines(synchronous));
    expect(await readBatchInFlight(batched.space.memoryDir)).toBeUndefined();
    const [record] = await listRuns(batched.space.memoryDir);
    expect(record?.summary.batch).toEqual(run.batch);
  });

  it('collects a batch after a restart instead of submitting it again, and moves the ledger only then', async () => {
    const server = fake.server;
    const test = space(server.url);
    // The first process dies right after it recorded the batch (its locks go with it).
    const crashed = consolidator(test, (step) => {
      if (step === 'after-batch-submit') throw new Error('killed');
    });
    await expect(crashed(test.space, scheduled)).rejects.toThrow('killed');
    expect(server.batches).toHaveLength(1);
    const pending = await readBatchInFlight(test.space.memoryDir);
    expect(pending?.batchId).toBe(server.batches[0]!.id);
    expect(Object.keys((await readLedger(test.space.memoryDir)).sessions)).toEqual([]);
    expect(await activeLines(test)).toEqual([]);

    const restarted = await consolidator(test)(test.space, scheduled);
    expect(restarted.status).toBe('completed');
    expect(server.batches).toHaveLength(1);
    expect(server.requests.filter((request) => request.path === '/v1/messages')).toEqual([]);
    expect(restarted.batch).toMatchObject({ id: pending!.batchId, outcome: 'collected' });
    expect(await activeLines(test)).toHaveLength(6);
    expect(Object.keys((await readLedger(test.space.memoryDir)).sessions).length).toBeGreaterThan(0);
    expect(await readBatchInFlight(test.space.memoryDir)).toBeUndefined();
  });

  it("leaves a FORCED_RUN run the batch's sessions while it is pending", async () => {
    const server = fake.server;
    server.setBatchBehaviour({ pollsBeforeEnd: 100 });
    const test = space(server.url);
    const aborted = new AbortController();
    const waiting = consolidator(test)(test.space, scheduled, {
      signal: aborted.signal,
      onProgress: (progress) => {
        if (progress.message?.startsWith('waiting for') === true) aborted.abort(new Error('stopped'));
      },
    });
    await expect(waiting).rejects.toThrow('stopped');
    const pending = await readBatchInFlight(test.space.memoryDir);
    expect(pending).toBeDefined();

    const run = await consolidator(test)(test.space, FORCED_RUN);
    expect(run.status).toBe('skipped');
    expect(run.calls).toBe(0);
    expect(run.unconsolidated?.map((entry) => entry.reason)).toEqual(
      pending!.requests.flatMap((request) => request.sessions).map(() => 'batch-pending'),
    );
    expect(server.batches).toHaveLength(1);
    expect(await activeLines(test)).toEqual([]);
  });

  it.each([
    ['expired', 'expired' as const, /expired/],
    ['errored', 'errored' as const, /errored/],
    ['gone', 'gone' as const, /HTTP 404/],
  ])('leaves every session waiting and nothing written when the batch %s', async (_name, outcome, why) => {
    const server = fake.server;
    server.setBatchBehaviour({ outcome });
    const test = space(server.url);
    const before = snapshotDirectory(test.space.memoryDir);
    const run = await consolidator(test)(test.space, scheduled);
    expect(run.status).toBe('skipped');
    expect(run.reason).toEqual(expect.stringMatching(why));
    expect(run.batch).toMatchObject({ outcome: 'failed', batchedCalls: 0 });
    expect(run.unconsolidated?.length).toBeGreaterThan(0);
    expect(new Set(run.unconsolidated?.map((entry) => entry.reason))).toEqual(new Set(['batch-failed']));
    const after = snapshotDirectory(test.space.memoryDir);
    after.delete('.dreamd/waiting.json');
    expect(after).toEqual(before);
    expect(await readBatchInFlight(test.space.memoryDir)).toBeUndefined();

    await expectSentAgain(server, test);
  });

  it('uses the answers of a partly failed batch and sends the rest synchronously', async () => {
    const server = fake.server;
    server.setBatchBehaviour({ outcome: { partial: 1 } });
    const synchronous = space(server.url, { DREAMD_DIGEST_TOKENS_PER_CALL: '1500' });
    const sync = await consolidator(synchronous)(synchronous.space, FORCED_RUN);
    const test = space(server.url, { DREAMD_DIGEST_TOKENS_PER_CALL: '1500' });
    const run = await consolidator(test)(test.space, scheduled);
    expect(run.status).toBe('completed');
    const requests = server.batches[0]!.requests.length;
    expect(requests).toBeGreaterThan(1);
    expect(run.batch).toMatchObject({ requests, batchedCalls: 1 });
    expect(run.calls).toBe(sync.calls);
    expect(run.costUsd).toBeGreaterThan(sync.costUsd! / 2);
    expect(run.costUsd).toBeLessThan(sync.costUsd!);
    expect(await activeLines(test)).toEqual(await activeLines(synchronous));
  });

  it('splits an answer the batch cut at the output limit and sends the halves synchronously', async () => {
    const server = fake.server;
    server.enqueue(faults.maxTokens());
    const test = space(server.url);
    const run = await consolidator(test)(test.space, scheduled);
    expect(run.status).toBe('completed');
    expect(run.batch).toMatchObject({ requests: 1, batchedCalls: 1 });
    expect(run.notes?.join('\n')).toEqual(expect.stringMatching(/split in two/));
    expect(
      server.requests.filter((request) => request.path === '/v1/messages').length,
    ).toBeGreaterThanOrEqual(2);
    expect(await activeLines(test)).toHaveLength(6);
  });

  it('calls synchronously when model.batch is never, for a FORCED_RUN run, and for a provider without batches', async () => {
    const server = fake.server;
    const never = space(server.url, { DREAMD_MODEL_BATCH: 'never' });
    expect((await consolidator(never)(never.space, scheduled)).batch).toBeUndefined();
    const byHand = space(server.url);
    expect((await consolidator(byHand)(byHand.space, FORCED_RUN)).batch).toBeUndefined();
    expect(server.batches).toHaveLength(0);
    const asked = space(server.url);
    const run = await consolidator(asked)(asked.space, { ...FORCED_RUN, batch: true });
    expect(run.batch).toMatchObject({ outcome: 'collected' });
    expect(server.batches).toHaveLength(1);
    const openai = createModel({
      provider: 'openai-compatible',
      name: 'local',
      baseUrl: server.url,
      apiKey: 'k',
    });
    expect(runBatches(asked.config, scheduled, openai)).toBe(false);
    expect(runBatches(asked.config, scheduled, createModel(asked.config.model))).toBe(true);
  });

  it.each([
    ['has no batch route', 'missing' as const, /POST \/v1\/messages\/batches answered 404/],
    ['does not allow POST there (405)', { status: 405 }, /batches answered 405/],
    ['does not implement the route (501)', { status: 501 }, /batches answered 501/],
    [
      'answers 400 not_found_error',
      { status: 400, type: 'not_found_error', message: 'Not Found' },
      /batches answered 400/,
    ],
    [
      'answers 400 with an unknown-route message',
      { status: 400, message: 'Invalid URL (POST /v1/messages/batches)' },
      /batches answered 400/,
    ],
    [
      'answers the batch route out of shape',
      'out-of-shape' as const,
      /its answer is not a message batch: id: /,
    ],
  ] satisfies [string, FakeBatchBehaviour['api'], RegExp][])(
    'falls back to ordinary calls, with a warning naming the endpoint, when it %s',
    async (_label, api, detail) => {
      const server = fake.server;
      server.setBatchBehaviour({ api });
      const test = space(server.url);
      const run = await consolidator(test)(test.space, scheduled);
      expect(run.status).toBe('completed');
      expect(run.batch).toBeUndefined();
      expect(run.calls).toBeGreaterThan(0);
      expect(await readBatchInFlight(test.space.memoryDir)).toBeUndefined();
      expect((await activeLines(test)).length).toBeGreaterThan(0);
      const warning = run.notes?.find((note) => note.includes('has no message batch API'));
      expect(warning).toContain(server.url);
      expect(warning).toMatch(detail);
      expect(warning).toMatch(/model\.batch to "never"/);
      expect(run.reason).not.toMatch(/ZodError/);
    },
  );

  it.each([
    [
      'a key the batch API refuses (401)',
      { status: 401, type: 'authentication_error', message: 'invalid x-api-key' },
    ],
    ['a key without batch access (403)', { status: 403, type: 'permission_error', message: 'not allowed' }],
    [
      'a request the batch API refuses (400)',
      { status: 400, message: 'requests.0.params.max_tokens: too large' },
    ],
  ] satisfies [string, FakeBatchBehaviour['api']][])(
    "does not fall back on %s: the run fails with the server's words, nothing written, sessions wait",
    async (_label, api) => {
      const server = fake.server;
      server.setBatchBehaviour({ api });
      const test = space(server.url);
      const before = snapshotDirectory(test.space.memoryDir);
      const run = await consolidator(test)(test.space, scheduled).catch((error: unknown) => error);
      const words = run instanceof Error ? run.message : JSON.stringify(run);
      expect(words).toContain(`HTTP ${api.status}`);
      expect(words).not.toMatch(/has no message batch API/);
      expect(server.requests.filter((request) => request.path === '/v1/messages')).toHaveLength(0);
      const after = snapshotDirectory(test.space.memoryDir);
      for (const file of [...after.keys()]) if (file.startsWith('.dreamd/')) after.delete(file);
      for (const file of [...before.keys()]) if (file.startsWith('.dreamd/')) before.delete(file);
      expect(after).toEqual(before);
    },
  );

  it('gives up a batch still unfinished past its 24 hours: canceled, nothing written, sessions wait', async () => {
    const server = fake.server;
    server.setBatchBehaviour({ pollsBeforeEnd: 1_000 });
    const test = space(server.url);
    const later = new Date(Date.now() + 26 * 3_600_000);
    const run = await createConsolidator({
      config: test.config,
      model: () => createModel(test.config.model),
      now: () => later,
    })(test.space, scheduled);
    expect(run.status).toBe('skipped');
    expect(run.reason).toEqual(expect.stringMatching(/passed its expiry/));
    expect(server.batches[0]!.canceled).toBe(true);
    expect(new Set(run.unconsolidated?.map((entry) => entry.reason))).toEqual(new Set(['batch-failed']));
    expect(await activeLines(test)).toEqual([]);
    expect(await readBatchInFlight(test.space.memoryDir)).toBeUndefined();
  });

  it.each([
    ['cut short', 'cut' as const, /not JSON lines/],
    ['answering 500', { status: 500 }, /HTTP 500/],
  ])(
    'names a batch whose results cannot be read (%s) with the fix, shows it in status, gives it up after three tries',
    async (_name, results, why) => {
      const server = fake.server;
      server.setBatchBehaviour({ results });
      const test = space(server.url);
      const before = snapshotDirectory(test.space.memoryDir);
      for (const tries of [1, 2]) {
        const run = consolidator(test)(test.space, scheduled);
        await expect(run).rejects.toThrow(BatchResultsUnreadableError);
        await expect(run).rejects.toThrow(
          new RegExp(
            `message batch ${server.batches[0]!.id} \\(space "${test.space.id}"\\) could not be read: .*` +
              `failed collection ${tries} of 3.*dreamd batch cancel ${test.space.id}`,
          ),
        );
        await expect(run).rejects.toThrow(why);
        const status = await spaceStatus(test.space, { config: test.config });
        expect(status.batch.pending?.unreadable).toMatchObject({ tries, maxTries: 3 });
        expect(status.batch.pending?.description).toMatch(
          new RegExp(`could not be read in ${tries} of 3 collections .*dreamd batch cancel ${test.space.id}`),
        );
      }
      // Nothing but the batch record was written, and only one batch was ever submitted.
      const during = snapshotDirectory(test.space.memoryDir);
      during.delete(BATCH_IN_FLIGHT_FILE);
      expect(during).toEqual(before);
      expect(server.batches).toHaveLength(1);

      // The third failed collection gives the batch up: its sessions wait and the next run sends them again.
      const third = await consolidator(test)(test.space, scheduled);
      expect(third.status).toBe('skipped');
      expect(third.reason).toMatch(/could not be read in 3 collections/);
      expect(new Set(third.unconsolidated?.map((entry) => entry.reason))).toEqual(new Set(['batch-failed']));
      expect(await readBatchInFlight(test.space.memoryDir)).toBeUndefined();
      await expectSentAgain(server, test);
    },
  );

  it('collects a batch whose results could not be read once when they can be read again', async () => {
    const server = fake.server;
    server.setBatchBehaviour({ results: 'cut' });
    const test = space(server.url);
    await expect(consolidator(test)(test.space, scheduled)).rejects.toThrow(BatchResultsUnreadableError);
    server.setBatchBehaviour({});
    const run = await consolidator(test)(test.space, scheduled);
    expect(run.status).toBe('completed');
    expect(run.batch).toMatchObject({ id: server.batches[0]!.id, outcome: 'collected' });
    expect(server.batches).toHaveLength(1);
    expect(await activeLines(test)).toHaveLength(6);
    expect(await readBatchInFlight(test.space.memoryDir)).toBeUndefined();
  });

  it('names the file and the fix when .dreamd/batch.json is not a batch record', async () => {
    const server = fake.server;
    const test = space(server.url);
    mkdirSync(join(test.space.memoryDir, '.dreamd'), { recursive: true });
    writeFileSync(join(test.space.memoryDir, BATCH_IN_FLIGHT_FILE), '{"batchId": 7');
    const run = consolidator(test)(test.space, scheduled);
    await expect(run).rejects.toThrow(MemoryFormatError);
    await expect(run).rejects.toThrow(
      /batch\.json is not a pending batch record .*delete it to give the batch up/,
    );
    expect(server.batches).toHaveLength(0);
  });
});

describe('batch mode on a provider without a batch API', () => {
  it('runs a scheduled run synchronously on openai-compatible, whatever model.batch says', async () => {
    const openai = await startFakeOpenAIServer();
    try {
      const scripted = scriptedExtractor(EXAMPLE_FACTS);
      openai.setDefault((request) => scripted(request as unknown as RecordedAnthropicRequest) as ChatReply);
      const test = createTestSpace({
        modelUrl: openai.url,
        examples: true,
        env: {
          DREAMD_MODEL_PROVIDER: 'openai-compatible',
          DREAMD_MODEL: 'llama3.2',
          DREAMD_MODEL_BATCH: 'always',
          OPENAI_API_KEY: 'k',
        },
      });
      const run = await consolidator(test)(test.space, scheduled);
      expect(run.status).toBe('completed');
      expect(run.batch).toBeUndefined();
      expect(run.calls).toBeGreaterThan(0);
      expect(await activeLines(test)).toHaveLength(6);
      expect(await readBatchInFlight(test.space.memoryDir)).toBeUndefined();
    } finally {
      await openai.close();
    }
  });
});

describe('the independent calls of a run', () => {
  const batch = (...sessionIds: string[]) => ({ sessionIds, text: sessionIds.join(' ') }) as unknown as Batch;

  it('are the first part of every session, within the call budget', () => {
    const a1 = batch('a');
    const a2 = batch('a');
    const bc = batch('b', 'c');
    const c2d = batch('c', 'd');
    const e = batch('e');
    expect(independentBatches([a1, a2, bc, c2d, e], 10)).toEqual([a1, bc, e]);
    expect(independentBatches([a1, a2, bc, c2d, e], 2)).toEqual([a1, bc]);
  });

  it('describe a pending batch with its age', () => {
    const pending = {
      batchId: 'msgbatch_1',
      model: 'anthropic:claude-haiku-5-5',
      runId: 'run-1',
      submittedAt: '2026-12-01T10:00:00.000Z',
      expiresAt: '2026-12-02T10:00:00.000Z',
      requests: [
        { customId: 'part-1', digest: 'x', sessions: ['a', 'b'], files: ['a.json', 'b.json'] },
        { customId: 'part-2', digest: 'y', sessions: ['c'], files: ['c.json'] },
      ],
    };
    expect(describeBatchInFlight(pending, new Date('2026-12-01T10:42:00.000Z'), 'notes')).toBe(
      'msgbatch_1 pending for 42 min (2 request(s), 3 session(s); expires 2026-12-02T10:00:00.000Z)',
    );
    expect(describeBatchInFlight(pending, new Date('2026-12-01T15:30:00.000Z'), 'notes')).toEqual(
      expect.stringMatching(/^msgbatch_1 pending for 5\.5 h /),
    );
    const unreadable = {
      ...pending,
      unreadable: { tries: 2, lastAt: '2026-12-01T11:00:00.000Z', message: 'Unterminated string in JSON' },
    };
    expect(describeBatchInFlight(unreadable, new Date('2026-12-01T11:00:00.000Z'), 'notes')).toBe(
      'msgbatch_1 pending for 60 min (2 request(s), 3 session(s); expires 2026-12-02T10:00:00.000Z); its results ' +
        'could not be read in 2 of 3 collections (last 2026-12-01T11:00:00.000Z: Unterminated string in JSON); ' +
        'given up after 3, or now with `dreamd batch cancel notes`',
    );
  });
});
