import { describe, expect, it } from 'vitest';
import { createClaudeCodeAccumulator } from '../../src/transcripts/claude-code-lines.js';
import { createCodexAccumulator } from '../../src/transcripts/codex-lines.js';
import { holdsMarker } from '../../src/transcripts/keep-out-signals.js';
import { parseNativeTranscript } from '../../src/transcripts/native-reader.js';
import type { Session } from '../../src/transcripts/types.js';

/**
 * What each reader reports that may keep a session out (the person's `#dreamd:ignore`, a web or MCP tool), in
 * the shapes the agents write: Claude Code's lines, Codex's rollout items, native messages. Seen over the whole
 * file, also before `fromMessage` and past the keep window.
 */

const MTIME = new Date('2026-01-01T00:00:00Z');

function claudeCode(
  lines: readonly unknown[],
  options: { fromMessage?: number; keepChars?: number } = {},
): Session {
  const accumulator = createClaudeCodeAccumulator({
    file: '/s/cc.jsonl',
    stem: 'cc',
    fromMessage: options.fromMessage ?? 0,
    keepChars: options.keepChars,
  });
  lines.forEach((line, index) => accumulator.addLine(JSON.stringify(line), index + 1));
  return accumulator.finish(MTIME);
}

function codex(lines: readonly unknown[]): Session {
  const accumulator = createCodexAccumulator({ file: '/s/rollout.jsonl', stem: 'rollout', fromMessage: 0 });
  lines.forEach((line, index) => accumulator.addLine(JSON.stringify(line), index + 1));
  return accumulator.finish(MTIME);
}

const user = (content: unknown, extra: Record<string, unknown> = {}): unknown => ({
  type: 'user',
  sessionId: 's1',
  timestamp: '2026-03-01T10:00:00Z',
  message: { role: 'user', content },
  ...extra,
});
const assistant = (content: unknown, id = 'msg_1'): unknown => ({
  type: 'assistant',
  sessionId: 's1',
  timestamp: '2026-03-01T10:00:01Z',
  message: { role: 'assistant', id, content },
});
const item = (payload: Record<string, unknown>): unknown => ({
  timestamp: '2026-03-01T10:00:01.000Z',
  type: 'response_item',
  payload,
});

describe('the marker', () => {
  it('is a line of its own, case and spaces aside', () => {
    expect(holdsMarker('#dreamd:ignore')).toBe(true);
    expect(holdsMarker('ok, that is all\n  #DREAMD:IGNORE \n')).toBe(true);
    expect(holdsMarker('please do not add #dreamd:ignore here')).toBe(false);
    expect(holdsMarker('#dreamd:ignored')).toBe(false);
  });
});

describe('Claude Code lines', () => {
  it("sees the marker in the person's line only, never in a tool result, a meta line or a sub-agent's brief", () => {
    const toolResult = user([{ type: 'tool_result', tool_use_id: 't1', content: '#dreamd:ignore' }]);
    const meta = user('#dreamd:ignore', { isMeta: true });
    const sidechain = user('#dreamd:ignore', { isSidechain: true });
    const said = assistant([{ type: 'text', text: '#dreamd:ignore' }]);
    expect(claudeCode([user('hi'), said, toolResult, meta, sidechain]).keepOut).toBeUndefined();
    expect(claudeCode([user('hi'), user([{ type: 'text', text: '#dreamd:ignore' }])]).keepOut).toEqual({
      marker: { index: 1 },
      externalContext: undefined,
    });
  });

  it('sees WebFetch, WebSearch, a server tool and an mcp__ tool', () => {
    for (const block of [
      { type: 'tool_use', id: 't', name: 'WebFetch', input: {} },
      { type: 'tool_use', id: 't', name: 'WebSearch', input: {} },
      { type: 'server_tool_use', id: 's', name: 'web_search', input: {} },
      { type: 'tool_use', id: 't', name: 'mcp__github__get_issue', input: {} },
    ]) {
      expect(claudeCode([user('look it up'), assistant([block])]).keepOut?.externalContext?.tool).toBe(
        block.name,
      );
    }
    expect(
      claudeCode([assistant([{ type: 'tool_use', id: 't', name: 'Bash', input: {} }])]).keepOut,
    ).toBeUndefined();
  });

  it('judges the whole file: before fromMessage and past the keep window too', () => {
    const lines = [
      user('#dreamd:ignore'),
      user('a'.repeat(100)),
      user('b'),
      assistant([{ type: 'tool_use', id: 't', name: 'WebFetch', input: {} }]),
    ];
    const session = claudeCode(lines, { fromMessage: 1, keepChars: 10 });
    expect(session.messages.map((message) => message.index)).toEqual([1]);
    expect(session.keepOut).toEqual({
      marker: { index: 0 },
      externalContext: { index: 3, tool: 'WebFetch' },
    });
  });
});

describe('Codex rollouts', () => {
  it("sees the marker in the person's message, not in injected context or a tool's output", () => {
    const injected = item({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: '<user_instructions>\n#dreamd:ignore\n</user_instructions>' }],
    });
    const output = item({ type: 'function_call_output', call_id: 'c', output: '#dreamd:ignore' });
    expect(codex([injected, output]).keepOut).toBeUndefined();
    const typed = item({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: '#dreamd:ignore' }],
    });
    expect(codex([typed]).keepOut?.marker).toEqual({ index: 0 });
  });

  it('sees a web search and an MCP tool call, named or namespaced', () => {
    expect(
      codex([item({ type: 'web_search_call', id: 'w', action: { query: 'x' } })]).keepOut?.externalContext,
    ).toEqual({ index: 0, tool: 'web_search' });
    expect(
      codex([item({ type: 'function_call', name: 'mcp__linear__get_issue', arguments: '{}', call_id: 'c' })])
        .keepOut?.externalContext?.tool,
    ).toBe('mcp__linear__get_issue');
    expect(
      codex([
        item({
          type: 'function_call',
          namespace: 'mcp__linear',
          name: 'get_issue',
          arguments: '{}',
          call_id: 'c',
        }),
      ]).keepOut?.externalContext?.tool,
    ).toBe('mcp__linear__get_issue');
    expect(
      codex([item({ type: 'function_call', name: 'shell', arguments: '{}', call_id: 'c' })]).keepOut,
    ).toBeUndefined();
  });
});

describe('native transcripts', () => {
  it('sees OpenAI-shaped tool calls and a server tool block, and the marker only from the user', () => {
    const native = (messages: unknown[]): Session =>
      parseNativeTranscript(JSON.stringify({ id: 'n', messages }), {
        file: '/s/n.json',
        stem: 'n',
        fromMessage: 0,
        mtime: MTIME,
      });
    expect(
      native([
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'mcp__db__query', arguments: '{}' } }],
        },
      ]).keepOut?.externalContext?.tool,
    ).toBe('mcp__db__query');
    expect(
      native([
        { role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web_fetch', input: {} }] },
      ]).keepOut?.externalContext?.tool,
    ).toBe('web_fetch');
    expect(native([{ role: 'tool', tool_call_id: 'c', content: '#dreamd:ignore' }]).keepOut).toBeUndefined();
    expect(native([{ role: 'user', content: '#dreamd:ignore' }]).keepOut?.marker).toEqual({ index: 0 });
  });
});
