import type { AnthropicBeta, BetaContextManagementConfig } from '@anthropic-ai/sdk/resources/beta';
import type { ModelConfig } from '../config/schema.js';
import { ModelError, ModelErrorKind } from '../errors.js';
import type { ChatOptions } from './provider-options.js';

/** Tool results kept by clearing, the last 3, as `clear_tool_uses_20250919` keeps by default. */
export const DEFAULT_KEEP_TOOL_RESULTS = 3;
/** Context editing triggers, in input tokens (Anthropic's defaults for both native strategies). */
export const NATIVE_CLEAR_TRIGGER_TOKENS = 100_000;
export const NATIVE_COMPACT_TRIGGER_TOKENS = 150_000;

/** The beta `context_management` request fields, and the beta headers they need. */
export interface NativeContextManagement {
  readonly betas: AnthropicBeta[];
  readonly context_management: BetaContextManagementConfig;
  /** True when server-side compaction is on; when false the client must still trim long histories. */
  readonly compaction: boolean;
}

/** True for models that support server-side compaction (`compact_20260112`): every Claude model but Haiku. */
export function supportsCompaction(model: string): boolean {
  return /^claude-/i.test(model) && !/haiku/i.test(model);
}

/**
 * Anthropic's native context management for a model: tool-result clearing (`clear_tool_uses_20250919`, at
 * 100K input tokens, keeping the last 3 tool uses) for every Claude model, plus compaction
 * (`compact_20260112`, at 150K) for models that support it. Undefined for a non-Claude model name (an
 * OpenAI-compatible endpoint), where the client-side context functions are the only option.
 */
export function nativeContextManagement(model: string): NativeContextManagement | undefined {
  if (!/^claude-/i.test(model)) return undefined;
  const compaction = supportsCompaction(model);
  const edits: NonNullable<BetaContextManagementConfig['edits']> = [
    {
      type: 'clear_tool_uses_20250919',
      trigger: { type: 'input_tokens', value: NATIVE_CLEAR_TRIGGER_TOKENS },
      keep: { type: 'tool_uses', value: DEFAULT_KEEP_TOOL_RESULTS },
    },
  ];
  if (compaction)
    edits.push({
      type: 'compact_20260112',
      trigger: { type: 'input_tokens', value: NATIVE_COMPACT_TRIGGER_TOKENS },
    });
  const betas: AnthropicBeta[] = ['context-management-2025-06-27'];
  if (compaction) betas.push('compact-2026-01-12');
  return { betas, context_management: { edits }, compaction };
}

/** Context window of Claude models (every current one). */
export const CLAUDE_CONTEXT_WINDOW = 200_000;
/**
 * Context window assumed for other models: 8,192 tokens, the `num_ctx` small local models commonly run
 * with (Ollama's own default is smaller; vLLM and LM Studio use the model's). Set `chat.contextWindow`.
 */
export const DEFAULT_LOCAL_CONTEXT_WINDOW = 8_192;

/** The context window assumed for a model name when none is configured. */
export function defaultContextWindow(model: string): number {
  return /^claude-/i.test(model) ? CLAUDE_CONTEXT_WINDOW : DEFAULT_LOCAL_CONTEXT_WINDOW;
}

/**
 * The native context management an Anthropic chat call sends for this model and these options: none with
 * `client`; `native` on a model that has none is a ModelError.
 */
export function anthropicNative(
  config: Pick<ModelConfig, 'name'>,
  chat: ChatOptions,
): NativeContextManagement | undefined {
  const native = chat.contextManagement === 'client' ? undefined : nativeContextManagement(config.name);
  if (chat.contextManagement === 'native' && native === undefined) {
    throw new ModelError(`${config.name}: Anthropic's native context management is only for Claude models`, {
      retryable: false,
      kind: ModelErrorKind.badRequest,
    });
  }
  return native;
}
