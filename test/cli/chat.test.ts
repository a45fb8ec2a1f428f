import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startFakeOpenAIServer } from '../../harness/fake-openai-server.js';
import { runCliCaptured } from '../support/cli.js';
import { modelEnv, tempDirRemovedAfterTest, useFakeAnthropic } from '../support/fixtures.js';

const run = promisify(execFile);
const BIN = new URL('../../bin/dreamd.js', import.meta.url).pathname;

const fake = useFakeAnthropic();

function workspace(): string {
  const dir = tempDirRemovedAfterTest('chat');
  mkdirSync(join(dir, 'sessions'));
  return dir;
}

describe('dreamd chat', () => {
  it('remembers a preference in one process and uses it in the next (two real processes)', async () => {
    const cwd = workspace();
    const env = { ...process.env, ...modelEnv(fake.url) };
    fake.server.enqueue(
      {
        toolUse: [
          {
            name: 'write_memory',
            input: {
              type: 'user',
              title: "Doesn't eat spicy food",
              body: "The user doesn't eat spicy food.",
            },
          },
        ],
      },
      { text: 'Noted: no spicy food.' },
    );
    const first = await run(
      process.execPath,
      [BIN, 'chat', "Remember that I don't eat spicy food", '--json'],
      { cwd, env },
    );
    expect(JSON.parse(first.stdout)).toMatchObject({ ok: true, text: 'Noted: no spicy food.' });
    const toolResult = JSON.stringify(fake.server.requests[1]!.body.messages);
    expect(toolResult).toContain('tool_result');

    fake.server.enqueue({ text: 'Try Prado: mild, seasonal dishes.' });
    const second = await run(process.execPath, [BIN, 'chat', 'Recommend a restaurant for tonight'], {
      cwd,
      env,
    });
    expect(second.stdout.trim()).toBe('Try Prado: mild, seasonal dishes.');
    const system = fake.server.requests[2]!.system;
    expect(system).toContain("Doesn't eat spicy food");
    expect(system).toMatch(/background/i);
    // Both sessions were recorded for consolidation.
    expect(readdirSync(join(cwd, 'sessions')).filter((name) => name.endsWith('.json'))).toHaveLength(2);
  });

  it('says how to get a model when there is no key, with exit code 2', async () => {
    const result = await runCliCaptured(['chat', 'hello'], { cwd: workspace() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('ANTHROPIC_API_KEY');
  });

  const anthropicEnv = () => modelEnv(fake.url);
  const sessionFiles = (cwd: string) =>
    readdirSync(join(cwd, 'sessions')).filter((name) => name.endsWith('.json'));

  it('refuses --max-turns 0 or abc as bad usage (exit 2) and records no session', async () => {
    const cwd = workspace();
    for (const value of ['0', 'abc', '-1']) {
      const result = await runCliCaptured(['chat', 'hello', '--max-turns', value], {
        cwd,
        env: anthropicEnv(),
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/max-turns/);
    }
    expect(sessionFiles(cwd)).toEqual([]);
    expect(fake.server.requests).toHaveLength(0);
  });

  it('prints each tool call and its result on one line with --verbose, and the stop reason', async () => {
    const cwd = workspace();
    fake.server.enqueue(
      {
        toolUse: [
          {
            name: 'write_memory',
            input: {
              type: 'user',
              title: 'No spicy',
              body: 'No spicy food.',
            },
          },
        ],
      },
      { text: 'Noted.' },
    );
    const result = await runCliCaptured(['chat', 'I do not eat spicy food', '--verbose'], {
      cwd,
      env: anthropicEnv(),
    });
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('Noted.');
    const lines = result.stderr.trim().split('\n');
    expect(lines[0]).toMatch(
      /^\[memory backfill\] [\d,]+ bytes of memory \(\d+ lines\) in the system prompt; 0 facts/,
    );
    expect(lines[1]).toMatch(/^\[turn 1\] called write_memory \{"type":"user",/);
    expect(lines[2]).toMatch(/^\[turn 1\] write_memory → Saved f-[a-z2-7]{10} "No spicy" in user\.md/);
    expect(result.stderr).toContain('[stop: end_turn, 2 model calls');

    // The next message sees the note in MEMORY.md, and the backfill line says how much memory it got.
    fake.server.enqueue({ text: 'No spicy food, noted.' });
    const again = await runCliCaptured(['chat', 'what do I eat?', '--verbose'], { cwd, env: anthropicEnv() });
    const backfill = /^\[memory backfill\] ([\d,]+) bytes of memory \((\d+) lines\)/m.exec(again.stderr);
    expect(backfill).not.toBeNull();
    expect(Number(backfill![2])).toBeGreaterThan(Number(/\((\d+) lines\)/.exec(lines[0]!)![1]));

    fake.server.enqueue({ text: 'Hello.' });
    const json = await runCliCaptured(['--json', 'chat', 'hi'], { cwd, env: anthropicEnv() });
    type Usage = {
      inputTokens: number;
      outputTokens: number;
      cacheReadTokens: number;
      cacheWriteTokens: number;
    };
    const answer = json.json<{ usage: Usage; costUsd: number }>();
    const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = answer.usage;
    expect(answer).toMatchObject({ ok: true, stopReason: 'end_turn', turns: 1, text: 'Hello.' });
    // Priced by the meter consolidation uses: Claude Haiku 5.5 at $0.10 in, $0.50 out, $0.125 cache write and
    // $0.01 cache read per million tokens.
    expect(answer.costUsd).toBeCloseTo(
      (inputTokens * 0.1 + outputTokens * 0.5 + cacheWriteTokens * 0.125 + cacheReadTokens * 0.01) /
        1_000_000,
      12,
    );
  });

  it('exits 1 with a clear message when the turn limit stops the model', async () => {
    const cwd = workspace();
    fake.server.enqueue({ toolUse: [{ name: 'recall', input: { query: 'food' } }] });
    const result = await runCliCaptured(['chat', 'what do I eat?', '--max-turns', '1'], {
      cwd,
      env: anthropicEnv(),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/stopped after 1 model calls \(--max-turns 1\) before the model finished/);
    expect(result.stderr).toMatch(/--session /);

    fake.server.enqueue({ toolUse: [{ name: 'recall', input: { query: 'food' } }] });
    const json = await runCliCaptured(['--json', 'chat', 'again?', '--max-turns', '1'], {
      cwd,
      env: anthropicEnv(),
    });
    expect(json.code).toBe(1);
    expect(json.json()).toMatchObject({ ok: false, stopReason: 'max_turns', error: { name: 'TurnLimit' } });
  });

  it('continues a session with --session <id>', async () => {
    const cwd = workspace();
    fake.server.enqueue({ text: 'Lisbon it is.' });
    const first = await runCliCaptured(['--json', 'chat', 'Plan a trip to Lisbon'], {
      cwd,
      env: anthropicEnv(),
    });
    const { sessionId } = first.json<{ sessionId: string }>();
    fake.server.enqueue({ text: 'Then Porto.' });
    const second = await runCliCaptured(['--json', 'chat', 'And after that?', '--session', sessionId], {
      cwd,
      env: anthropicEnv(),
    });
    expect(second.json()).toMatchObject({ ok: true, sessionId, text: 'Then Porto.' });
    expect(JSON.stringify(fake.server.requests.at(-1)!.body.messages)).toContain('Plan a trip to Lisbon');
    expect(sessionFiles(cwd)).toEqual([`${sessionId}.json`]);
    const missing = await runCliCaptured(['chat', 'hi', '--session', 'no-such-session'], {
      cwd,
      env: anthropicEnv(),
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no recorded session/);
  });

  it('chats with an OpenAI-compatible model through tool calls', async () => {
    const openai = await startFakeOpenAIServer();
    try {
      const cwd = workspace();
      openai.enqueue(
        {
          toolCalls: [
            {
              name: 'write_memory',
              id: 'call_food',
              arguments: {
                type: 'user',
                title: 'No spicy',
                body: 'No spicy.',
              },
            },
          ],
        },
        { text: 'Saved, no spicy food.' },
      );
      const env = {
        DREAMD_MODEL_PROVIDER: 'openai-compatible',
        DREAMD_MODEL: 'qwen3:4b',
        DREAMD_MODEL_BASE_URL: openai.url,
        DREAMD_MODEL_MAX_RETRIES: '0',
      };
      const result = await runCliCaptured(['--json', 'chat', 'I do not eat spicy food'], { cwd, env });
      expect(result.code).toBe(0);
      expect(result.json()).toMatchObject({
        ok: true,
        text: 'Saved, no spicy food.',
        stopReason: 'end_turn',
        turns: 2,
      });
      const second = openai.requests[1]!.body.messages;
      expect(second.at(-2)).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_food' }] });
      expect(second.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_food' });
      expect(JSON.stringify(second.at(-1)!.content)).toMatch(
        /Saved f-[a-z2-7]{10} \\+"No spicy\\+" in user\.md/,
      );
      expect(
        openai.requests[0]!.body.tools?.map(
          (tool) => (tool as unknown as { function: { name: string } }).function.name,
        ),
      ).toEqual(['read_memory', 'write_memory', 'forget_memory', 'recall']);
    } finally {
      await openai.close();
    }
  });

  it('reads the message from standard input with "-"', async () => {
    const cwd = workspace();
    fake.server.enqueue({ text: 'From stdin.' });
    const child = execFile(process.execPath, [BIN, 'chat', '-', '--json'], {
      cwd,
      env: { ...process.env, ...anthropicEnv() },
    });
    child.stdin!.end('What is on the menu?\n');
    const stdout = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('error', reject);
      child.on('close', () => resolve(out));
    });
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, text: 'From stdin.' });
    expect(fake.server.requests.at(-1)!.prompt).toBe('What is on the menu?');
  });
});
