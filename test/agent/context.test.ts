import type Anthropic from '@anthropic-ai/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CLEARED_TOOL_RESULT,
  clearOldToolResults,
  estimateContextTokens,
  isTurnStart,
  nativeContextManagement,
  recentStart,
  slidingWindow,
  summariseOlderTurns,
  type Message,
} from '../../src/agent/context.js';
import type { GenerateTextRequest, ModelProvider } from '../../src/model/types.js';

/** Random but valid histories: turns of a user message, tool rounds (tool_use answered by tool_result), a reply. */
const text = fc.string({ minLength: 0, maxLength: 400 });
let idCounter = 0;
const toolRound = fc.tuple(
  fc.integer({ min: 1, max: 3 }),
  text,
  fc.array(text, { minLength: 3, maxLength: 3 }),
  fc.boolean(),
);
const turn = fc.tuple(text, fc.array(toolRound, { maxLength: 3 }), text, fc.boolean());
const history = fc.array(turn, { minLength: 1, maxLength: 8 }).map((turns): Message[] => {
  const messages: Message[] = [];
  for (const [question, rounds, answer, withSystem] of turns) {
    if (withSystem) messages.push({ role: 'system', content: `note ${question.slice(0, 20)}` });
    messages.push({ role: 'user', content: question });
    for (const [count, thought, results, withText] of rounds) {
      const ids = Array.from({ length: count }, () => `toolu_${++idCounter}`);
      messages.push({
        role: 'assistant',
        content: [
          ...(thought === '' ? [] : [{ type: 'text' as const, text: thought }]),
          ...ids.map((id) => ({
            type: 'tool_use' as const,
            id,
            name: 'lookup',
            input: { q: thought.slice(0, 10) },
          })),
        ],
      });
      messages.push({
        role: 'user',
        content: [
          ...ids.map((id, i) => ({
            type: 'tool_result' as const,
            tool_use_id: id,
            content: results[i] ?? '',
          })),
          ...(withText ? [{ type: 'text' as const, text: 'and also…' }] : []),
        ],
      });
    }
    messages.push({ role: 'assistant', content: answer === '' ? 'ok' : answer });
  }
  return messages;
});

function blocks(message: Message): Anthropic.ContentBlockParam[] {
  return typeof message.content === 'string' ? [] : message.content;
}

/** Every tool_result is preceded, in the previous message, by the assistant's tool_use with its id. */
function orphanResults(messages: readonly Message[]): string[] {
  const orphans: string[] = [];
  messages.forEach((message, index) => {
    for (const block of blocks(message)) {
      if (block.type !== 'tool_result') continue;
      const previous = messages[index - 1];
      const answered =
        previous?.role === 'assistant' &&
        blocks(previous).some((b) => b.type === 'tool_use' && b.id === block.tool_use_id);
      if (!answered) orphans.push(block.tool_use_id);
    }
  });
  return orphans;
}

function isSubsequence(part: readonly Message[], whole: readonly Message[]): boolean {
  let at = 0;
  for (const message of whole) if (part[at] === message) at++;
  return at === part.length;
}

describe('slidingWindow (property)', () => {
  it('never leaves a tool_result without its tool_use, keeps system messages and the first message, fits when it can', () => {
    fc.assert(
      fc.property(
        history,
        fc.integer({ min: 50, max: 3000 }),
        fc.string({ maxLength: 200 }),
        (messages, budgetTokens, system) => {
          const kept = slidingWindow(messages, { budgetTokens, system });
          expect(orphanResults(kept)).toEqual([]);
          expect(isSubsequence(kept, messages)).toBe(true);
          expect(kept.filter((m) => m.role === 'system')).toEqual(
            messages.filter((m) => m.role === 'system'),
          );
          const firstNonSystem = kept.find((m) => m.role !== 'system');
          expect(isTurnStart(firstNonSystem)).toBe(true);
          if (isTurnStart(messages[0])) expect(kept[0]).toBe(messages[0]);
          // Within budget whenever the pinned messages plus the last turn fit.
          const lastStart = messages.findLastIndex((m, i) => i > 0 && isTurnStart(m));
          const pinned = messages.filter((m, i) => i === 0 || m.role === 'system');
          const smallest =
            lastStart <= 0
              ? messages
              : [...pinned.filter((m) => messages.indexOf(m) < lastStart), ...messages.slice(lastStart)];
          const total = (list: readonly Message[]) =>
            estimateContextTokens(system) + list.reduce((sum, m) => sum + estimateContextTokens([m]), 0);
          if (total(smallest) <= budgetTokens) expect(total(kept)).toBeLessThanOrEqual(budgetTokens);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('returns the history unchanged when it fits', () => {
    const messages: Message[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ];
    expect(slidingWindow(messages, { budgetTokens: 1000 })).toEqual(messages);
  });

  it('drops the oldest turns first and can let the first message go', () => {
    const messages: Message[] = [
      { role: 'user', content: 'task '.repeat(40) },
      { role: 'assistant', content: 'a'.repeat(400) },
      { role: 'user', content: 'second' },
      { role: 'assistant', content: 'b' },
    ];
    expect(slidingWindow(messages, { budgetTokens: 80 })).toEqual([messages[0], messages[2], messages[3]]);
    expect(slidingWindow(messages, { budgetTokens: 80, keepFirstMessage: false })).toEqual([
      messages[2],
      messages[3],
    ]);
  });
});

describe('clearOldToolResults (property)', () => {
  it('keeps every call and id, clears all but the last N results', () => {
    fc.assert(
      fc.property(history, fc.integer({ min: 0, max: 5 }), (messages, keepLast) => {
        const snapshot = JSON.stringify(messages);
        const cleared = clearOldToolResults(messages, { keepLast });
        expect(JSON.stringify(messages)).toBe(snapshot); // input untouched
        expect(cleared).toHaveLength(messages.length);
        expect(orphanResults(cleared)).toEqual([]);
        const results = (list: readonly Message[]) =>
          list.flatMap(blocks).filter((b): b is Anthropic.ToolResultBlockParam => b.type === 'tool_result');
        const before = results(messages);
        const after = results(cleared);
        expect(after.map((b) => b.tool_use_id)).toEqual(before.map((b) => b.tool_use_id));
        after.forEach((block, i) => {
          const recent = i >= before.length - keepLast;
          expect(block.content).toBe(recent ? before[i]!.content : CLEARED_TOOL_RESULT);
        });
        expect(cleared.flatMap(blocks).filter((b) => b.type === 'tool_use')).toEqual(
          messages.flatMap(blocks).filter((b) => b.type === 'tool_use'),
        );
        // Clearing then trimming keeps the invariant too.
        expect(orphanResults(slidingWindow(cleared, { budgetTokens: 200 }))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

/** A model that implements the real interface and records what it was asked. */
function recordingModel(answer: string): Pick<ModelProvider, 'label' | 'generateObject' | 'generateText'> & {
  calls: GenerateTextRequest[];
} {
  const calls: GenerateTextRequest[] = [];
  return {
    label: 'fake:summariser',
    calls,
    generateObject: () => Promise.reject(new Error('not used')),
    generateText: (request) => {
      calls.push(request);
      return Promise.resolve({
        value: answer,
        usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
        attempts: 1,
      });
    },
  };
}

describe('summariseOlderTurns', () => {
  it('folds older turns into a labelled summary and never splits a tool pair', async () => {
    const messages: Message[] = [
      { role: 'user', content: 'find the invoice' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 't1', name: 'search', input: { q: 'invoice' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'invoice 42 found' }] },
      { role: 'assistant', content: 'Found invoice 42.' },
      { role: 'user', content: 'now email it' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't2', name: 'email', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2', content: 'sent' }] },
      { role: 'assistant', content: 'Sent.' },
    ];
    const model = recordingModel('The user asked for invoice 42, which was found.');
    const result = await summariseOlderTurns(messages, model, { keepLast: 3 });
    expect(recentStart(messages, 3)).toBe(4);
    expect(result.summarised).toBe(4);
    expect(result.messages).toHaveLength(4);
    expect(orphanResults(result.messages)).toEqual([]);
    const first = result.messages[0]!;
    expect(first.role).toBe('user');
    expect(blocks(first)[0]).toMatchObject({
      type: 'text',
      text: expect.stringMatching(
        /^\[Summary of the earlier conversation \(4 messages\), not a verbatim record\]\nThe user asked/,
      ),
    });
    expect(blocks(first)[1]).toEqual({ type: 'text', text: 'now email it' });
    expect(model.calls[0]!.prompt).toContain('[called search {"q":"invoice"}]');
    expect(model.calls[0]!.prompt).toContain('[tool result: invoice 42 found]');
    expect(result.usage.inputTokens).toBe(10);
  });

  it('does nothing when there is no earlier turn to fold', async () => {
    const model = recordingModel('x');
    const messages: Message[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ];
    expect((await summariseOlderTurns(messages, model, { keepLast: 6 })).summarised).toBe(0);
    expect(model.calls).toEqual([]);
  });
});

describe('nativeContextManagement', () => {
  it('clears tool uses for Haiku but does not ask for compaction', () => {
    const native = nativeContextManagement('claude-haiku-5-5');
    expect(native?.compaction).toBe(false);
    expect(native?.betas).toEqual(['context-management-2025-06-27']);
    expect(native?.context_management.edits).toEqual([
      {
        type: 'clear_tool_uses_20250919',
        trigger: { type: 'input_tokens', value: 100_000 },
        keep: { type: 'tool_uses', value: 3 },
      },
    ]);
  });

  it('adds compaction for models that support it', () => {
    const native = nativeContextManagement('claude-sonnet-5-5');
    expect(native?.compaction).toBe(true);
    expect(native?.context_management.edits?.map((edit) => edit.type)).toEqual([
      'clear_tool_uses_20250919',
      'compact_20260112',
    ]);
    expect(native?.betas).toContain('compact-2026-01-12');
  });

  it('is not available for a local OpenAI-compatible model', () => {
    expect(nativeContextManagement('llama3.1')).toBeUndefined();
  });
});
