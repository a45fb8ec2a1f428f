/**
 * One model port: only src/model/ (and src/config/, which reads the provider's variables) builds an SDK client
 * or asks which provider it talks to. Everything else calls a ModelProvider, so every call passes one retry
 * policy, one rate gate and one cost meter.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const ALLOWED = ['src/model/', 'src/config/'];

/** What building a client or branching on the provider looks like in code. */
const PATTERNS: readonly { readonly what: string; readonly pattern: RegExp }[] = [
  { what: 'builds an SDK client', pattern: /new\s+(?:Anthropic|OpenAI|[A-Za-z_.]*\.default)\s*\(/ },
  { what: 'copies an SDK client', pattern: /\.withOptions\s*\(/ },
  { what: 'loads an SDK', pattern: /import\s*\(\s*['"](?:@anthropic-ai\/sdk|openai)['"]\s*\)/ },
  {
    what: "imports an SDK's client (not only its types)",
    pattern: /^import\s+(?!type\b)[^;]*from\s+['"](?:@anthropic-ai\/sdk|openai)['"]/m,
  },
  {
    what: 'branches on the provider',
    pattern: /provider\s*[!=]==\s*['"]|['"](?:anthropic|openai-compatible)['"]\s*[!=]==/,
  },
  { what: 'reads the provider from a label', pattern: /label\.startsWith\(/ },
];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

export function portBreaks(files: readonly { path: string; text: string }[]): string[] {
  return files
    .filter((file) => !ALLOWED.some((prefix) => file.path.startsWith(prefix)))
    .flatMap((file) =>
      PATTERNS.filter(({ pattern }) => pattern.test(file.text)).map(({ what }) => `${file.path} ${what}`),
    );
}

describe('the model port', () => {
  it('is the only place that builds SDK clients or branches on the provider', () => {
    const files = ['src', 'workers', 'bin'].flatMap((folder) =>
      sources(join(ROOT, folder)).map((path) => ({
        path: relative(ROOT, path),
        text: readFileSync(path, 'utf8'),
      })),
    );
    expect(portBreaks(files)).toEqual([]);
  });

  it('catches each way around it', () => {
    const breaking = [
      "import Anthropic from '@anthropic-ai/sdk';\nconst client = new Anthropic({ apiKey });",
      "const { default: OpenAI } = await import('openai');",
      "if (config.model.provider === 'openai-compatible') return;",
      "if (provider.label.startsWith('anthropic:')) tools.push(memoryTool);",
      'const copy = client.withOptions({ maxRetries: 0 });',
    ];
    for (const text of breaking) expect(portBreaks([{ path: 'src/agent/x.ts', text }])).not.toEqual([]);
    expect(portBreaks([{ path: 'src/model/x.ts', text: breaking[0]! }])).toEqual([]);
    expect(
      portBreaks([{ path: 'src/agent/x.ts', text: "import type Anthropic from '@anthropic-ai/sdk';" }]),
    ).toEqual([]);
  });
});
