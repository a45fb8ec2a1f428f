import type { ModelConfig } from '../config/schema.js';
import type { NativeContextManagement } from './context-management.js';
import type { CostMeter } from './cost-meter.js';
import type { ModelEndpoint } from './endpoint.js';

/**
 * A model's settings resolved once by the provider table (`providers.ts` `resolveModel`) and handed to its
 * adapter (`anthropic.ts`, `openai-compatible.ts`), which imports nothing from the table: config parsed,
 * endpoint resolved, label, key hint and the one cost meter of the model.
 */

/** What a provider is before any call: its label and how it handles a long conversation. */
export interface ProviderShape {
  readonly label: string;
  readonly contextWindow: number;
  readonly compactsServerSide: boolean;
  readonly clearsToolResults: boolean;
}

export interface ResolvedModel {
  /** The model config with its defaults applied. */
  readonly config: ModelConfig;
  /**
   * Where calls go and with which credentials, resolved the SDKs' way (`endpoint.ts`), not yet checked: a
   * caller's own SDK client brings its own, and the adapter takes those from the client.
   */
  readonly endpoint: ModelEndpoint;
  /** The endpoint, or ModelError `missing-credentials` saying what to set (the table's credentials rule). */
  checkedEndpoint(): ModelEndpoint;
  readonly shape: ProviderShape;
  /** Anthropic's native context management for this model and chat options; undefined for none. */
  readonly native: NativeContextManagement | undefined;
  /** The provider runs Anthropic's server-defined tools (`memory_20250818`). */
  readonly serverTools: boolean;
  /** Where a key is set, for error messages. */
  readonly keyHint: string;
  /** The model's cost meter: the one the provider and a run price calls with (`cost-meter.ts`). */
  readonly costOf: CostMeter;
}
