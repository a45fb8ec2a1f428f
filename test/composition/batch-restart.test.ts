import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { listRuns, readLedger, readBatchInFlight } from '../../src/space/index.js';
import { EXAMPLE_FACTS, scriptedExtractor } from '../../harness/scripted-extractor.js';
import { eventually } from '../support/eventually.js';
import { createTestSpace } from '../support/space.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { aRunRecord, withDaemon } from './helpers.js';

const fake = useFakeAnthropic();

describe('a daemon in batch mode', () => {
  it('stopped while its scheduled run waits for a batch, collects that batch after a restart and never submits it twice', async () => {
    const test = createTestSpace({
      modelUrl: fake.url,
      examples: true,
      env: { DREAMD_BATCH_POLL_SECONDS: '0.05' },
    });
    const config: Config = test.config;
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    fake.server.setBatchBehaviour({ pollsBeforeEnd: 1_000_000 });
    const logger = pino({ level: 'silent' });

    await withDaemon(
      config,
      logger,
      async (daemon) => {
        const tick = await daemon.tick();
        expect(tick.spaces.map((space) => space.outcome)).toEqual(['enqueued']);
        await eventually(async () => fake.server.batches.length === 1, 10_000, 'a submitted batch');
        await eventually(
          async () => (fake.server.batches[0]?.retrieves ?? 0) >= 2,
          10_000,
          'the run polling its batch',
        );
      },
      { workerTiming: { shutdownTimeoutMs: 200 } },
    );
    // Stopped mid-wait: the batch is recorded, nothing consolidated, no lock left behind.
    expect((await readBatchInFlight(test.space.memoryDir))?.batchId).toBe(fake.server.batches[0]!.id);
    expect(Object.keys((await readLedger(test.space.memoryDir)).sessions)).toEqual([]);
    expect(await listRuns(test.space.memoryDir)).toEqual([]);

    // The batch ends; a new daemon's scheduled run collects it.
    fake.server.batches[0]!.behaviour = {};
    await withDaemon(config, logger, async (restarted) => {
      const tick = await restarted.tick();
      expect(tick.spaces.map((space) => space.outcome)).toEqual(['enqueued']);
      await aRunRecord(test.space.memoryDir);
    });
    expect(fake.server.batches).toHaveLength(1);
    expect(fake.server.requests.filter((request) => request.path === '/v1/messages')).toEqual([]);
    const [run] = await listRuns(test.space.memoryDir);
    expect(run!.summary.batch).toMatchObject({ id: fake.server.batches[0]!.id, outcome: 'collected' });
    expect(run!.summary.sessions.length).toBeGreaterThan(0);
    expect(await readBatchInFlight(test.space.memoryDir)).toBeUndefined();
  });
});
