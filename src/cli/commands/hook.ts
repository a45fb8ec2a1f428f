import type { Command } from 'commander';
import type { Config, Space } from '../../config/schema.js';
import type { CliIo } from '../output.js';
import { emitResult } from '../output.js';
import type { CommandRegistrar } from '../program.js';

/**
 * `dreamd hook session-start|session-end`: what Claude Code's hooks run (the plugin in `plugin/`). Both work
 * on the space of the project folder (the path given, else `CLAUDE_PROJECT_DIR`, else the working directory),
 * chosen as `dreamd mcp` chooses it, and stay quiet where dreamd serves no space: a hook never stands in a
 * session's way.
 */

/** The project folder a hook is about. */
function projectFolder(io: CliIo, path: string | undefined): string {
  const fromClaude = io.env.CLAUDE_PROJECT_DIR;
  return path ?? (fromClaude !== undefined && fromClaude !== '' ? fromClaude : io.cwd);
}

/** The space that serves the folder, or undefined (with why) when none does. */
async function spaceOf(
  config: Config,
  folder: string,
): Promise<{ space: Space; why?: undefined } | { space?: undefined; why: string }> {
  const [{ chooseSpace }, { ConfigError }] = await Promise.all([
    import('../mcp/mcp-space.js'),
    import('../../errors.js'),
  ]);
  try {
    return { space: (await chooseSpace(config, { roots: [], cwd: folder })).space };
  } catch (error) {
    if (error instanceof ConfigError && error.field === 'space') return { why: error.message };
    throw error;
  }
}

/** Most rules the session-start hook puts in context (status lists five). */
const RULES_SHOWN = 5;

export const registerHook: CommandRegistrar = (program, context) => {
  const hook = program
    .command('hook')
    .description(
      "what Claude Code's hooks run: session-start (the rules people keep re-teaching, as context), session-end (ask the daemon to check the space)",
    );

  hook
    .command('session-start')
    .description(
      "print the rules people had to teach again in this project's memory, as Claude Code's SessionStart hook output (nothing when there are none)",
    )
    .argument('[path]', 'the project folder (default: $CLAUDE_PROJECT_DIR, else the working directory)')
    .action(async (path: string | undefined, _options: object, _command: Command) => {
      const { io, json, discoveredConfig } = context();
      const found = await spaceOf(await discoveredConfig(), projectFolder(io, path));
      let rules: { id: string; title: string; body: string; count: number; last: string }[] = [];
      if (found.space !== undefined) {
        const [{ loadMemory }, { mostTaughtAgain }] = await Promise.all([
          import('../../space/index.js'),
          import('../../memory/taught-again.js'),
        ]);
        const memory = await loadMemory(found.space.memoryDir);
        const byId = new Map(memory.facts.map((fact) => [fact.id, fact]));
        rules = mostTaughtAgain(memory.facts, RULES_SHOWN).map((rule) => ({
          id: rule.id,
          title: rule.title,
          body: byId.get(rule.id)?.body ?? '',
          count: rule.count,
          last: rule.last,
        }));
      }
      if (json) {
        emitResult(
          io,
          true,
          { command: 'hook session-start', data: { space: found.space?.id ?? null, rules } },
          () => '',
        );
        return;
      }
      if (rules.length === 0) return;
      const additionalContext = [
        `Rules the user has had to teach again in this project after they were saved (dreamd memory of space ${found.space!.id}); apply them:`,
        ...rules.map(
          (rule) => `- ${rule.title}: ${rule.body} (taught again ${rule.count}×, last ${rule.last})`,
        ),
      ].join('\n');
      io.stdout(
        `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext } })}\n`,
      );
    });

  hook
    .command('session-end')
    .description(
      'tell the daemon that serves this project a session ended: it checks the space now, its gates decide (never a forced run); without a daemon, nothing',
    )
    .argument('[path]', 'the project folder (default: $CLAUDE_PROJECT_DIR, else the working directory)')
    .action(async (path: string | undefined, _options: object, _command: Command) => {
      const { io, json, discoveredConfig } = context();
      const config = await discoveredConfig();
      const found = await spaceOf(config, projectFolder(io, path));
      let data: { space: string | null; daemon: string | null; jobId: string | null; note: string };
      if (found.space === undefined) {
        data = { space: null, daemon: null, jobId: null, note: `nothing to do: ${found.why}` };
      } else {
        const { createDaemonClient } = await import('../daemon-client.js');
        const daemon = createDaemonClient(config);
        const match = await daemon.serves([found.space]);
        if (!match.use) {
          data = {
            space: found.space.id,
            daemon: null,
            jobId: null,
            note: `nothing to do: ${match.why}; the next scheduled or manual run reads the session`,
          };
        } else {
          // Not forced: the run checks the gates as a scheduled one does, and skips when they are closed.
          const queued = await daemon.enqueue(found.space.id, { force: false, dryRun: false });
          data = {
            space: found.space.id,
            daemon: daemon.baseUrl,
            jobId: queued.jobId,
            note:
              queued.status === 'duplicate'
                ? `the space already has job ${queued.jobId} queued or running`
                : `the daemon checks the space now (job ${queued.jobId}); its gates decide whether it runs`,
          };
        }
      }
      emitResult(io, json, { command: 'hook session-end', data }, () => '');
      if (!json) io.stderr(`dreamd: ${data.space === null ? '' : `space ${data.space}: `}${data.note}\n`);
    });
};
