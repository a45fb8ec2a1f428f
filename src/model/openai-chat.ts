import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
} from 'openai/resources/chat/completions';
import type { ChatRequest, ChatResponse, Message } from './messages.js';
import type { RetryingCall } from './retry.js';

/**
 * The chat calls of the OpenAI-compatible provider (Ollama, vLLM, LM Studio, OpenAI).
 * Anthropic-shaped history is translated on the way out: `tool_use` blocks become the assistant's
 * `tool_calls` (same ids), each `tool_result` a `tool` message with its `tool_call_id`, the system blocks one
 * `system` message (servers with prefix caching cache it on their own). The answer comes back as `text` and
 * `tool_use` blocks, `finish_reason` mapped to the Anthropic stop reasons. Server-defined Anthropic tools
 * (`memory_20250818`) have no equivalent and are not offered. No counting endpoint: estimates are used.
 */

/** `finish_reason` → the stop reason the loop understands. */
const STOP_REASONS: Readonly<Record<string, string>> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
};

function toolResultText(block: Anthropic.ToolResultBlockParam): string {
  const text =
    typeof block.content === 'string'
      ? block.content
      : (block.content ?? []).map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n');
  return block.is_error === true && !text.startsWith('Error') ? `Error: ${text}` : text;
}

function blockText(block: Anthropic.ContentBlockParam): string | undefined {
  if (block.type === 'text') return block.text;
  if (block.type === 'tool_use' || block.type === 'tool_result') return undefined;
  if (block.type === 'thinking' || block.type === 'redacted_thinking') return undefined;
  return `[${block.type}]`;
}

/** Anthropic-shaped messages as Chat Completions messages (pure). */
export function toOpenAIMessages(system: string, messages: readonly Message[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = system === '' ? [] : [{ role: 'system', content: system }];
  for (const message of messages) {
    if (typeof message.content === 'string') {
      out.push({ role: message.role, content: message.content });
      continue;
    }
    const text = message.content
      .map(blockText)
      .filter((part): part is string => part !== undefined && part !== '')
      .join('\n');
    if (message.role === 'assistant') {
      const calls: ChatCompletionMessageToolCall[] = message.content.flatMap((block) =>
        block.type === 'tool_use'
          ? [
              {
                id: block.id,
                type: 'function' as const,
                function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
              },
            ]
          : [],
      );
      out.push({
        role: 'assistant',
        content: text === '' && calls.length > 0 ? null : text,
        ...(calls.length === 0 ? {} : { tool_calls: calls }),
      });
      continue;
    }
    // A user message: its tool results first (they answer the assistant message just before), then text.
    for (const block of message.content) {
      if (block.type === 'tool_result')
        out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: toolResultText(block) });
    }
    if (text !== '') out.push({ role: 'user', content: text });
  }
  return out;
}

/** Custom tool definitions as function tools; server-defined tools (no `input_schema`) are left out. */
export function toOpenAITools(tools: readonly Anthropic.ToolUnion[]): ChatCompletionFunctionTool[] {
  return tools.flatMap((tool) =>
    'input_schema' in tool
      ? [
          {
            type: 'function' as const,
            function: {
              name: tool.name,
              ...(tool.description === undefined ? {} : { description: tool.description }),
              parameters: tool.input_schema,
            },
          },
        ]
      : [],
  );
}

function parseArguments(raw: string): unknown {
  try {
    return JSON.parse(raw === '' ? '{}' : raw) as unknown;
  } catch {
    // Kept as text: the tool's schema check answers the model with an error it can correct.
    return raw;
  }
}

/** The input tokens a chat request will take, roughly (4 characters a token), for the key's pacing. */
function chatTokens(request: ChatRequest): number {
  const system = request.system.reduce((sum, block) => sum + block.text.length, 0);
  return Math.ceil((system + JSON.stringify(request.messages).length) / 4);
}

/** The answer of a completion as Anthropic-shaped blocks and stop reason. */
function answerOf(completion: OpenAI.Chat.Completions.ChatCompletion): Omit<ChatResponse, 'attempts'> {
  const choice = completion.choices[0];
  const content: Anthropic.ContentBlockParam[] = [];
  const text = choice?.message.content ?? '';
  if (text !== '') content.push({ type: 'text', text });
  for (const call of choice?.message.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: parseArguments(call.function.arguments),
    });
  }
  const hasCalls = content.some((block) => block.type === 'tool_use');
  // Some local servers answer tool calls with finish_reason "stop": the calls decide.
  const stopReason = hasCalls ? 'tool_use' : (STOP_REASONS[choice?.finish_reason ?? 'stop'] ?? 'end_turn');
  const usage = completion.usage;
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    content,
    stopReason,
    usage: {
      inputTokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached),
      outputTokens: usage?.completion_tokens ?? 0,
      cacheReadTokens: cached,
      cacheWriteTokens: 0,
    },
  };
}

/**
 * One turn of a conversation through Chat Completions, through the provider's retrying call (its rate gate
 * and retry policy). Anthropic-shaped history goes out translated; the answer comes back as blocks.
 */
export function openAIChat(settings: {
  readonly model: string;
  readonly withRetries: RetryingCall<OpenAI>;
}): (request: ChatRequest) => Promise<ChatResponse> {
  return async (request) => {
    const system = request.system
      .map((block) => block.text)
      .filter((text) => text !== '')
      .join('\n\n');
    const tools = toOpenAITools(request.tools);
    const body = {
      model: settings.model,
      max_tokens: request.maxTokens,
      messages: toOpenAIMessages(system, request.messages),
      ...(tools.length === 0 ? {} : { tools }),
    };
    const outcome = await settings.withRetries(
      (client, signal) => client.chat.completions.create(body, signal === undefined ? {} : { signal }),
      request.signal,
      chatTokens(request),
    );
    return { ...answerOf(outcome.value), attempts: outcome.attempts };
  };
}
