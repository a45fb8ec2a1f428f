/**
 * The agent side of dreamd: load memory at session start, safe memory tools, recall, keeping a long
 * conversation inside the context window, and an agent loop that records every session for consolidation.
 */
export { defineTool, toolName, ToolInputError, type AgentTool, type ToolCallContext } from './tool.js';
export {
  MAX_MEMORY_PATH_DEPTH,
  MAX_MEMORY_PATH_LENGTH,
  parseMemoryPath,
  resolveMemoryPath,
  type MemoryPath,
  type ResolveMemoryPathOptions,
} from './memory-path.js';
export {
  createMemoryTools,
  isPathRefusal,
  MAX_NOTE_BYTES,
  MAX_READ_BYTES,
  type MemoryTools,
  type MemoryToolsOptions,
} from './memory-tools.js';
export {
  ANTHROPIC_MEMORY_ROOT,
  createAnthropicMemoryTool,
  toMemoryRelative,
} from './anthropic-memory-tool.js';
export {
  cutToLimits,
  INDEX_MAX_BYTES,
  INDEX_MAX_LINES,
  loadMemoryContext,
  TOPIC_MAX_BYTES,
  type CutText,
  type MemoryContextOptions,
} from './backfill.js';
export { BM25_B, BM25_K1, createBm25Index, stem, tokenize, type Bm25Index } from '../search/bm25.js';
export {
  cosineSimilarity,
  createOpenAIEmbedder,
  EMBEDDING_BATCH_SIZE,
  EmbeddingCacheFile,
  vectorsFor,
  type EmbeddableDocument,
  type EmbedTexts,
} from './embeddings.js';
export { loadNotes, loadRecallDocuments, splitFrontmatter, type RecallDocument } from './recall-documents.js';
export {
  createRecall,
  createRecallTool,
  DEFAULT_BM25_MIN_SCORE,
  DEFAULT_EMBEDDINGS_MIN_SCORE,
  DEFAULT_RECALL_LIMIT,
  EMBEDDINGS_CACHE_FILE,
  formatRecallResults,
  type CreateRecallOptions,
  type Recall,
  type RecallQueryOptions,
  type RecallAnswer,
  type RecallResult,
} from './recall.js';
export { createSessionPassages, type SessionPassages } from './session-passages.js';
export {
  createTranscriptPassages,
  type TranscriptPassage,
  type TranscriptPassages,
  type TranscriptPassageSource,
} from './transcript-passages.js';
export {
  CLEARED_TOOL_RESULT,
  clearOldToolResults,
  DEFAULT_KEEP_TOOL_RESULTS,
  estimateContextTokens,
  hasToolResult,
  isTurnStart,
  NATIVE_CLEAR_TRIGGER_TOKENS,
  NATIVE_COMPACT_TRIGGER_TOKENS,
  nativeContextManagement,
  recentStart,
  slidingWindow,
  summariseOlderTurns,
  supportsCompaction,
  transcriptText,
  type ClearToolResultsOptions,
  type Message,
  type NativeContextManagement,
  type SlidingWindowOptions,
  type SummariseOptions,
  type SummariseResult,
} from './context.js';
export {
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TURNS,
  runAgent,
  type AgentEvent,
  type RunAgentOptions,
  type RunAgentResult,
} from './run-agent.js';
export {
  CHAT_AGENT_NAME,
  createMemoryAgent,
  chatProviderFromConfig,
  DEFAULT_COMPACT_AT,
  restoreSession,
  summariserFrom,
  unansweredToolUses,
  type ChatResult,
  type MemoryAgent,
  type MemoryAgentOptions,
} from './memory-agent.js';
export {
  CLAUDE_CONTEXT_WINDOW,
  DEFAULT_LOCAL_CONTEXT_WINDOW,
  defaultContextWindow,
} from '../model/context-management.js';
export {
  createAnthropicChatProvider,
  createOpenAIChatProvider,
  type AnthropicChatProviderOptions,
  type OpenAIChatProviderOptions,
} from '../model/chat-providers.js';
export type { ChatProvider, ChatRequest, ChatResponse, SystemBlock } from '../model/types.js';
export { toOpenAIMessages, toOpenAITools } from '../model/openai-chat.js';
export {
  compactHistory,
  DEFAULT_SUMMARY_MESSAGE_CHARS,
  DEFAULT_SUMMARISER_CONTEXT_TOKENS,
  foldIntoSummary,
  foldPoints,
  leavingMessages,
  planCompaction,
  renderContext,
  summaryLine,
  type CompactOptions,
  type CompactResult,
  type ContextSummary,
  type FoldOptions,
  type FoldPoint,
  type FoldResult,
  type Summariser,
} from './rolling-summary.js';
export {
  activeIndexText,
  DEFAULT_RETRIEVAL_TOKENS,
  memoryFilesBytes,
  retrieveFacts,
  RETRIEVE_FROM_BYTES,
  supersededFactIds,
  type RetrievedFacts,
} from './memory-prompt.js';
export { charsPerTokenFor, DEFAULT_CHARS_PER_TOKEN, estimateTokensAt } from './token-count.js';
