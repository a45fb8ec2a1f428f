import type Anthropic from '@anthropic-ai/sdk';
import type { TokenUsage } from '../core/usage.js';

/**
 * The one message shape of dreamd's model port. Conversations stay Anthropic-shaped inside dreamd (text,
 * `tool_use` and `tool_result` blocks: what the session recorder stores and the context functions cut); each
 * provider translates them to its wire format and its answer back. Types only: importing this loads no SDK.
 */

/** One message of a conversation. */
export type Message = Anthropic.MessageParam;

/** One block of a message's content. */
export type ContentBlock = Anthropic.ContentBlockParam;

/** A tool offered to the model: a custom tool (`input_schema`) or a server-defined one (`memory_20250818`). */
export type ToolDefinition = Anthropic.ToolUnion;

/** One block of the system prompt. `cache: true` marks the end of a prefix the provider may cache. */
export interface SystemBlock {
  readonly text: string;
  readonly cache?: boolean;
}

/** One turn of a conversation: the whole history so far, the tools on offer, the longest answer. */
export interface ChatRequest {
  readonly system: readonly SystemBlock[];
  readonly messages: readonly Message[];
  /** Tool definitions as `AgentTool.definition` holds them (Anthropic-shaped). */
  readonly tools: readonly ToolDefinition[];
  /** `max_tokens` of the answer. */
  readonly maxTokens: number;
  readonly signal?: AbortSignal;
}

/**
 * Why an answer ended: `end_turn`, `tool_use`, `max_tokens`, `stop_sequence`, `pause_turn` or `refusal`
 * (other providers' reasons are mapped to these).
 */
export type StopReason = string;

export interface ChatResponse {
  /** The answer as Anthropic-shaped blocks: `text` and `tool_use` (ids as the provider gave them). */
  readonly content: ContentBlock[];
  readonly stopReason: StopReason;
  readonly usage: TokenUsage;
  /** Attempts the call took (1 = no retry). */
  readonly attempts: number;
}
