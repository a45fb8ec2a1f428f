import { describe, expect, it } from 'vitest';
import { digestSession } from '../../src/digest/digest-session.js';
import { dropAssistantFiller, isCourtesyOnly, wordSet } from '../../src/digest/filler.js';
import { assistant, makeSession, user } from './sessions.js';

const START = '2026-11-20T09:00:00Z';

describe('courtesy and filler', () => {
  it('tells greetings, thanks and goodbyes said alone, in English, Portuguese and Spanish', () => {
    for (const text of [
      'Hi!',
      'hello there',
      'Thanks a lot :)',
      'ok thanks, bye',
      'Olá, bom dia!',
      'Muito obrigada',
      '¡Hola!',
      'Muchas gracias, hasta luego 👋',
    ]) {
      expect(isCourtesyOnly(text), text).toBe(true);
    }
  });

  it('keeps confirmations and anything that says more than courtesy', () => {
    for (const text of [
      'ok',
      'yes',
      'perfect',
      'exactly like that',
      'thanks, I live in Porto now',
      'hi, my name is Ana',
      'obrigado, moro no Porto',
      '',
    ]) {
      expect(isCourtesyOnly(text), text).toBe(false);
    }
  });

  it('drops the assistant’s stock openers and closers and sentences that only echo the user', () => {
    const userWords = wordSet('I moved to Porto last week, Avenida da Boavista 120.');
    const answer =
      'Great question! You moved to Porto last week, Avenida da Boavista 120. Shall I update your delivery address? Let me know if you have any other questions.';
    expect(dropAssistantFiller(answer, () => userWords)).toBe('Shall I update your delivery address?');
    expect(dropAssistantFiller('Sure, I will write the tests first.', () => userWords)).toBe(
      'Sure, I will write the tests first.',
    );
  });

  it('drops filler in the digest before cutting, so a long answer keeps more of what it says', () => {
    const echo = 'You said you prefer Python three with uv for every script in this repository. '.repeat(1);
    const digest = digestSession(
      makeSession('s', START, [
        user('Good morning!'),
        assistant('Good morning! How can I help you today?'),
        user('I prefer Python three with uv for every script in this repository.'),
        assistant(`Of course! ${echo}I will use uv run for the scripts from now on.`),
        user('perfect'),
        user('thanks, bye'),
      ]),
    );
    expect(digest.text.split('\n')).toEqual([
      '### session s · 2026-11-20',
      'assistant: How can I help you today [2026-11-20]?',
      'user: I prefer Python three with uv for every script in this repository.',
      'assistant: I will use uv run for the scripts from now on.',
      'user: perfect',
    ]);
  });
});
