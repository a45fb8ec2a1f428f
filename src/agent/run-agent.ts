import Anthropic from '@anthropic-ai/sdk';
import { errorMessage, ModelError } from '../errors.js';
import { modelErrorFromSdk } from '../model/sdk-errors.js';
import { addUsage, emptyUsage, type ModelProvider, type TokenUsage } from '../model/types.js';
import type { SessionRecorder } from '../transcripts/session-recorder.js';
import {
  DEFAULT_KEEP_TOOL_RESULTS,
  clearOldToolResults,
  estimateContextTokens,
  nativeContextManagement,
  slidingWindow,
  summariseOlderTurns,
  type Message,
} from './context.js';
import { toolName, type AgentTool } from './tool.js';

/**
 * The agent loop: send the conversation, run the tools the model asks for, send their results back, until
 * the model ends its turn or the turn limit is reached.
 *
 * States of one run: calling (a request is in flight) → tools (running the `tool_use` blocks of the answer,
 * one after another, in order) → calling … → done (`end_turn`, `max_tokens`, `stop_sequence`, `refusal`) or
 * out of turns (`max_turns`). A tool that is unknown or throws never ends the run: its `tool_result` carries
 * `is_error: true` and the `tool_use_id` of the call. A model call that fails ends it with a ModelError.
 */

/** Model calls one run may make by default: 10 is plenty for a chat turn with a few memory operations. */
export const DEFAULT_MAX_TURNS = 10;
/** Longest answer per call by default, in tokens. */
export const DEFAULT_MAX_TOKENS = 1024;

/** What the loop reports as it goes (for a CLI's progress lines). */
export type AgentEvent =
  | { readonly type: 'model-call'; readonly turn: number; readonly contextTokens: number }
  | { readonly type: 'tool-call'; readonly turn: number; readonly name: string; readonly input: unknown }
  | { readonly type: 'tool-error'; readonly turn: number; readonly name: string; readonly message: string }
  | { readonly type: 'context-summarised'; readonly messages: number };

export interface RunAgentOptions {
  /** A configured `@anthropic-ai/sdk` client (key, base URL, retries). */
  readonly client: Anthropic;
  /** Model name, e.g. `claude-haiku-5-5`. */
  readonly model: string;
  /** System prompt (memory context included by the caller); sent whole on every call, never trimmed. */
  readonly system: string;
  /** The conversation so far, ending with the user's new message. */
  readonly messages: readonly Message[];
  /** Tools offered to the model, dispatched by name. Default none. */
  readonly tools?: readonly AgentTool[];
  /** Most model calls in this run. Default 10. */
  readonly maxTurns?: number;
  /** `max_tokens` of each call. Default 1024. */
  readonly maxTokens?: number;
  /** Records every message: the input messages from `recordFrom` on, then each new one as it happens. */
  readonly recorder?: Pick<SessionRecorder, 'append'>;
  /** Index of the first input message not recorded yet (earlier ones were, by a previous run). Default 0. */
  readonly recordFrom?: number;
  /**
   * Token budget (estimate) of system prompt plus history. Over it, older turns are summarised (with
   * `summariser`) and then dropped by the sliding window. Default: no client-side budget.
   */
  readonly contextBudget?: number;
  /** Small model that summarises older turns when over `contextBudget`. Default: none (turns are dropped). */
  readonly summariser?: ModelProvider;
  /**
   * `native`: Anthropic's context management (tool-result clearing, and compaction for models that support
   * it) through the beta API; the client-side window still applies when compaction is not available (Haiku).
   * `client`: clear old tool results and trim here. `auto` (default): native for Claude models, else client.
   */
  readonly contextManagement?: 'auto' | 'native' | 'client';
  /** Tool results kept whole by client-side clearing. Default 3. */
  readonly keepToolResults?: number;
  readonly onEvent?: (event: AgentEvent) => void;
  readonly signal?: AbortSignal;
}

export interface RunAgentResult {
  /** Text of the last assistant message ("" when it had none). */
  readonly text: string;
  /** The whole conversation: the input messages and every message this run added, never trimmed. */
  readonly messages: Message[];
  readonly usage: TokenUsage;
  /** Model calls made. */
  readonly turns: number;
  /** The last call's `stop_reason`, or `max_turns` when the limit stopped the run. */
  readonly stopReason: string;
}

function textOf(content: readonly Anthropic.ContentBlock[]): string {
  return content
    .flatMap((block) => (block.type === 'text' ? [block.text] : []))
    .join('\n')
    .trim();
}

function usageOf(usage: Anthropic.Usage): TokenUsage {
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    cacheReadTokens: usage.cache_read_input_tokens ?? 0,
    cacheWriteTokens: usage.cache_creation_input_tokens ?? 0,
  };
}

async function runTool(
  tools: ReadonlyMap<string, AgentTool>,
  block: Anthropic.ToolUseBlock,
  turn: number,
  onEvent: RunAgentOptions['onEvent'],
): Promise<Anthropic.ToolResultBlockParam> {
  onEvent?.({ type: 'tool-call', turn, name: block.name, input: block.input });
  const tool = tools.get(block.name);
  try {
    if (tool === undefined) {
      throw new Error(
        `Unknown tool "${block.name}". Available tools: ${[...tools.keys()].join(', ') || 'none'}.`,
      );
    }
    return { type: 'tool_result', tool_use_id: block.id, content: await tool.handler(block.input) };
  } catch (error) {
    const message = errorMessage(error);
    onEvent?.({ type: 'tool-error', turn, name: block.name, message });
    return { type: 'tool_result', tool_use_id: block.id, content: `Error: ${message}`, is_error: true };
  }
}

const SDK_ERRORS = {
  APIError: Anthropic.APIError,
  APIConnectionError: Anthropic.APIConnectionError,
  APIConnectionTimeoutError: Anthropic.APIConnectionTimeoutError,
  APIUserAbortError: Anthropic.APIUserAbortError,
};

/** Runs the agent loop once (one user turn, possibly many model calls). See the states above. */
export async function runAgent(options: RunAgentOptions): Promise<RunAgentResult> {
  const tools = new Map((options.tools ?? []).map((tool) => [toolName(tool.definition), tool]));
  const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  const native = options.contextManagement === 'client' ? undefined : nativeContextManagement(options.model);
  if (options.contextManagement === 'native' && native === undefined) {
    throw new ModelError(
      `${options.model}: Anthropic's native context management is only for Claude models`,
      {
        retryable: false,
        kind: 'bad-request',
      },
    );
  }
  const history: Message[] = [...options.messages];
  // What is sent: the history, except that older turns may have been summarised away.
  let context: Message[] = [...options.messages];
  let usage = emptyUsage();
  const record = async (message: Message) => {
    if (options.recorder !== undefined && message.role !== 'system')
      await options.recorder.append({ ...message, role: message.role });
  };
  const append = async (message: Message) => {
    history.push(message);
    context.push(message);
    await record(message);
  };
  for (const message of options.messages.slice(options.recordFrom ?? 0)) await record(message);

  let stopReason = 'max_turns';
  let text = '';
  let turn = 0;
  while (turn < maxTurns) {
    turn += 1;
    const budget = options.contextBudget;
    const overBudget = () =>
      budget !== undefined && estimateContextTokens(options.system) + estimateContextTokens(context) > budget;
    if (overBudget() && options.summariser !== undefined) {
      const summarised = await summariseOlderTurns(context, options.summariser, {
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (summarised.summarised > 0) {
        context = summarised.messages;
        usage = addUsage(usage, summarised.usage);
        options.onEvent?.({ type: 'context-summarised', messages: summarised.summarised });
      }
    }
    let request =
      native === undefined
        ? clearOldToolResults(context, { keepLast: options.keepToolResults ?? DEFAULT_KEEP_TOOL_RESULTS })
        : context;
    if (budget !== undefined && native?.compaction !== true)
      request = slidingWindow(request, { budgetTokens: budget, system: options.system });
    options.onEvent?.({
      type: 'model-call',
      turn,
      contextTokens: estimateContextTokens(options.system) + estimateContextTokens(request),
    });

    const body = {
      model: options.model,
      max_tokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
      system: options.system,
      messages: request,
      ...(tools.size === 0 ? {} : { tools: [...tools.values()].map((tool) => tool.definition) }),
    };
    let response: Anthropic.Message;
    try {
      const requestOptions = options.signal === undefined ? {} : { signal: options.signal };
      response =
        native === undefined
          ? await options.client.messages.create(body, requestOptions)
          : ((await options.client.beta.messages.create(
              {
                ...body,
                betas: native.betas,
                context_management: native.context_management,
              } as Anthropic.Beta.MessageCreateParamsNonStreaming,
              requestOptions,
            )) as unknown as Anthropic.Message);
    } catch (error) {
      if (error instanceof Anthropic.APIUserAbortError) throw error;
      throw modelErrorFromSdk(error, SDK_ERRORS, {
        label: `anthropic:${options.model}`,
        baseUrl: options.client.baseURL,
        timeoutMs: options.client.timeout,
        keyHint: 'ANTHROPIC_API_KEY or model.apiKey',
      });
    }
    usage = addUsage(usage, usageOf(response.usage));
    await append({ role: 'assistant', content: response.content as Anthropic.ContentBlockParam[] });
    text = textOf(response.content);
    stopReason = response.stop_reason ?? 'end_turn';
    if (response.stop_reason === 'pause_turn') continue;
    if (response.stop_reason !== 'tool_use')
      return { text, messages: history, usage, turns: turn, stopReason };

    const results: Anthropic.ToolResultBlockParam[] = [];
    for (const block of response.content) {
      if (block.type === 'tool_use') results.push(await runTool(tools, block, turn, options.onEvent));
    }
    await append({ role: 'user', content: results });
    stopReason = 'max_turns';
  }
  return { text, messages: history, usage, turns: turn, stopReason };
}
