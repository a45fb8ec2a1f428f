import { afterAll, describe, expect, it } from 'vitest';
import { ModelError } from '../../src/errors.js';
import { readLedger } from '../../src/space/index.js';
import { faults, startFakeAnthropicServer, type FakeFault } from '../../harness/fake-anthropic-server.js';
import { EXAMPLE_FACTS, scriptedExtractor } from '../../harness/scripted-extractor.js';
import {
  MANUAL,
  checkMemory,
  consolidatorFor,
  createWorkspace,
  readTree,
  cleanUpWorkspaces,
} from './support/harness.js';

/**
 * Every model failure the fake server can produce, through the real SDK over HTTP: once (retried, then the run
 * succeeds) and on every attempt (the run fails with the ModelError kind, writes nothing, and the sessions stay
 * pending for the next run).
 */

const CASES: readonly { name: string; fault: FakeFault; kind: string }[] = [
  { name: '429 with retry-after', fault: faults.rateLimited(0.05), kind: 'rate-limited' },
  { name: '529 overloaded', fault: faults.overloaded(), kind: 'overloaded' },
  { name: '500 server error', fault: faults.serverError(), kind: 'server' },
  { name: 'a timeout (the server hangs)', fault: { fault: 'hang' }, kind: 'timeout' },
  { name: 'a dropped connection', fault: { fault: 'drop' }, kind: 'connection' },
  { name: 'output that breaks the schema', fault: faults.badOutput(), kind: 'bad-output' },
  { name: 'an empty answer', fault: { fault: 'empty' }, kind: 'bad-output' },
];

afterAll(cleanUpWorkspaces);

/** Model retries in these workspaces: 3 attempts in all. */
const MAX_RETRIES = 2;

async function setUp(fault: FakeFault) {
  const server = await startFakeAnthropicServer();
  const hangs = fault.fault === 'hang';
  const workspace = createWorkspace({
    modelUrl: server.url,
    spaces: [{ id: 'faults', examples: true }],
    maxRetries: MAX_RETRIES,
    // A hang is ended by the client's timeout; short here so the case takes a second, not a minute.
    timeoutMs: hangs ? 300 : 10_000,
  });
  return { server, workspace, space: workspace.space('faults') };
}

describe('model faults', () => {
  it.each(CASES)('retries $name once and then completes the run', async ({ fault }) => {
    const { server, workspace, space } = await setUp(fault);
    try {
      server.enqueue(fault);
      server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
      const summary = await consolidatorFor(workspace.config)(space, MANUAL);
      expect(summary.status).toBe('completed');
      expect(summary.sessions).toHaveLength(7);
      expect(server.requests).toHaveLength(2);
      // The retry is the same request again.
      expect(server.requests[1]!.prompt).toBe(server.requests[0]!.prompt);
      const check = await checkMemory(space.memoryDir);
      expect(check.problems).toEqual([]);
      expect(check.activeTitles).toHaveLength(6);
      expect(check.ledgerSessions).toHaveLength(7);
    } finally {
      await server.close();
    }
  });

  it.each(CASES)(
    'fails with kind $kind after the retries run out on $name, writes nothing, and the sessions stay pending',
    async ({ fault, kind }) => {
      const { server, workspace, space } = await setUp(fault);
      try {
        server.setDefault(fault);
        const before = readTree(space.memoryDir);
        const failure = await consolidatorFor(workspace.config)(space, MANUAL).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failure).toBeInstanceOf(ModelError);
        expect((failure as ModelError).details.kind).toBe(kind);
        expect((failure as ModelError).message).toMatch(/gave up after 3 attempts/);
        expect(server.requests).toHaveLength(MAX_RETRIES + 1);
        expect(readTree(space.memoryDir)).toEqual(before);
        expect(Object.keys((await readLedger(space.memoryDir)).sessions)).toEqual([]);

        // The next run, with the model back, consolidates every pending session.
        server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
        const next = await consolidatorFor(workspace.config)(space, MANUAL);
        expect(next.status).toBe('completed');
        expect(next.sessions).toHaveLength(7);
        expect((await checkMemory(space.memoryDir)).ledgerSessions).toHaveLength(7);
      } finally {
        await server.close();
      }
    },
  );
});
