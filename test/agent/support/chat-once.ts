/**
 * One `dreamd chat`-style session in its own process, for the two-process memory test: creates the memory
 * agent of a space from the environment, sends one prompt, ends the session and prints the result as JSON.
 * Env: ANTHROPIC_BASE_URL (the fake server), MEMORY_DIR, SESSIONS_DIR, PROMPT.
 */
import { createMemoryAgent } from '../../../src/agent/memory-agent.js';
import { ModelConfig } from '../../../src/config/schema.js';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}

const agent = await createMemoryAgent({
  space: {
    id: 'demo',
    sessionsDir: required('SESSIONS_DIR'),
    memoryDir: required('MEMORY_DIR'),
    format: 'native',
  },
  config: {
    model: ModelConfig.parse({
      name: 'claude-haiku-5-5',
      apiKey: 'test-key',
      baseUrl: required('ANTHROPIC_BASE_URL'),
      maxRetries: 0,
    }),
    embeddings: undefined,
  },
});
const result = await agent.chat(required('PROMPT'));
await agent.end();
process.stdout.write(
  `${JSON.stringify({ text: result.text, sessionFile: result.sessionFile, turns: result.turns })}\n`,
);
