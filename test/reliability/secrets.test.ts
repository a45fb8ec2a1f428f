import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type AnthropicReply, type RecordedAnthropicRequest } from '../../harness/fake-anthropic-server.js';
import { answerDefaults, sessionsInPrompt } from '../../harness/scripted-extractor.js';
import { MANUAL, consolidatorFor, createWorkspace, readTree, cleanUpWorkspaces } from './support/harness.js';
import { useFakeAnthropic } from '../support/fixtures.js';

/**
 * Keys, tokens, passwords and private keys planted in user text, tool inputs, tool results, OpenAI-shaped
 * tool calls and Claude Code JSONL. None may appear in any raw request body the fake server receives, nor in any
 * file of the memory directory (state included) — even when the model emits secrets as facts on its own.
 */

const PEM_BODY_LINE = 'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0';
const PRIVATE_KEY = [
  '-----BEGIN RSA PRIVATE KEY-----',
  PEM_BODY_LINE,
  '/vwbLMFz9DGhQE8lJ2Xq4BqjHk5vYl7zR3wT0nKp2sUeAaBbCcDdEeFfGgHhIiJjKkLlMmNnOoPp',
  '-----END RSA PRIVATE KEY-----',
].join('\n');

/** name → secret value (the exact bytes that must never leave). */
const SECRETS: Readonly<Record<string, string>> = {
  anthropic: 'sk-ant-api03-Q7vLm2Xr9Tz4Kp8Wd3Hs6Jb1Nc5Fg0Ye',
  openai: 'sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed',
  aws: 'AKIAQ3EGRT7YHN4KZ2WX',
  github: 'ghp_4fKq9ZtLm2Vx8Rw3Ns6Jd1Hb5Gc0Ye7Pa2Uo',
  slack: 'xoxb-2231-88412-Qm7TzXvK9pLr',
  stripe: 'sk_live_51HqLm2Xr9Tz4Kp8Wd3Hs6Jb',
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI4ODQyMTAwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  password: 'Tr0ub4dor&3xQ',
  dbPassword: 'S3cretPassw0rdZ',
  envPassword: 'hunter2hunter2X9',
  bearer: 'a8f5f167f44f4964e6c998dee827110c',
  google: 'AIzaSyD4kQ8vLm2Xr9Tz4Kp8Wd3Hs6Jb1Nc5Fg0',
  privateKey: PEM_BODY_LINE,
};

function nativeSessions(sessionsDir: string): void {
  const anthropicShaped = {
    id: 'secrets-anthropic',
    startedAt: '2026-11-20T09:00:00Z',
    endedAt: '2026-11-20T09:30:00Z',
    messages: [
      {
        role: 'user',
        content: `My Anthropic key is ${SECRETS.anthropic} and my password is ${SECRETS.password}. I like green tea.`,
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me configure the deploy.' },
          {
            type: 'tool_use',
            id: 'toolu_1',
            name: 'set_env',
            input: {
              GITHUB_TOKEN: SECRETS.github,
              STRIPE_KEY: SECRETS.stripe,
              url: `postgres://admin:${SECRETS.dbPassword}@db.internal:5432/shop`,
            },
          },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: `ok\nDATABASE_PASSWORD=${SECRETS.envPassword}\nAWS_ACCESS_KEY_ID=${SECRETS.aws}\n${PRIVATE_KEY}\n`,
          },
        ],
      },
      { role: 'assistant', content: 'Done.' },
    ],
  };
  const openAiShaped = {
    id: 'secrets-openai',
    startedAt: '2026-11-21T09:00:00Z',
    endedAt: '2026-11-21T09:30:00Z',
    messages: [
      { role: 'system', content: 'You are a deploy bot.' },
      {
        role: 'user',
        content: `Use ${SECRETS.openai} for the summariser. The slack bot token is ${SECRETS.slack}. I like green tea.`,
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: {
              name: 'http_get',
              arguments: JSON.stringify({
                headers: { Authorization: `Bearer ${SECRETS.bearer}` },
                key: SECRETS.google,
              }),
            },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: `{"session":"${SECRETS.jwt}"}` },
      { role: 'assistant', content: 'Fetched.' },
    ],
  };
  writeFileSync(join(sessionsDir, 'secrets-anthropic.json'), JSON.stringify(anthropicShaped, null, 2));
  writeFileSync(join(sessionsDir, 'secrets-openai.json'), JSON.stringify(openAiShaped, null, 2));
}

function claudeCodeSession(sessionsDir: string): void {
  const sessionId = '5f0c2d9e-1b7a-4c3e-9d8f-2a6b4c8e0f11';
  const base = {
    isSidechain: false,
    userType: 'external',
    cwd: '/repo',
    sessionId,
    version: '2.1.14',
    gitBranch: 'main',
  };
  const lines = [
    {
      ...base,
      type: 'user',
      uuid: 'u1',
      parentUuid: null,
      timestamp: '2026-11-22T08:00:00.000Z',
      message: { role: 'user', content: `export ANTHROPIC_API_KEY=${SECRETS.anthropic} — I like green tea.` },
    },
    {
      ...base,
      type: 'assistant',
      uuid: 'a1',
      parentUuid: 'u1',
      timestamp: '2026-11-22T08:00:05.000Z',
      message: {
        role: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: 'toolu_cc1',
            name: 'Bash',
            input: {
              command: `curl -H "Authorization: Bearer ${SECRETS.bearer}" https://api.internal/?key=${SECRETS.google}`,
            },
          },
        ],
      },
    },
    {
      ...base,
      type: 'user',
      uuid: 'u2',
      parentUuid: 'a1',
      timestamp: '2026-11-22T08:00:07.000Z',
      message: {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_cc1',
            content: `${PRIVATE_KEY}\naws_secret_access_key = ${SECRETS.github}`,
          },
        ],
      },
    },
  ];
  writeFileSync(
    join(sessionsDir, `${sessionId}.jsonl`),
    `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`,
  );
}

/**
 * A model that extracts the real preference and, on its own, also emits secrets as facts (it never received
 * them: a model recalling a key from elsewhere, or a leak through the digest if redaction failed).
 */
function leakyModel(request: RecordedAnthropicRequest): AnthropicReply {
  const facts = sessionsInPrompt(request.prompt).flatMap((session) => [
    ...(session.text.includes('green tea')
      ? [
          {
            type: 'user',
            title: 'Likes green tea',
            body: 'The user likes green tea.',
            ...answerDefaults(session),
          },
        ]
      : []),
    {
      type: 'reference',
      title: 'Production credentials',
      body: `Deploy key ${SECRETS.anthropic}, AWS ${SECRETS.aws}, DB postgres://admin:${SECRETS.dbPassword}@db.internal/shop, token ${SECRETS.github}`,
      ...answerDefaults(session),
    },
  ]);
  return { json: { facts } };
}

const fake = useFakeAnthropic({ answer: leakyModel, scope: 'all' });
afterAll(async () => {
  cleanUpWorkspaces();
});

describe('secrets', () => {
  it('never sends a planted secret to the model and never writes one to the memory directory', async () => {
    const workspace = createWorkspace({
      modelUrl: fake.url,
      spaces: [{ id: 'native' }, { id: 'claude', format: 'claude-code' }],
    });
    nativeSessions(workspace.space('native').sessionsDir);
    claudeCodeSession(workspace.space('claude').sessionsDir);

    // A Claude Code session has no end marker: it settles 30 quiet minutes after its file was written.
    const later = new Date(Date.now() + 3_600_000);
    for (const id of ['native', 'claude']) {
      const summary = await consolidatorFor(workspace.config, { now: () => later })(
        workspace.space(id),
        MANUAL,
      );
      expect(summary.status, id).toBe('completed');
      expect(summary.quarantined, id).toBeGreaterThanOrEqual(1);
    }
    expect(fake.server.requests.length).toBeGreaterThanOrEqual(2);

    // Raw request bodies, headers aside (the API key header is the test's own key).
    const bodies = fake.server.requests.map((request) => JSON.stringify(request.body));
    for (const [name, secret] of Object.entries(SECRETS)) {
      for (const body of bodies) expect(body.includes(secret), `${name} in a request body`).toBe(false);
    }
    expect(bodies.join('\n')).toContain('[REDACTED:');

    // Every file of both memory directories, .dreamd/ (ledger, runs, quarantine) included.
    for (const id of ['native', 'claude']) {
      const files = readTree(workspace.space(id).memoryDir);
      expect(files.has('.dreamd/quarantine.md'), id).toBe(true);
      // The native space writes topic files, the Claude Code one a file per fact (its default layout).
      const memory = [...files].filter(([path]) => path.endsWith('.md') && !path.startsWith('.dreamd/'));
      expect(
        memory.filter(([path, content]) => path.startsWith('user') && content.includes('green tea')),
        id,
      ).toHaveLength(1);
      for (const [path, content] of files) {
        for (const [name, secret] of Object.entries(SECRETS)) {
          expect(content.includes(secret), `${name} in ${id}/${path}`).toBe(false);
        }
      }
    }
  });
});
