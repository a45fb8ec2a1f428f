import { describe, expect, it } from 'vitest';
import { digestSession, digestedRawChars } from '../../src/digest/index.js';
import type { SessionMessage } from '../../src/transcripts/types.js';
import { generateAgentSession, generateDialogue } from './generate.js';
import {
  assistant,
  digestLines,
  makeSession,
  readClaudeCodeFixture,
  SESSION_START,
  text,
  toolCall,
  toolResult,
  user,
} from './sessions.js';

describe('digestSession', () => {
  it('opens with the session header, and dates only the lines written on another day', () => {
    const digest = digestSession(
      makeSession('abc', SESSION_START, [
        user('the deploy is red'),
        assistant('looking'),
        { ...user('back again, deployed yesterday'), ts: '2026-11-22T09:00:00Z' },
      ]),
    );
    expect(digest.sessionId).toBe('abc');
    expect(digest.date).toBe('2026-11-20');
    expect(digest.text.split('\n')).toEqual([
      '### session abc · 2026-11-20',
      'user: the deploy is red',
      'assistant: looking',
      '[2026-11-22] user: back again, deployed yesterday [2026-11-21]',
    ]);
    expect(digest.chars).toBe(digest.text.length);
    expect(digest.estimatedTokens).toBe(Math.ceil(digest.text.length / 4));
  });

  it('keeps the writer’s local date and time of a timestamp with an offset', () => {
    const session = makeSession('tz', '2026-11-20T23:30:00-05:00', [
      { ...user('deployed today'), ts: '2026-11-20T23:30:00-05:00' },
    ]);
    expect(digestSession(session).text).toBe(
      '### session tz · 2026-11-20\nuser: deployed today [2026-11-20]',
    );
  });

  it('turns a tool call into one short line naming the tool and its most telling input', () => {
    const lines = digestLines([
      assistant(toolCall('Bash', { command: 'ls -la src', description: 'List files' })),
      assistant(toolCall('Read', { file_path: '/repo/README.md', limit: 40 })),
      assistant(toolCall('Grep', { pattern: 'TODO', path: '/repo' })),
      assistant(toolCall('WebFetch', { url: 'https://example.com/docs', prompt: 'summarize' })),
      assistant(toolCall('Write', { file_path: '/repo/big.txt', content: 'x'.repeat(100_000) })),
      assistant(toolCall('Bash', { command: `echo ${'y'.repeat(500)}\nsecond line` })),
    ]);
    expect(lines.slice(1, 6)).toEqual([
      'assistant → Bash(ls -la src)',
      'assistant → Read(/repo/README.md)',
      'assistant → Grep(TODO)',
      'assistant → WebFetch(https://example.com/docs)',
      'assistant → Write(/repo/big.txt)',
    ]);
    const longCall = lines[6] ?? '';
    expect(longCall.startsWith('assistant → Bash(echo yyy')).toBe(true);
    expect(longCall.length).toBeLessThanOrEqual('assistant → Bash()'.length + 120);
    expect(longCall).not.toContain('\n');
  });

  it('cuts a long tool result to toolResultChars and says how much was cut', () => {
    const result = 'a'.repeat(150) + ' ' + 'b'.repeat(9_849);
    const lines = digestLines([
      assistant(toolCall('Read', { file_path: 'x' }, 't1')),
      user(toolResult(result, 't1')),
    ]);
    const line = lines[2] ?? '';
    expect(line.startsWith('tool ← Read: aaaa')).toBe(true);
    expect(line).toMatch(/… \[cut 9800 chars\]$/);
    expect(line.length).toBeLessThan(260);
  });

  it('honours a custom toolResultChars and flags errors', () => {
    const lines = digestLines(
      [
        assistant(toolCall('Bash', { command: 'make' }, 't1')),
        user(toolResult('make: *** No rule to make target', 't1', true)),
      ],
      { toolResultChars: 10 },
    );
    expect(lines[2]).toBe('tool ← Bash ERROR: make: ***… [cut 22 chars]');
  });

  it('drops what a file-writing tool echoes on success, and keeps its errors', () => {
    const lines = digestLines([
      assistant(toolCall('Edit', { file_path: 'deploy.sh' }, 't1')),
      user(
        toolResult(
          "The file deploy.sh has been updated. Here's the result of running `cat -n`: 1→ echo",
          't1',
        ),
      ),
      assistant(toolCall('Write', { file_path: 'notes.md' }, 't2')),
      user(toolResult('EACCES: permission denied, open notes.md', 't2', true)),
    ]);
    expect(lines.slice(1)).toEqual([
      'assistant → Edit(deploy.sh)',
      'assistant → Write(notes.md)',
      'tool ← Write ERROR: EACCES: permission denied, open notes.md',
    ]);
  });

  it('keeps the head and tail of a pasted user text longer than 16,000 characters', () => {
    const first = 'Context: my staging cluster is called vega-stg.';
    const last = 'Anyway, please remember my deploy window is Tuesday 14:00 UTC.';
    const paste = `${first} ${'log line 42 ok '.repeat(20_000)}${last}`;
    const digest = digestSession(makeSession('s', SESSION_START, [user(paste)]));
    expect(digest.text).toContain(first);
    expect(digest.text).toContain(last);
    expect(digest.text).toMatch(/… \[\d+ chars left out\] …/);
    expect(digest.chars).toBeLessThan(16_500);
  });

  it('never cuts a user text of typed length (up to 16,000 characters)', () => {
    const fact = 'My production database is called orion-prod-7 and lives in eu-west-3.';
    const long = `${'I paste a long story here. '.repeat(400)}${fact}`;
    const digest = digestSession(makeSession('s', SESSION_START, [user(long)]));
    expect(digest.text).toContain(fact);
    expect(digest.text).toContain(long.replace(/\s+/g, ' ').trim());
  });

  it.each([
    ['single spaces', 'x '.repeat(270) + 'x'],
    ['whitespace collapsing to a fifth', 'x        '.repeat(60) + 'x'],
  ])('narrows a huge text before cleaning it, leaking no secret its cut splits (%s)', (_label, before) => {
    // 541 raw characters, then a key across the edge of the head window (556 characters for a 280 limit:
    // a window of 2 × 280 + 256, less its tail of 100 kept + 128 lost at the edge + 32).
    expect(before).toHaveLength(541);
    const text = `${before}AKIAIOSFODNN7EXAMPLE ${'y '.repeat(50_000)}the end`;
    const line = digestLines([assistant(text)])[1] ?? '';
    expect(line).not.toMatch(/AKIA|OSFODNN/);
    expect(line).toMatch(/^assistant: x/);
    expect(line).toMatch(/y the end$/);
    const leftOut = Number(/\[(\d+) chars left out\]/.exec(line)?.[1]);
    expect(leftOut).toBeGreaterThan(99_000);
  });

  it('dates and redacts only the two ends a long assistant text keeps, leaking no secret across a cut', () => {
    // Over the 280 characters kept and a margin of 128 at each kept end, so each end is dated and redacted
    // alone. A key straddles the head's cut (the head keeps 180 characters of the dated text), a date sits
    // in the middle (left out), one in the tail, and a token starts in the tail's margin.
    const head = `${'a '.repeat(60)}we deployed yesterday, key AKIAIOSFODNN7EXAMPLE then`;
    const middle = ` ${'m '.repeat(100)}tomorrow ${'n '.repeat(60)}`;
    const tail = ` token ghp_${'Z'.repeat(36)} ${'t '.repeat(20)}see you tomorrow`;
    const text = `${head}${middle}${tail}`;
    expect(text.length).toBeGreaterThan(280 + 2 * 128);
    const line = digestLines([assistant(text)])[1] ?? '';

    expect(line).toMatch(/^assistant: a a .* yesterday \[2026-11-19\], key /);
    expect(line).toMatch(/see you tomorrow \[2026-11-21\]$/);
    expect(line).not.toMatch(/AKIA|OSFODNN|ZZZZ|m tomorrow/);
    // The count is of the text's characters left out, give or take what the ends' markers changed.
    const leftOut = Number(/\[(\d+) chars left out\]/.exec(line)?.[1]);
    expect(Math.abs(leftOut - (text.length - 280))).toBeLessThan(60);

    // A key across the 180th character itself: the head's margin reads it whole.
    const straddling = `${'a '.repeat(80)}key AKIAIOSFODNN7EXAMPLE ${'z '.repeat(300)}`;
    expect(straddling.indexOf('AKIA')).toBeLessThan(180);
    expect(straddling.indexOf('AKIA') + 20).toBeGreaterThan(180);
    expect(digestLines([assistant(straddling)])[1]).toMatch(/^assistant: a a .* key \[REDACTED/);
  });

  it('keeps the head and the closing question of a long assistant text (280 characters)', () => {
    const text = `${'word '.repeat(1_000)}Shall I save Rua das Flores 28 as your default address?`;
    const lines = digestLines([assistant(text)]);
    const line = lines[1] ?? '';
    expect(line).toMatch(/^assistant: word word/);
    expect(line).toMatch(
      /… \[\d+ chars left out\] … .*Shall I save Rua das Flores 28 as your default address\?$/,
    );
    expect(line.length).toBeLessThan(340);
  });

  it('drops system prompts, thinking, meta lines, sidechains and images', () => {
    const session = makeSession('s', SESSION_START, [
      { role: 'system', parts: [text('You are a helpful assistant. SYSTEM-SECRET-PROMPT')] },
      { role: 'assistant', parts: [{ kind: 'thinking', text: 'PRIVATE-THOUGHT' }, text('visible answer')] },
      { ...user('Stop hook feedback: META-LINE'), meta: true },
      { ...assistant('SIDECHAIN-WORK'), sidechain: true },
      user('look at this data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB [image] please'),
      user(toolResult('[image]', 'none')),
    ]);
    const digest = digestSession(session);
    for (const dropped of [
      'SYSTEM-SECRET-PROMPT',
      'PRIVATE-THOUGHT',
      'META-LINE',
      'SIDECHAIN-WORK',
      'base64',
      '[image]',
    ]) {
      expect(digest.text).not.toContain(dropped);
    }
    expect(digest.text).toContain('assistant: visible answer');
    expect(digest.text).toContain('user: look at this please');
    expect(digest.lines).toHaveLength(2);
  });

  it('drops system reminders, local-command noise and hook boilerplate but keeps typed command arguments', () => {
    const lines = digestLines([
      user(
        'fix the bug <system-reminder>\nThe TodoWrite tool has not been used recently.\n</system-reminder>',
      ),
      user(
        '<command-name>/exit</command-name>\n<command-message>exit</command-message>\n<command-args></command-args>',
      ),
      user('<local-command-stdout>Goodbye!</local-command-stdout>'),
      user(
        '<command-name>/remember</command-name><command-message>remember</command-message><command-args>we use pnpm</command-args>',
      ),
      user(
        'Caveat: The messages below were generated by the user while running local commands. DO NOT respond.',
      ),
      user('PreToolUse:Bash hook error: [hooks/check.sh]: blocked'),
      user('[Request interrupted by user]'),
      assistant('No response requested.'),
      user(
        toolResult(
          'file body<system-reminder>Whenever you read a file, consider whether it is malware.</system-reminder>',
          'x',
        ),
      ),
    ]);
    expect(lines.slice(1)).toEqual([
      'user: fix the bug',
      'user: /remember we use pnpm',
      'tool ← result: file body',
    ]);
  });

  it('drops text repeated verbatim earlier in the session but keeps short replies', () => {
    const boilerplate = 'Please follow the repository guidelines in CONTRIBUTING.md before answering.';
    const lines = digestLines([
      user(boilerplate),
      user('yes'),
      user(boilerplate),
      user('yes'),
      user(`${boilerplate} And use tabs.`),
    ]);
    expect(lines.slice(1).map((line) => line.replace(/^\[[^\]]+\] /, ''))).toEqual([
      `user: ${boilerplate}`,
      'user: yes',
      'user: yes',
      `user: ${boilerplate} And use tabs.`,
    ]);
  });

  it('keeps a compaction summary whole and marks it', () => {
    const summary = `This session is being continued from a previous conversation. ${'The user prefers tabs. '.repeat(100)}`;
    const flagged = digestLines([{ ...user(summary), compactSummary: true }]);
    expect(flagged[1]).toMatch(/^summary of earlier conversation: This session/);
    expect(flagged[1]).not.toContain('[cut');
    const unflagged = digestLines([user(summary)]);
    expect(unflagged[1]).toContain('summary of earlier conversation: ');
  });

  it('resolves relative dates against each message’s own date', () => {
    const session = makeSession('s', SESSION_START, [
      { ...user('we moved the box last Thursday'), ts: '2026-11-26T10:00:00Z' },
      { ...assistant('Noted: the move was yesterday?'), ts: '2026-12-01T08:00:00Z' },
    ]);
    const digest = digestSession(session);
    expect(digest.text).toContain('user: we moved the box last Thursday [2026-11-19]');
    expect(digest.text).toContain('assistant: Noted: the move was yesterday [2026-11-30]?');
  });

  it('redacts secrets in every kind of line and counts them', () => {
    const key = 'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';
    const digest = digestSession(
      makeSession('s', SESSION_START, [
        user(`my key is ${key}`),
        assistant(`I will export ${key}`),
        assistant(toolCall('Bash', { command: `ANTHROPIC_API_KEY=${key} npm start` }, 't')),
        user(toolResult(`env: ${key}`, 't')),
      ]),
    );
    expect(digest.text).not.toContain(key);
    expect(digest.text).not.toContain('AbCdEfGhIj');
    expect(digest.redactions).toBe(4);
    expect(digest.text).toContain('[REDACTED:anthropic-key]');
  });

  it('digests only messages from fromMessage, without repeating boilerplate seen before it', () => {
    const boilerplate = 'Remember: all answers must follow the style guide in the team wiki.';
    const session = makeSession('s', SESSION_START, [
      user(`${boilerplate}`),
      assistant(toolCall('Bash', { command: 'ls' }, 'old')),
      user('new question'),
      user(boilerplate),
      user(toolResult('src test', 'old')),
    ]);
    const digest = digestSession(session, { fromMessage: 2 });
    expect(digest.lines.map((line) => line.text)).toEqual(['user: new question', 'tool ← Bash: src test']);
    expect(digest.messagesRead).toBe(3);
    expect(digest.fromMessage).toBe(2);
    expect(digest.toMessage).toBe(4);
    const digested = session.messages.filter((message: SessionMessage) => message.index >= 2);
    expect(digestedRawChars(session, 2)).toBe(JSON.stringify(digested).length);
  });

  it('measures the raw characters as the JSON of the digested messages', () => {
    const session = makeSession('s', SESSION_START, [user('a'), assistant('b')]);
    expect(digestedRawChars(session)).toBe(JSON.stringify(session.messages).length);
  });
});

describe('digest size', () => {
  const seeds = [1, 2, 3, 4, 5];

  it('shrinks agent transcripts with tool calls to at most 6% of their raw JSON', () => {
    let digestChars = 0;
    let rawChars = 0;
    for (const seed of seeds) {
      const session = generateAgentSession(`agent-${seed}`, seed);
      const digest = digestSession(session);
      expect(digest.chars / digestedRawChars(session)).toBeLessThanOrEqual(0.06);
      digestChars += digest.chars;
      rawChars += digestedRawChars(session);
    }
    expect(digestChars / rawChars).toBeLessThanOrEqual(0.06);
  });

  it('shrinks plain dialogue to at most half of its raw JSON', () => {
    for (const seed of seeds) {
      const session = generateDialogue(`dialogue-${seed}`, seed);
      expect(digestSession(session).chars / digestedRawChars(session)).toBeLessThanOrEqual(0.5);
    }
  });

  it('carries every planted fact whole, where cutting messages at 500 characters loses some', () => {
    const facts = Array.from(
      { length: 20 },
      (_, index) => `FACT-${index}: the user's favourite editor number ${index} is configured with tabs.`,
    );
    for (const session of [generateAgentSession('a', 11, 20, facts), generateDialogue('d', 12, 20, facts)]) {
      const digest = digestSession(session);
      for (const fact of facts) expect(digest.text).toContain(fact);
    }
    const naive = generateDialogue(
      'd',
      12,
      20,
      facts.map((fact) => `${'context '.repeat(70)}${fact}`),
    );
    const naiveText = naive.messages
      .flatMap((message) => message.parts)
      .map((part) => (part.kind === 'text' ? part.text.slice(0, 500) : ''))
      .join('\n');
    expect(facts.filter((fact) => naiveText.includes(fact)).length).toBeLessThan(facts.length);
  });
});

describe('digest of real Claude Code transcripts', () => {
  it('keeps the conversation of the hello-world session and drops its Stop-hook feedback', () => {
    const { session } = readClaudeCodeFixture('claude-reliability__hello-world-script.jsonl');
    const digest = digestSession(session);
    expect(digest.date).toBe('2026-01-21');
    expect(digest.text).toContain(
      'user: Write a shell script called hello.sh that prints "Hello world" and run it.',
    );
    expect(digest.text).toContain('assistant → Write(/tmp/tmp74wiyiny/hello.sh)');
    expect(digest.text).toContain(
      'assistant → Bash(chmod +x /tmp/tmp74wiyiny/hello.sh && /tmp/tmp74wiyiny/hello.sh)',
    );
    expect(digest.text).toContain('tool ← Bash: Hello world');
    expect(digest.text).not.toContain('Stop hook feedback');
  });

  it('digests the compacted session: noise gone, summary kept, under 6% of the file', () => {
    const { session, rawBytes } = readClaudeCodeFixture(
      'entireio-cli__a6-e4c2a0fbd1__compact-boundary.jsonl',
    );
    const digest = digestSession(session);
    expect(digest.text).not.toMatch(
      /Caveat: The messages below|<command-name>|Goodbye!|No response requested/,
    );
    // The summary, without Claude Code's wrapping, its analysis and its task-state sections.
    expect(digest.text).toContain('summary of earlier conversation: Summary: 1. Primary Request and Intent:');
    expect(digest.text).toContain('6. All user messages:');
    expect(digest.text).not.toMatch(
      /This session is being continued|Let me chronologically analyze|Files and Code Sections:|Optional Next Step:|Please continue the conversation/,
    );
    expect(digest.text).toContain('user: the issue is still that this would not surface to the user');
    expect(digest.chars / rawBytes).toBeLessThanOrEqual(0.06);
    for (const line of digest.lines) expect(line.text).not.toContain('\n');
  });

  it('shows a sub-agent Task call by its description and keeps its result short', () => {
    const { session } = readClaudeCodeFixture('entireio-cli__e2-775d4606d9__summary-task.jsonl');
    const digest = digestSession(session);
    expect(digest.text).toContain('assistant → Task(Create color file in docs)');
    expect(digest.text).toMatch(/tool ← Task: I have created the file .*\[cut \d+ chars\]/);
    expect(digest.text).not.toContain('The user wants me to run an agent');
  });

  it('never lets a NUL or another control character through, in user text or in a tool line', () => {
    const digest = digestSession(
      makeSession('nul', SESSION_START, [
        user('my\u0000name is\u0007 Ana\u001b[0m'),
        assistant(toolCall('Bash', { command: 'echo a\u0000b' }, 'c1')),
        user(toolResult('out\u0000put\u007f', 'c1')),
      ]),
    );
    // eslint-disable-next-line no-control-regex -- the characters under test
    expect(digest.text).not.toMatch(/[\0-\x08\x0E-\x1F\x7F]/);
    expect(digest.text).toContain('user: my name is Ana [0m');
    expect(digest.text).toContain('Bash(echo a b)');
    expect(digest.text).toContain('out put');
  });
});
