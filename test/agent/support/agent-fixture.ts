import Anthropic from '@anthropic-ai/sdk';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach } from 'vitest';
import {
  createMemoryAgent,
  type MemoryAgent,
  type MemoryAgentOptions,
} from '../../../src/agent/memory-agent.js';
import { ModelConfig, type Space } from '../../../src/config/schema.js';
import { useFakeAnthropic, useTempDir, type FakeAnthropicFixture } from '../../support/fixtures.js';

/** What a memory agent test works with; see useAgentFixture. */
export interface AgentFixture {
  readonly fake: FakeAnthropicFixture;
  /** An Anthropic SDK client on the fake server, without retries. */
  readonly client: Anthropic;
  /** This test's own temporary folder. */
  readonly base: string;
  /** A native space `id` in this test's folder (nothing created yet). */
  readonly space: (id: string) => Space;
  /** An agent's config on the fake server: the model without retries, no embeddings. */
  readonly config: () => { model: ModelConfig; embeddings: undefined };
  /** A memory agent of `space` with this config and client (`options` over them). */
  readonly agent: (
    space: Space,
    options?: Partial<Omit<MemoryAgentOptions, 'space'>>,
  ) => Promise<MemoryAgent>;
}

/**
 * What the memory agent tests share: a fake Anthropic server for the whole file, an SDK client on it, a fresh
 * temporary folder for each test (removed after it), no recorded request and no default answer left from the
 * test before. Call it at the top of the file, before the file's own hooks.
 */
export function useAgentFixture(name: string): AgentFixture {
  const fake = useFakeAnthropic({ scope: 'all' });
  let client: Anthropic | undefined;
  const base = useTempDir(name);
  beforeAll(() => {
    client = new Anthropic({ apiKey: 'k', baseURL: fake.url, maxRetries: 0 });
  });
  beforeEach(() => {
    fake.server.requests.length = 0;
  });
  afterEach(() => {
    fake.server.setDefault(undefined);
  });
  const folder = (): string => base.path;
  const config = () => ({
    model: ModelConfig.parse({ apiKey: 'k', baseUrl: fake.url, maxRetries: 0 }),
    embeddings: undefined,
  });
  const fixture: AgentFixture = {
    fake,
    get client() {
      if (client === undefined) throw new Error('useAgentFixture: use the client inside a test');
      return client;
    },
    get base() {
      return folder();
    },
    space: (id) => ({
      id,
      sessionsDir: path.join(folder(), id, 'sessions'),
      memoryDir: path.join(folder(), id, 'memory'),
      format: 'native',
    }),
    config,
    agent: (space, options = {}) =>
      createMemoryAgent({ space, config: config(), client: fixture.client, ...options }),
  };
  return fixture;
}
