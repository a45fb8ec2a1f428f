import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { readSettledSessions } from '../../src/transcripts/read-settled-sessions.js';
import { scanSessions } from '../../src/transcripts/scan-sessions.js';
import type { Session } from '../../src/transcripts/types.js';
import { EXAMPLE_SESSIONS, MAX_BYTES, createLedger, nativeSpace } from './helpers.js';

function allText(session: Session): string {
  return session.messages
    .flatMap((message) =>
      message.parts.map((part) =>
        part.kind === 'tool-call'
          ? JSON.stringify(part.input)
          : part.kind === 'subagent'
            ? `${part.prompt}\n${part.answer}`
            : part.text,
      ),
    )
    .join('\n');
}

async function readExamples(): Promise<{ sessions: Session[]; problems: unknown[] }> {
  const ledger = createLedger();
  // Freshly checked-out files are recent: they are settled because each one has endedAt.
  const scan = await scanSessions({
    space: nativeSpace(EXAMPLE_SESSIONS),
    ledger,
    now: new Date(),
    quietMinutes: 30,
    maxBytes: MAX_BYTES,
  });
  expect(scan.entries.every((entry) => entry.status === 'settled')).toBe(true);
  return readSettledSessions(scan, { ledger, maxBytes: MAX_BYTES });
}

describe('the example sessions in sessions/', () => {
  it('all read, without warnings, and are ready to consolidate at once', async () => {
    const files = (await readdir(EXAMPLE_SESSIONS)).filter((name) => name.endsWith('.json'));
    const { sessions, problems } = await readExamples();
    expect(problems).toEqual([]);
    expect(files.length).toBeGreaterThanOrEqual(6);
    expect(sessions).toHaveLength(files.length);
    for (const session of sessions) {
      expect(session.warnings).toEqual([]);
      expect(session.endedAt).toBeDefined();
      expect(session.startedAt.startsWith('2026-11-')).toBe(true);
      expect(`${session.id}.json`).toBe(session.file.split('/').pop());
    }
    expect(new Set(sessions.map((session) => session.startedAt.slice(0, 10))).size).toBe(sessions.length);
  });

  it('carry the facts a consolidation should find', async () => {
    const { sessions } = await readExamples();
    const text = (id: string): string => {
      const session = sessions.find((candidate) => candidate.id === id);
      expect(session, id).toBeDefined();
      return allText(session as Session);
    };
    expect(text('2026-11-05-dinner-friday')).toContain("I don't eat spicy food");
    expect(text('2026-11-09-coffee-usual')).toMatch(/the same as last time[\s\S]*oat flat white/);
    expect(text('2026-11-12-no-semicolons')).toMatch(/don't use semicolons in our TS[\s\S]*that's why/);
    expect(text('2026-11-16-postgres-migration')).toMatch(/from MongoDB to Postgres/);
    expect(text('2026-11-16-postgres-migration')).toContain('last Thursday');
    expect(text('2026-11-19-grafana-dashboard')).toContain(
      'https://grafana.shop.internal/d/shop-api-latency/shop-api-latency',
    );
    expect(text('2026-11-02-lisbon-delivery')).toContain('I live in Lisbon, Rua das Flores 28');
    expect(text('2026-11-26-moved-to-porto')).toContain('I moved to Porto last Thursday');
  });

  it('include an OpenAI-shaped session and long tool results', async () => {
    const { sessions } = await readExamples();
    const roles = new Set(sessions.flatMap((session) => session.messages.map((message) => message.role)));
    expect(roles).toEqual(new Set(['system', 'user', 'assistant', 'tool']));
    const resultLengths = sessions.flatMap((session) =>
      session.messages.flatMap((message) =>
        message.parts.filter((part) => part.kind === 'tool-result').map((part) => part.text.length),
      ),
    );
    expect(resultLengths.filter((length) => length > 500).length).toBeGreaterThanOrEqual(4);
  });
});
