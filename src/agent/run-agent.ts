import type Anthropic from '@anthropic-ai/sdk';
import { errorMessage } from '../errors.js';
import { addUsage, emptyUsage, type TokenUsage } from '../model/types.js';
import type { SessionRecorder } from '../transcripts/session-recorder.js';
import { createAnthropicChatProvider } from '../model/chat-providers.js';
import type { ChatProvider, SystemBlock } from '../model/types.js';
import { DEFAULT_KEEP_TOOL_RESULTS, clearOldToolResults, slidingWindow, type Message } from './context.js';
import {
  DEFAULT_KEEP_SHARE,
  compactHistory,
  renderContext,
  type ContextSummary,
  type FoldOptions,
  type Summariser,
} from './rolling-summary.js';
import {
  DEFAULT_CHARS_PER_TOKEN,
  estimateTokensAt,
  SCRIPT_CHARS_PER_TOKEN,
  type ScriptName,
} from './token-count.js';
import { toolName, type AgentTool, type ToolCallContext } from './tool.js';

/**
 * The agent loop: send the conversation, run the tools the model asks for, send their results back, until
 * the model ends its turn or the turn limit is reached.
 *
 * States of one run: measuring (over the budget: compact, see `rolling-summary.ts`) → calling (a request is
 * in flight) → tools (running the `tool_use` blocks of the answer, one after another, in order) → measuring …
 * → done (`end_turn`, `max_tokens`, `stop_sequence`, `refusal`) or out of turns (`max_turns`). A tool that is
 * unknown or throws never ends the run: its `tool_result` carries `is_error: true` and the `tool_use_id` of
 * the call. A summariser that fails never ends it either (the cut is made without a summary). A model call
 * that fails ends it with a ModelError.
 */

/** Model calls one run may make by default: 10 is plenty for a chat turn with a few memory operations. */
export const DEFAULT_MAX_TURNS = 10;
/** Longest answer per call by default, in tokens. */
export const DEFAULT_MAX_TOKENS = 1024;
/**
 * Share of the budget from which the provider's counting endpoint is asked for the exact size: below it the
 * estimate is far enough from the trigger that an extra request would change nothing.
 */
export const EXACT_COUNT_FROM_SHARE = 0.6;

/** What the loop reports as it goes (for a CLI's progress lines). */
export type AgentEvent =
  | { readonly type: 'model-call'; readonly turn: number; readonly contextTokens: number }
  | { readonly type: 'tool-call'; readonly turn: number; readonly name: string; readonly input: unknown }
  | { readonly type: 'tool-result'; readonly turn: number; readonly name: string; readonly content: string }
  | { readonly type: 'tool-error'; readonly turn: number; readonly name: string; readonly message: string }
  | {
      readonly type: 'context-summarised';
      /** Messages folded by this compaction. */
      readonly messages: number;
      readonly summary: ContextSummary;
      /** Characters sent to the summariser by this compaction. */
      readonly summariserChars: number;
    }
  | { readonly type: 'summary-failed'; readonly message: string; readonly summary: ContextSummary }
  | {
      /** What the memory agent put in front of the model for this message (before its first call). */
      readonly type: 'memory-backfill';
      /** Bytes and lines of memory in the cached system prompt (`MEMORY.md`, and topic files when included). */
      readonly memoryBytes: number;
      readonly memoryLines: number;
      /** Facts retrieved for this message and added to the system prompt, and their bytes. */
      readonly retrievedFacts: readonly string[];
      readonly retrievedBytes: number;
    };

export interface RunAgentOptions {
  /** The model to talk to (`createModel`). Default: the Anthropic Messages API through `client` and `model`. */
  readonly provider?: ChatProvider;
  /**
   * A configured `@anthropic-ai/sdk` client (key, base URL, transport), used when `provider` is not given; its
   * `maxRetries` is the retry budget of dreamd's retry policy.
   */
  readonly client?: Anthropic;
  /** Model name, e.g. `claude-haiku-5-5` (with `client`). */
  readonly model?: string;
  /**
   * System prompt (memory included by the caller); sent whole on every call, never trimmed. A string is one
   * cached block; blocks marked `cache: true` end the cached prefix (the memory), later ones vary per call.
   */
  readonly system: string | readonly SystemBlock[];
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
   * Token budget of one request (system prompt, tools and history). Over it, the messages that leave the
   * window are folded into the rolling summary (with `summariser`; without one they are dropped with a
   * note) until the kept part takes half of it. Default: no client-side budget.
   */
  readonly contextBudget?: number;
  /** Model that writes the rolling summary (a small one). Default: none (old messages are dropped). */
  readonly summariser?: Summariser;
  /** Options of the summariser: characters per message (500), its context (8,192 tokens), … */
  readonly summary?: FoldOptions;
  /** The summary so far (from an earlier run of the same conversation, or a resumed session). */
  readonly initialSummary?: ContextSummary | undefined;
  /**
   * `native`: Anthropic's context management (tool-result clearing, and compaction for models that support
   * it) through the beta API; the client-side window still applies when compaction is not available (Haiku).
   * `client`: clear old tool results and trim here. `auto` (default): native for Claude models, else client.
   * Used with `client`; a `provider` decides for itself.
   */
  readonly contextManagement?: 'auto' | 'native' | 'client';
  /** Tool results kept whole by client-side clearing. Default 3. */
  readonly keepToolResults?: number;
  /** Characters per token of estimates. Default 3.5 (English). */
  readonly charsPerToken?: number;
  /** Characters per token of dense scripts (Han, Hangul, Thai…). Default {@link SCRIPT_CHARS_PER_TOKEN}. */
  readonly scriptRatios?: Readonly<Record<ScriptName, number>>;
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
  /** The rolling summary after this run (undefined while nothing was folded). */
  readonly summary: ContextSummary | undefined;
}

function textOf(content: readonly Anthropic.ContentBlockParam[]): string {
  return content
    .flatMap((block) => (block.type === 'text' ? [block.text] : []))
    .join('\n')
    .trim();
}

function resultText(content: Anthropic.ToolResultBlockParam['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join(' ');
}

async function runTool(
  tools: ReadonlyMap<string, AgentTool>,
  block: Anthropic.ToolUseBlockParam,
  turn: number,
  onEvent: RunAgentOptions['onEvent'],
  context: ToolCallContext,
): Promise<Anthropic.ToolResultBlockParam> {
  onEvent?.({ type: 'tool-call', turn, name: block.name, input: block.input });
  const tool = tools.get(block.name);
  try {
    if (tool === undefined) {
      throw new Error(
        `Unknown tool "${block.name}". Available tools: ${[...tools.keys()].join(', ') || 'none'}.`,
      );
    }
    const content = await tool.handler(block.input, context);
    onEvent?.({ type: 'tool-result', turn, name: block.name, content: resultText(content) });
    return { type: 'tool_result', tool_use_id: block.id, content };
  } catch (error) {
    const message = errorMessage(error);
    onEvent?.({ type: 'tool-error', turn, name: block.name, message });
    return { type: 'tool_result', tool_use_id: block.id, content: `Error: ${message}`, is_error: true };
  }
}

function providerOf(options: RunAgentOptions): ChatProvider {
  if (options.provider !== undefined) return options.provider;
  if (options.client === undefined || options.model === undefined) {
    throw new TypeError('runAgent needs a provider, or a client and a model');
  }
  return createAnthropicChatProvider({
    client: options.client,
    model: options.model,
    ...(options.contextManagement === undefined ? {} : { contextManagement: options.contextManagement }),
  });
}

/** Runs the agent loop once (one user turn, possibly many model calls). See the states above. */
export async function runAgent(options: RunAgentOptions): Promise<RunAgentResult> {
  const provider = providerOf(options);
  const tools = new Map((options.tools ?? []).map((tool) => [toolName(tool.definition), tool]));
  const definitions = [...tools.values()].map((tool) => tool.definition);
  const system: readonly SystemBlock[] =
    typeof options.system === 'string' ? [{ text: options.system, cache: true }] : options.system;
  const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- needed under noUncheckedIndexedAccess
  const charsPerToken = options.charsPerToken ?? (DEFAULT_CHARS_PER_TOKEN.en as number);
  const scriptRatios = options.scriptRatios ?? SCRIPT_CHARS_PER_TOKEN;
  const estimate = (value: unknown) => estimateTokensAt(value, charsPerToken, scriptRatios);
  const fixedTokens =
    estimate(system.map((block) => block.text).join('\n')) +
    (definitions.length === 0 ? 0 : estimate(definitions));
  const history: Message[] = [...options.messages];
  let summary = options.initialSummary;
  let usage = emptyUsage();
  const record = async (message: Message) => {
    if (options.recorder !== undefined) await options.recorder.append({ ...message, role: message.role });
  };
  const append = async (message: Message) => {
    history.push(message);
    await record(message);
  };
  for (const message of options.messages.slice(options.recordFrom ?? 0)) await record(message);

  const clear = (messages: readonly Message[]) =>
    provider.clearsToolResults
      ? [...messages]
      : clearOldToolResults(messages, { keepLast: options.keepToolResults ?? DEFAULT_KEEP_TOOL_RESULTS });
  const measure = async (messages: readonly Message[], budget: number): Promise<number> => {
    const estimated = fixedTokens + estimate(messages);
    if (provider.countTokens === undefined || estimated < budget * EXACT_COUNT_FROM_SHARE) return estimated;
    try {
      return await provider.countTokens({
        system,
        messages,
        tools: definitions,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (error) {
      if (options.signal?.aborted === true) throw error;
      return estimated; // the count is an optimisation: the estimate decides when it is unavailable
    }
  };

  /** The request's messages for this call, compacting first when over the budget. */
  const prepare = async (): Promise<Message[]> => {
    const budget = options.contextBudget;
    const view = clear(history);
    let request = renderContext(view, summary);
    if (budget === undefined || provider.compactsServerSide) return request;
    if ((await measure(request, budget)) <= budget) return request;
    const compacted = await compactHistory(history, summary, options.summariser, {
      ...options.summary,
      charsPerToken,
      sizes: view.map((message) => estimate([message])),
      targetTokens: Math.max(0, budget * DEFAULT_KEEP_SHARE - fixedTokens),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    if (compacted.folded > 0 && compacted.summary !== undefined) {
      summary = compacted.summary;
      usage = addUsage(usage, compacted.usage);
      options.onEvent?.(
        compacted.failure === undefined
          ? {
              type: 'context-summarised',
              messages: compacted.folded,
              summary,
              summariserChars: compacted.inputChars,
            }
          : { type: 'summary-failed', message: compacted.failure, summary },
      );
      request = renderContext(view, summary);
    }
    // Last resort (one turn too large to fold further): the sliding window, which keeps the last turn whole.
    return slidingWindow(request, {
      budgetTokens: budget - estimate(definitions),
      system: system.map((block) => block.text).join('\n'),
      charsPerToken,
    });
  };

  let stopReason = 'max_turns';
  let text = '';
  let turn = 0;
  while (turn < maxTurns) {
    turn += 1;
    const request = await prepare();
    options.onEvent?.({ type: 'model-call', turn, contextTokens: fixedTokens + estimate(request) });
    const response = await provider.chat({
      system,
      messages: request,
      tools: definitions,
      maxTokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    usage = addUsage(usage, response.usage);
    await append({ role: 'assistant', content: response.content });
    text = textOf(response.content);
    stopReason = response.stopReason;
    if (stopReason === 'pause_turn') continue;
    if (stopReason !== 'tool_use')
      return { text, messages: history, usage, turns: turn, stopReason, summary };

    const results: Anthropic.ToolResultBlockParam[] = [];
    for (const block of response.content) {
      if (block.type === 'tool_use') {
        results.push(await runTool(tools, block, turn, options.onEvent, { messages: history }));
      }
    }
    await append({ role: 'user', content: results });
    stopReason = 'max_turns';
  }
  return { text, messages: history, usage, turns: turn, stopReason, summary };
}
