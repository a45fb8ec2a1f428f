import { createMemoryAgent } from '../../agent/memory-agent.js';
import { findSpace } from '../../config/load.js';
import { ConfigError } from '../../errors.js';
import { emit } from '../output.js';
import type { CommandRegistrar } from '../program.js';

export const registerChat: CommandRegistrar = (program, context) => {
  program
    .command('chat')
    .description(
      'talk to a small agent with memory: it loads MEMORY.md, can save and recall, and records the session',
    )
    .argument('<message>', 'what to say')
    .option('--space <id>', 'space whose memory the agent uses (default: the only one)')
    .option('--max-turns <n>', 'most model calls for this message', (value) => Number.parseInt(value, 10), 10)
    .action(async (message: string, flags: { space?: string; maxTurns: number }) => {
      const { io, json, config } = context();
      const loaded = config();
      if (loaded.model.provider !== 'anthropic') {
        throw new ConfigError(
          'dreamd chat uses the Anthropic Messages API; set model.provider to "anthropic"',
          'model.provider',
        );
      }
      if (loaded.model.apiKey === undefined && loaded.model.baseUrl === undefined) {
        throw new ConfigError(
          'dreamd chat needs a model: export ANTHROPIC_API_KEY=… (or DREAMD_MODEL_API_KEY)',
          'model.apiKey',
        );
      }
      const space = findSpace(loaded, flags.space);
      const agent = await createMemoryAgent({ space, config: loaded, maxTurns: flags.maxTurns });
      try {
        const result = await agent.chat(message);
        emit(
          io,
          json,
          {
            ok: true,
            space: space.id,
            sessionId: agent.sessionId,
            sessionFile: agent.sessionFile,
            text: result.text,
            turns: result.turns,
            usage: result.usage,
          },
          () => result.text,
        );
      } finally {
        await agent.end();
      }
    });
};
