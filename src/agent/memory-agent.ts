import { mkdir } from 'node:fs/promises';
import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { ChatConfig, type Config, type Space } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { addUsage, emptyUsage, type TokenUsage } from '../model/types.js';
import type { FactType } from '../memory/types.js';
import { createSessionRecorder, type SessionRecorder } from '../transcripts/session-recorder.js';
import { loadMemoryContext } from './backfill.js';
import { createModel } from '../model/create-model.js';
import type { ChatProvider, SystemBlock } from '../model/types.js';
import type { Message } from './context.js';
import {
  DEFAULT_RETRIEVAL_TOKENS,
  RETRIEVE_FROM_BYTES,
  memoryFilesBytes,
  retrieveFacts,
  supersededFactIds,
} from './memory-prompt.js';
import { createMemoryTools } from './memory-tools.js';
import { createRecall, createRecallTool, type Recall, type RewriteQuery } from './recall.js';
import { createTranscriptPassages, RECALL_SESSION_BYTES } from './transcript-passages.js';
import {
  DEFAULT_SUMMARISER_CONTEXT_TOKENS,
  type ContextSummary,
  type Summariser,
} from './rolling-summary.js';
import { runAgent, type AgentEvent, type RunAgentResult } from './run-agent.js';
import { charsPerTokenFor, scriptRatiosFrom } from './token-count.js';
import type { AgentTool } from './tool.js';

/**
 * A small agent with memory for one space: the wiring of memory loading, memory tools, recall, the rolling
 * summary and the session recorder around `runAgent`. `dreamd chat "…" [--space]` is one `chat` call
 * followed by `end`.
 *
 * States: open (recorder created or an earlier session resumed, `MEMORY.md` in the cached system prompt) →
 * open (each `chat` retrieves the facts relevant to the message when the memory is large, adds a user turn
 * to the same session, and folds what leaves the window into the summary) → ended (`end` wrote `endedAt`;
 * `chat` refuses).
 */

/** What the model is asked when a recall query found nothing or little (`chat.recallRewrite`). */
export const REWRITE_INSTRUCTIONS =
  'You rewrite a search query for a keyword search over saved notes. Answer with one line of words only: the ' +
  "query's key words, their synonyms and related words (an order is a purchase, where someone lives is their " +
  'city), each translated into every language listed. No sentences, no explanations.';

/** Name stored as the session's `agent`. */
export const CHAT_AGENT_NAME = 'dreamd-chat';
/** Share of the model's context window at which the history is compacted by default: 80 %, room left for the answer and the next turn. */
export const DEFAULT_COMPACT_AT = 0.8;

export interface MemoryAgentOptions {
  readonly space: Space;
  /**
   * The parsed config: the model (either provider), the embeddings endpoint for recall, the chat settings, and
   * (when given) the run records kept and the lock's stale time, for the notes the agent writes; the largest
   * transcript read and the sessions kept out, for recall's transcript passages.
   */
  readonly config: Pick<Config, 'model' | 'embeddings'> & {
    readonly chat?: Config['chat'];
    readonly history?: { readonly keepRuns: number } | undefined;
    readonly limits?:
      { readonly lockStaleMinutes: number; readonly maxSessionBytes?: number | undefined } | undefined;
    readonly keepOut?: Config['keepOut'];
  };
  /** Anthropic SDK client to use instead of one built from `config.model` (tests, custom transports). */
  readonly client?: Anthropic;
  /** Model to use instead of one built from `config.model` (any `ChatProvider`). */
  readonly provider?: ChatProvider;
  /** Topic files placed whole in the system prompt next to the index. Default false: read on demand. */
  readonly includeTopics?: boolean | readonly FactType[];
  /** Also offer Anthropic's `memory_20250818` tool over the same directory (Anthropic only). Default false. */
  readonly anthropicMemoryTool?: boolean;
  /** Most model calls per `chat`. Default 10. */
  readonly maxTurns?: number;
  /** Token budget of one request. Default `chat.compactAt` (80 %) of the model's context window. */
  readonly contextBudget?: number;
  /**
   * Model that writes the rolling summary. Default: the chat model itself (the configured small model),
   * unless `chat.summarise` is false; `false` turns summaries off (old turns leave with a note).
   */
  readonly summariser?: Summariser | false;
  /**
   * Name of a smaller model, on the chat model's provider and endpoint, that writes the rolling summary
   * (instead of `chat.summaryModel`). Not used with `provider`: pass a `summariser` then.
   */
  readonly summaryModel?: string;
  /**
   * Context of the summariser's model, in tokens: each summariser call stays under it. Default: the chat
   * model's window when it summarises itself, else 8,192 (a small local model).
   */
  readonly summariserContextTokens?: number;
  /**
   * Facts retrieved for each message: `auto` (default) when the memory files pass 25,000 bytes, `true`
   * always, `false` never.
   */
  readonly retrieval?: 'auto' | boolean;
  /** Session id (file stem in the sessions directory). Default: start time + random suffix. */
  readonly sessionId?: string;
  /** Continue the recorded session `sessionId` (its history and summary) instead of starting one. */
  readonly resume?: boolean;
  readonly now?: () => Date;
  readonly onEvent?: (event: AgentEvent) => void;
}

export interface ChatResult extends RunAgentResult {
  readonly sessionId: string;
  /** The session transcript, in the space's sessions directory. */
  readonly sessionFile: string;
  /** Ids of the facts retrieved into the system prompt for this message. */
  readonly retrievedFacts: readonly string[];
  /**
   * USD of this message's model calls, priced by the model port's meter as consolidation's runs are;
   * undefined when the model has no known price (set `model.price`) or the provider has no meter.
   */
  readonly costUsd: number | undefined;
}

export interface MemoryAgent {
  readonly space: Space;
  /** The cached part of the system prompt: instructions and `MEMORY.md` (fixed at creation). */
  readonly system: string;
  readonly sessionId: string;
  readonly sessionFile: string;
  /** The conversation so far (resumed messages included), never trimmed. */
  readonly history: readonly Message[];
  /** The rolling summary so far, if anything was folded. */
  readonly summary: ContextSummary | undefined;
  /** Request budget in tokens: compaction starts above it. */
  readonly contextBudget: number;
  /** Sends one user message and runs the loop until the model answers. */
  chat(prompt: string, options?: { signal?: AbortSignal }): Promise<ChatResult>;
  /** Ends the recorded session. Calling it again changes nothing. */
  end(): Promise<void>;
}

function instructions(space: Space, today: string): string {
  return [
    `You are a helpful assistant with long-term memory. Today is ${today}. Memory space: "${space.id}".`,
    'Your memory index from earlier sessions is below, inside <memory-context>: one line per fact, linking to ' +
      'the file that holds it. Open a file with `read_memory` when a line matters for the request; use ' +
      '`recall` to search memory when the user refers to the past or asks for advice that may depend on their ' +
      'preferences. Say when you rely on memory, and prefer what the user says now when the two disagree.',
    'When the user tells you something worth keeping (a preference, a correction, a project decision, a ' +
      'reference), save it with `write_memory` (a fact, with an id); remove a fact with `forget_memory` and its ' +
      'id (the #f-… of its index line) when asked. Never save ' +
      'secrets or the state of the current task.',
  ].join('\n');
}

/**
 * The chat model named by the config, through the model port: the same provider, retry policy, rate gate and
 * cost meter as consolidation's calls. Its SDK loads at the first call. `client`: an Anthropic SDK client of
 * the caller's own.
 */
export function chatProviderFromConfig(
  config: MemoryAgentOptions['config'],
  contextWindow?: number,
  client?: Anthropic,
): ChatProvider {
  return createModel(config.model, {
    ...(client === undefined ? {} : { client }),
    chat: { contextWindow },
  });
}

/** The chat model used as its own summariser: one plain call without tools. */
export function summariserFrom(provider: ChatProvider): Summariser {
  return {
    async generateText(request) {
      const response = await provider.chat({
        system: [{ text: request.system, cache: true }],
        messages: [{ role: 'user', content: request.prompt }],
        tools: [],
        maxTokens: request.maxOutputTokens ?? 512,
        ...(request.signal === undefined ? {} : { signal: request.signal }),
      });
      const value = response.content
        .flatMap((block) => (block.type === 'text' ? [block.text] : []))
        .join('\n');
      return { value, usage: response.usage, attempts: response.attempts };
    },
  };
}

/** A summary as the recorder stores it: a `system` message marked with where the history was cut. */
const RecordedSummary = z.looseObject({
  role: z.literal('system'),
  content: z.string(),
  dreamdSummary: z.object({ cut: z.int().min(0), task: z.int().min(0).optional() }),
});
const RecordedTurn = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
});

/** The history and summary of a recorded session (`ts` and other recorder fields left out). */
export function restoreSession(recorded: readonly unknown[]): {
  history: Message[];
  summary: ContextSummary | undefined;
} {
  const history: Message[] = [];
  let summary: ContextSummary | undefined;
  for (const message of recorded) {
    const marked = RecordedSummary.safeParse(message);
    if (marked.success) {
      summary = { text: marked.data.content, ...marked.data.dreamdSummary };
      continue;
    }
    const turn = RecordedTurn.safeParse(message);
    if (turn.success) history.push({ role: turn.data.role, content: turn.data.content } as Message);
  }
  return { history, summary: summary !== undefined && summary.cut < history.length ? summary : undefined };
}

/** Ids of the `tool_use` blocks of a last assistant message that has no results after it. */
export function unansweredToolUses(history: readonly Message[]): string[] {
  const last = history.at(-1);
  if (last === undefined || last.role !== 'assistant' || typeof last.content === 'string') return [];
  return last.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : []));
}

/** The cached system prompt: the instructions and `MEMORY.md` (active facts only), and the memory part alone. */
async function systemPromptOf(
  options: MemoryAgentOptions,
  now: () => Date,
): Promise<{ system: string; memoryContext: string }> {
  const { space } = options;
  await mkdir(space.memoryDir, { recursive: true });
  const memoryContext = await loadMemoryContext(space.memoryDir, {
    includeTopics: options.includeTopics ?? false,
    supersededIds: await supersededFactIds(space.memoryDir),
  });
  const system = [instructions(space, now().toISOString().slice(0, 10)), memoryContext]
    .filter(Boolean)
    .join('\n\n');
  return { system, memoryContext };
}

/** Where the agent's notes go: the store consolidation writes, with the space's own limits. */
function noteStoreOf(options: MemoryAgentOptions, now: () => Date) {
  const { space, config } = options;
  return {
    memoryDir: space.memoryDir,
    spaceId: space.id,
    now,
    ...(config.history === undefined ? {} : { keepRuns: config.history.keepRuns }),
    ...(config.limits === undefined ? {} : { lockStaleMs: config.limits.lockStaleMinutes * 60_000 }),
  };
}

/** Recall's query rewrite on the summary model, and the tokens it spent since they were last taken. */
function createQueryRewriter(summaryProvider: () => ChatProvider): {
  rewriteQuery: RewriteQuery;
  takeUsage: () => TokenUsage;
} {
  // The query rewrite's tokens, added to the usage of the chat call they happened in.
  let rewriteUsage = emptyUsage();
  return {
    async rewriteQuery(query, languages) {
      const response = await summaryProvider().chat({
        system: [{ text: REWRITE_INSTRUCTIONS }],
        messages: [{ role: 'user', content: `Languages: ${languages.join(', ')}\nQuery: ${query}` }],
        tools: [],
        maxTokens: 120,
      });
      rewriteUsage = addUsage(rewriteUsage, response.usage);
      return response.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join(' ');
    },
    takeUsage() {
      const taken = rewriteUsage;
      rewriteUsage = emptyUsage();
      return taken;
    },
  };
}

/** Recall over the space's facts fused with the passages of every transcript folder the space reads. */
function agentRecall(options: MemoryAgentOptions, chat: ChatConfig, rewriteQuery: RewriteQuery): Recall {
  const { space, config } = options;
  return createRecall({
    memoryDir: space.memoryDir,
    embeddings: config.embeddings,
    ...(chat.recallRewrite ? { rewriteQuery } : {}),
    // Fused recall: the facts, and the passages of every transcript folder the space reads.
    transcripts: createTranscriptPassages({
      space,
      maxBytes: config.limits?.maxSessionBytes ?? RECALL_SESSION_BYTES,
      externalContext: config.keepOut?.externalContext ?? false,
    }),
  });
}

/** The memory tools, recall, and Anthropic's memory tool when asked for (refused on other providers). */
async function agentTools(
  options: MemoryAgentOptions,
  provider: ChatProvider,
  noteStore: ReturnType<typeof noteStoreOf>,
  recall: Recall,
): Promise<AgentTool[]> {
  const tools: AgentTool[] = [...createMemoryTools(noteStore).tools, createRecallTool(recall)];
  if (options.anthropicMemoryTool !== true) return tools;
  if (provider.serverTools !== true) {
    throw new ConfigError(
      `Anthropic's memory tool (memory_20250818) needs the Anthropic API; ${provider.label} has it not. ` +
        'Leave anthropicMemoryTool off: read_memory, write_memory and forget_memory do the same.',
      'anthropicMemoryTool',
    );
  }
  // Loaded only when asked for: it brings the Anthropic SDK's memory tool helper.
  const { createAnthropicMemoryTool } = await import('./anthropic-memory-tool.js');
  tools.push(createAnthropicMemoryTool(noteStore));
  return tools;
}

/** The model that summarises and rewrites queries: the chat model, or a smaller one on its endpoint. */
function summaryProviderOf(
  options: MemoryAgentOptions,
  chat: ChatConfig,
  provider: ChatProvider,
): ChatProvider {
  const { config } = options;
  const summaryModel = options.summaryModel ?? chat.summaryModel;
  // The summary model speaks to the chat model's endpoint: the same client, or the config with its name.
  return summaryModel === undefined || options.provider !== undefined
    ? provider
    : chatProviderFromConfig(
        { ...config, model: { ...config.model, name: summaryModel } },
        undefined,
        options.client,
      );
}

/** The recorded session of the agent, and its history and summary so far. */
interface AgentSession {
  readonly recorder: SessionRecorder;
  /** Everything recorded so far, in order: the next chat continues from it, also after a failed run. */
  readonly history: Message[];
  readonly summary: ContextSummary | undefined;
  /** Records a message and adds it to the history. */
  readonly recordingHistory: Pick<SessionRecorder, 'append'>;
}

/** Starts the session's recording, or resumes it with its history, its calls left unanswered answered. */
async function openSession(options: MemoryAgentOptions, now: () => Date): Promise<AgentSession> {
  if (options.resume === true && options.sessionId === undefined)
    throw new ConfigError('resuming a session needs its id (sessionId, or --session <id>)', 'sessionId');
  const recorder: SessionRecorder = await createSessionRecorder({
    sessionsDir: options.space.sessionsDir,
    id: options.sessionId,
    agent: CHAT_AGENT_NAME,
    now,
    resume: options.resume === true,
  });
  const restored = restoreSession(recorder.previousMessages);
  const history: Message[] = restored.history;
  const recordingHistory: Pick<SessionRecorder, 'append'> = {
    async append(message) {
      await recorder.append(message);
      // runAgent only records the Anthropic-shaped messages it holds, so this is the same object back.
      history.push(message as Message);
    },
  };
  // A session that stopped between a tool call and its result (a crash): answer the calls, so the next
  // request keeps every tool_use paired.
  const unanswered = unansweredToolUses(history);
  if (unanswered.length > 0) {
    await recordingHistory.append({
      role: 'user',
      content: unanswered.map((id) => ({
        type: 'tool_result' as const,
        tool_use_id: id,
        content: 'The session ended before this tool ran; call it again if it is still needed.',
        is_error: true,
      })),
    });
  }
  return { recorder, history, summary: restored.summary, recordingHistory };
}

/** What one chat turn runs with: the agent's parts, fixed at creation. */
interface ChatParts {
  readonly options: MemoryAgentOptions;
  readonly chat: ChatConfig;
  readonly provider: ChatProvider;
  readonly summaryProvider: ChatProvider;
  readonly summariser: Summariser | undefined;
  readonly system: string;
  readonly memoryContext: string;
  readonly tools: AgentTool[];
  readonly recall: Recall;
  readonly retrieves: () => Promise<boolean>;
  readonly session: AgentSession;
  readonly contextBudget: number;
  readonly charsPerToken: number;
}

/** The system blocks of one turn: the cached prompt, and the facts retrieved for the message when memory is large. */
async function turnSystem(
  parts: ChatParts,
  prompt: string,
): Promise<{ blocks: SystemBlock[]; ids: readonly string[] }> {
  const { options, chat, memoryContext } = parts;
  const retrieved = (await parts.retrieves())
    ? await retrieveFacts(parts.recall, prompt, {
        budgetTokens: chat.retrievalTokens ?? DEFAULT_RETRIEVAL_TOKENS,
        charsPerToken: parts.charsPerToken,
      })
    : { text: '', ids: [] };
  options.onEvent?.({
    type: 'memory-backfill',
    memoryBytes: Buffer.byteLength(memoryContext),
    memoryLines: memoryContext === '' ? 0 : memoryContext.split('\n').length,
    retrievedFacts: retrieved.ids,
    retrievedBytes: Buffer.byteLength(retrieved.text),
  });
  const blocks: SystemBlock[] = [{ text: parts.system, cache: true }];
  if (retrieved.text !== '') blocks.push({ text: retrieved.text });
  return { blocks, ids: retrieved.ids };
}

/** One user message through the agent loop, from the history and summary so far. */
async function chatTurn(
  parts: ChatParts,
  summary: ContextSummary | undefined,
  prompt: string,
  signal: AbortSignal | undefined,
): Promise<{ result: RunAgentResult; retrievedFacts: readonly string[] }> {
  const { options, chat, session, charsPerToken } = parts;
  const { blocks, ids } = await turnSystem(parts, prompt);
  const result = await runAgent({
    provider: parts.provider,
    system: blocks,
    messages: [...session.history, { role: 'user', content: prompt }],
    tools: parts.tools,
    maxTokens: options.config.model.maxOutputTokens,
    recorder: session.recordingHistory,
    recordFrom: session.history.length,
    contextBudget: parts.contextBudget,
    charsPerToken,
    scriptRatios: scriptRatiosFrom(chat.charsPerToken),
    initialSummary: summary,
    summary: {
      messageChars: chat.summaryMessageChars,
      contextTokens:
        options.summariserContextTokens ??
        (options.summariser === undefined
          ? parts.summaryProvider.contextWindow
          : DEFAULT_SUMMARISER_CONTEXT_TOKENS),
      charsPerToken,
    },
    ...(parts.summariser === undefined ? {} : { summariser: parts.summariser }),
    ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }),
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    ...(signal === undefined ? {} : { signal }),
  });
  return { result, retrievedFacts: ids };
}

/**
 * Creates the memory agent of one space: `MEMORY.md` (active facts only) in the cached system prompt, the
 * relevant facts retrieved per message when the memory is large, `read_memory`, `write_memory`,
 * `forget_memory` and `recall` (plus Anthropic's memory tool when asked), a rolling summary past 80 % of
 * the window, and the session recorded in the space's sessions directory, where dreamd will consolidate it.
 */
export async function createMemoryAgent(options: MemoryAgentOptions): Promise<MemoryAgent> {
  const { space, config } = options;
  const chat = config.chat ?? ChatConfig.parse({});
  const provider = options.provider ?? chatProviderFromConfig(config, chat.contextWindow, options.client);
  const now = options.now ?? (() => new Date());
  const charsPerToken = charsPerTokenFor(chat.language, chat.charsPerToken);
  const { system, memoryContext } = await systemPromptOf(options, now);
  const noteStore = noteStoreOf(options, now);
  // The rewrite asks the summary model, which is only chosen below: it is looked up at the call.
  const rewriter = createQueryRewriter(() => summaryProvider);
  const recall = agentRecall(options, chat, rewriter.rewriteQuery);
  const tools = await agentTools(options, provider, noteStore, recall);
  const retrieval = options.retrieval ?? 'auto';
  const retrieves = async () =>
    retrieval === 'auto' ? (await memoryFilesBytes(space.memoryDir)) > RETRIEVE_FROM_BYTES : retrieval;
  const summaryProvider = summaryProviderOf(options, chat, provider);
  const summariser =
    options.summariser === false || (options.summariser === undefined && !chat.summarise)
      ? undefined
      : (options.summariser ?? summariserFrom(summaryProvider));
  const contextBudget =
    options.contextBudget ?? Math.floor(provider.contextWindow * (chat.compactAt ?? DEFAULT_COMPACT_AT));
  const session = await openSession(options, now);
  const { recorder, history } = session;
  const parts: ChatParts = {
    options,
    chat,
    provider,
    summaryProvider,
    summariser,
    system,
    memoryContext,
    tools,
    recall,
    retrieves,
    session,
    contextBudget,
    charsPerToken,
  };
  let summary = session.summary;
  let ended = false;

  return {
    space,
    system,
    sessionId: recorder.id,
    sessionFile: recorder.file,
    history,
    get summary() {
      return summary;
    },
    contextBudget,
    async chat(prompt, chatOptions = {}) {
      if (ended) throw new ConfigError(`session ${recorder.id} has ended; create a new agent to chat again`);
      const before = summary;
      const { result, retrievedFacts } = await chatTurn(parts, summary, prompt, chatOptions.signal);
      summary = result.summary;
      const usage = addUsage(result.usage, rewriter.takeUsage());
      if (summary !== undefined && summary !== before) {
        // Kept in the transcript so a resumed session starts from it; the digest drops system messages.
        await recorder.append({
          role: 'system',
          content: summary.text,
          dreamdSummary: { cut: summary.cut, ...(summary.task === undefined ? {} : { task: summary.task }) },
        });
      }
      return {
        ...result,
        usage,
        sessionId: recorder.id,
        sessionFile: recorder.file,
        retrievedFacts,
        costUsd: provider.costOf?.(usage),
      };
    },
    async end() {
      ended = true;
      await recorder.end();
    },
  };
}
