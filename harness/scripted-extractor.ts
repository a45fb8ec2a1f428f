/**
 * A deterministic stand-in for the model's judgement, for end-to-end tests: reads the extraction prompt the
 * real pipeline sent (current index + fenced digest), and answers with the facts whose trigger phrase appears
 * in a session's lines. It sees only what the fake server received, so a fact whose text never reached the
 * model cannot be "extracted".
 */
import type { AnthropicReply, RecordedAnthropicRequest } from './fake-anthropic-server.js';

export interface ScriptedFact {
  /** Phrase (case-insensitive) that must appear in a session's digest for this fact to be extracted. */
  readonly trigger: string | RegExp;
  readonly type: 'user' | 'feedback' | 'project' | 'reference';
  readonly title: string;
  readonly body: string;
  readonly why?: string;
  readonly howToApply?: string;
  /** The line a memory selector picks the fact by (the answer's `description`); absent: none written. */
  readonly description?: string;
  /** Title of an existing fact (in the prompt's index) or of an earlier fact in this answer that this one replaces. */
  readonly replacesTitle?: string;
}

interface DigestSession {
  readonly id: string;
  readonly date: string;
  readonly text: string;
}

/**
 * The fields of a fact in a model's answer that a scripted model fills the same way every time: learned in
 * `session`, on its date, replacing nothing, with full confidence. Spread it into the fact.
 */
export function answerDefaults(session: { readonly id: string; readonly date: string }) {
  return {
    why: null,
    howToApply: null,
    observed: session.date,
    sources: [session.id],
    replaces: [] as string[],
    confidence: 1,
  };
}

/** Splits the fenced digest of an extraction prompt into its sessions. */
export function sessionsInPrompt(prompt: string): DigestSession[] {
  const sessions: DigestSession[] = [];
  const pattern = /^### session (\S+) · (\d{4}-\d{2}-\d{2})(?: · part \d+)?$/gm;
  const matches = [...prompt.matchAll(pattern)];
  matches.forEach((match, index) => {
    const end = matches[index + 1]?.index ?? prompt.indexOf('<<<DREAMD-DATA', match.index + 1);
    sessions.push({
      id: match[1]!,
      date: match[2]!,
      text: prompt.slice(match.index, end === -1 ? undefined : end),
    });
  });
  return sessions;
}

/** `id | type | title — hook` lines of the prompt's current-memory section. */
export function indexInPrompt(prompt: string): { id: string; type: string; title: string }[] {
  const section = prompt.split('## Current memory')[1]?.split('## Transcripts')[0] ?? '';
  return section
    .split('\n')
    .map((line) => /^((?:f|run)-[a-z0-9]+) \| (\w+) \| (.*?)(?: — .*)?$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ id: match[1]!, type: match[2]!, title: match[3]! }));
}

function matches(trigger: string | RegExp, text: string): boolean {
  return typeof trigger === 'string'
    ? text.toLowerCase().includes(trigger.toLowerCase())
    : trigger.test(text);
}

/** True for the update check's request (`src/consolidation/extraction/update-check.ts`), not an extraction. */
export function isUpdateCheckRequest(request: { readonly system: string }): boolean {
  return request.system.startsWith('You keep a memory of facts up to date');
}

/** A new fact of an update check prompt, with the related facts listed for it. */
export interface CheckPromptFact {
  readonly id: string;
  readonly type: string;
  readonly observed: string;
  readonly title: string;
  readonly body: string;
  readonly related: readonly { readonly id: string; readonly title: string }[];
}

/** The new facts of an update check prompt, each with its related facts (id and title). */
export function checkInPrompt(prompt: string): CheckPromptFact[] {
  const related = new Map<string, string>();
  const [relatedPart = '', newPart = ''] = prompt.split('## New facts');
  for (const match of relatedPart.matchAll(/^(\S+) \| \w+ \| (.*?) — .*$/gm))
    related.set(match[1]!, match[2]!);
  return [...newPart.matchAll(/^(new-\d+) \| (\w+) \| (\S+) \| (.*?) — (.*) \| related: (.*)$/gm)].map(
    (match) => ({
      id: match[1]!,
      type: match[2]!,
      observed: match[3]!,
      title: match[4]!,
      body: match[5]!,
      related: match[6]!.split(', ').map((id) => ({ id, title: related.get(id) ?? '' })),
    }),
  );
}

/**
 * An update check answered by a rule: each new fact replaces the related facts `replaces` names for it (by
 * title), as a model that read both could.
 */
export function scriptedUpdateCheck(
  replaces: (fact: CheckPromptFact) => readonly string[],
): (request: RecordedAnthropicRequest) => AnthropicReply {
  return (request) => ({
    json: {
      updates: checkInPrompt(request.prompt).flatMap((fact) => {
        const titles = new Set(replaces(fact));
        const ids = fact.related.filter((entry) => titles.has(entry.title)).map((entry) => entry.id);
        return ids.length === 0 ? [] : [{ fact: fact.id, replaces: ids }];
      }),
    },
  });
}

/** Builds a reply function for the fake server from a table of facts. */
export function scriptedExtractor(
  facts: readonly ScriptedFact[],
): (request: RecordedAnthropicRequest) => AnthropicReply {
  // The update check: a fact names the related fact its `replacesTitle` names, as in an extraction.
  const check = scriptedUpdateCheck((fact) =>
    facts
      .filter((scripted) => scripted.title === fact.title && scripted.replacesTitle !== undefined)
      .map((scripted) => scripted.replacesTitle as string),
  );
  return (request) => {
    if (isUpdateCheckRequest(request)) return check(request);
    const index = indexInPrompt(request.prompt);
    const out: unknown[] = [];
    for (const session of sessionsInPrompt(request.prompt)) {
      for (const fact of facts) {
        if (!matches(fact.trigger, session.text)) continue;
        const inMemory =
          fact.replacesTitle === undefined
            ? []
            : index.filter((entry) => entry.title === fact.replacesTitle).map((entry) => entry.id);
        // A fact returned earlier in this answer has no id yet: the model names its title.
        const inAnswer = out.some((earlier) => (earlier as { title: string }).title === fact.replacesTitle);
        const replaces = inMemory.length === 0 && inAnswer ? [fact.replacesTitle as string] : inMemory;
        out.push({
          type: fact.type,
          title: fact.title,
          body: fact.body,
          why: fact.why ?? null,
          howToApply: fact.howToApply ?? null,
          ...(fact.description === undefined ? {} : { description: fact.description }),
          observed: session.date,
          sources: [session.id],
          replaces,
          confidence: null,
        });
      }
    }
    return { json: { facts: out } };
  };
}

/** The facts planted in the example transcripts of `sessions/`. */
export const EXAMPLE_FACTS: readonly ScriptedFact[] = [
  {
    trigger: 'I live in Lisbon',
    type: 'user',
    title: 'Home address',
    body: 'Lives in Lisbon, Rua das Flores 28.',
    // A model names the address in memory that this one contradicts, whichever is newer (sessions in any order).
    replacesTitle: 'Home address',
  },
  {
    trigger: "don't eat spicy food",
    type: 'user',
    title: "Doesn't eat spicy food",
    body: 'The user does not eat spicy food (chilli gives heartburn).',
  },
  {
    trigger: 'oat flat white',
    type: 'user',
    title: 'Usual coffee order',
    body: 'The usual at Fábrica is an oat flat white.',
  },
  {
    trigger: 'semicolons',
    type: 'feedback',
    title: 'No semicolons in TypeScript',
    body: 'Do not use semicolons in the TypeScript code.',
    why: 'Prettier runs with semi: false and the CI lint job fails on them.',
    howToApply: 'Write TS without semicolons.',
  },
  {
    trigger: 'Postgres',
    type: 'project',
    title: 'Shop API moves to Postgres',
    body: "The shop's API moves to Postgres 17.",
  },
  {
    trigger: 'grafana',
    type: 'reference',
    title: 'Team Grafana dashboard',
    body: 'Latency dashboard: https://grafana.shop.internal/d/shop-api',
  },
  {
    trigger: 'moved to Porto',
    type: 'user',
    title: 'Home address',
    body: 'Lives in Porto since 2026-11-19.',
    replacesTitle: 'Home address',
  },
];

/** The titles active after the example sessions are consolidated with EXAMPLE_FACTS, sorted (one is superseded). */
export const EXAMPLE_ACTIVE_TITLES: readonly string[] = [
  "Doesn't eat spicy food",
  'Home address',
  'No semicolons in TypeScript',
  'Shop API moves to Postgres',
  'Team Grafana dashboard',
  'Usual coffee order',
];

/** A fact as a curation prompt shows it (`consolidation/curation/curate.ts` `curationPrompt`). */
export interface PromptFact {
  readonly id: string;
  readonly readOnly: boolean;
  readonly observed: string;
  readonly updated: string;
  readonly title: string;
  readonly body: string;
  readonly why: string | null;
  readonly howToApply: string | null;
}

/** Whether a request is a curation call (its system prompt), not an extraction. */
export function isCurationRequest(request: RecordedAnthropicRequest): boolean {
  return request.system.startsWith('You curate an AI agent');
}

/** The type a curation prompt is about, and its facts. */
export function curationInPrompt(prompt: string): { type: string; facts: PromptFact[] } {
  const type = /^## Memory type: (\w+)/m.exec(prompt)?.[1] ?? '';
  const facts = [...prompt.matchAll(/<<<FACT\n([\s\S]*?)\nFACT>>>/g)].map((match) => {
    const lines = (match[1] ?? '').split('\n');
    const field = (name: string): string | null => {
      const line = lines.find((candidate) => candidate.startsWith(`${name}: `));
      return line === undefined ? null : line.slice(name.length + 2);
    };
    const head = /^id: (\S+)( \(READ-ONLY\))?$/.exec(lines[0] ?? '');
    const dates = /^observed: (\S+), updated: (\S+)$/.exec(lines[1] ?? '');
    return {
      id: head?.[1] ?? '',
      readOnly: head?.[2] !== undefined,
      observed: dates?.[1] ?? '',
      updated: dates?.[2] ?? '',
      title: field('title') ?? '',
      body: field('body') ?? '',
      why: field('why'),
      howToApply: field('how to apply'),
    };
  });
  return { type, facts };
}

/** One result of a curation answer, as the model returns it. */
export interface CuratorResult {
  readonly title: string;
  readonly body: string;
  readonly why?: string | null;
  readonly howToApply?: string | null;
  readonly replaces: readonly string[];
  readonly outdated?: readonly string[];
}

/**
 * The answer to the update check a curation call carries (`consolidation/curate-run.ts`), if it carries one: its
 * sections are answered by `extract` as the check's own call would be, so a scripted model answers the check the
 * same whether it goes alone or with curation.
 */
function carriedCheckAnswer(
  request: RecordedAnthropicRequest,
  extract: (request: RecordedAnthropicRequest) => AnthropicReply,
): { updates?: unknown } {
  const at = request.prompt.indexOf('## Related facts (id | type | title');
  if (at === -1) return {};
  const reply = extract({
    ...request,
    system: 'You keep a memory of facts up to date (the update check a curation call carried).',
    prompt: request.prompt.slice(at),
  });
  const json = 'json' in reply ? (reply.json as { updates?: unknown } | undefined) : undefined;
  return { updates: Array.isArray(json?.updates) ? json.updates : [] };
}

/**
 * A reply function that answers curation calls with `curate` (given the type and the facts of the prompt) and
 * every other call with `extract`: a scripted model for runs that curate.
 */
export function withCurator(
  extract: (request: RecordedAnthropicRequest) => AnthropicReply,
  curate: (
    type: string,
    facts: readonly PromptFact[],
  ) => { results: readonly CuratorResult[]; review?: readonly { id: string; reason: string }[] },
): (request: RecordedAnthropicRequest) => AnthropicReply {
  return (request) => {
    if (!isCurationRequest(request)) return extract(request);
    const { type, facts } = curationInPrompt(request.prompt);
    const answer = curate(type, facts);
    return {
      json: {
        ...carriedCheckAnswer(request, extract),
        results: answer.results.map((result) => ({
          why: null,
          howToApply: null,
          outdated: [],
          ...result,
        })),
        review: answer.review ?? [],
      },
    };
  };
}
