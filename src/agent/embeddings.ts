import { sha256 } from '../memory/hash.js';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';

/**
 * Embeddings from an OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, vLLM, LM Studio), with the
 * vectors of facts cached on disk so a fact is embedded once, and again only when its text changes.
 *
 * Cache file states: absent (nothing embedded yet) → written after the first embedding call → rewritten
 * whenever a fact is new or its content hash changed, with entries of facts that no longer exist dropped.
 * A cache made with another model, or unreadable, is ignored and rebuilt; it never fails a recall.
 */

export const EmbeddingCacheFile = z.object({
  version: z.literal(1),
  model: z.string(),
  entries: z.record(z.string(), z.object({ hash: z.string(), vector: z.array(z.number()) })),
});
export type EmbeddingCacheFile = z.infer<typeof EmbeddingCacheFile>;

import type { EmbedTexts } from '../model/embedder.js';
export type { EmbedTexts } from '../model/embedder.js';

export { createOpenAIEmbedder, EMBEDDING_BATCH_SIZE } from '../model/embedder.js';

/** Cosine similarity of two vectors: 1 same direction, 0 unrelated. 0 when either is all zeros. */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}

/** sha256 of the text a fact is embedded from. */
async function readCache(file: string, model: string): Promise<EmbeddingCacheFile['entries']> {
  try {
    const parsed = EmbeddingCacheFile.safeParse(JSON.parse(await readFile(file, 'utf8')));
    return parsed.success && parsed.data.model === model ? parsed.data.entries : {};
  } catch {
    return {};
  }
}

/** A document to embed: a stable id and the text its vector stands for. */
export interface EmbeddableDocument {
  readonly id: string;
  readonly text: string;
}

/**
 * Returns the vector of every document, embedding only those missing from the cache or whose content hash
 * changed, then writes the cache back atomically (when `cacheFile` is given) without stale entries.
 */
export async function vectorsFor(
  documents: readonly EmbeddableDocument[],
  options: {
    embed: EmbedTexts;
    model: string;
    cacheFile: string | undefined;
    memo: Map<string, EmbeddingCacheFile['entries']>;
  },
): Promise<Map<string, number[]>> {
  const key = options.cacheFile ?? '';
  const cached =
    options.memo.get(key) ??
    (options.cacheFile === undefined ? {} : await readCache(options.cacheFile, options.model));
  const hashes = documents.map((document) => sha256(document.text));
  const missing = documents.filter((document, i) => cached[document.id]?.hash !== hashes[i]);
  const fresh = missing.length === 0 ? [] : await options.embed(missing.map((document) => document.text));
  const entries: EmbeddingCacheFile['entries'] = {};
  documents.forEach((document, i) => {
    const hash = hashes[i] ?? '';
    const previous = cached[document.id];
    if (previous !== undefined && previous.hash === hash) entries[document.id] = previous;
  });
  missing.forEach((document, i) => {
    const vector = fresh[i];
    if (vector === undefined) throw new Error(`no embedding returned for ${document.id}`);
    entries[document.id] = { hash: sha256(document.text), vector };
  });
  const changed = missing.length > 0 || Object.keys(cached).length !== Object.keys(entries).length;
  options.memo.set(key, entries);
  if (changed && options.cacheFile !== undefined) {
    await mkdir(path.dirname(options.cacheFile), { recursive: true });
    const file: EmbeddingCacheFile = { version: 1, model: options.model, entries };
    await writeFileAtomic(options.cacheFile, JSON.stringify(file));
  }
  return new Map(Object.entries(entries).map(([id, entry]) => [id, entry.vector]));
}
