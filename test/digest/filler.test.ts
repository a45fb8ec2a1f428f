import { describe, expect, it } from 'vitest';
import { digestSession } from '../../src/digest/digest-session.js';
import { dropAssistantFiller, isCourtesyOnly, isSmallTalkOnly, saidWords } from '../../src/digest/filler.js';
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
    const userWords = saidWords('I moved to Porto last week, Avenida da Boavista 120.');
    const answer =
      'Great question! You moved to Porto last week, Avenida da Boavista 120. Shall I update your delivery address? Let me know if you have any other questions.';
    expect(dropAssistantFiller(answer, () => userWords)).toBe('Shall I update your delivery address?');
    expect(dropAssistantFiller('Sure, I will write the tests first.', () => userWords)).toBe(
      'Sure, I will write the tests first.',
    );
  });

  it.each([
    ['a whole word, any case', 'I moved to PORTO last week.', 'porto', true],
    ['not a word inside a longer one', 'I moved to Portobello.', 'porto', false],
    ['a word next to punctuation and digits', 'rua-das-flores,28', 'flores', true],
    ['accents gone, as the sentence is normalised', 'Moro em São Paulo', 'sao', true],
    ['a word the user never said', 'I moved to Porto.', 'lisbon', false],
  ])('saidWords: %s', (_name, text, word, expected) => {
    expect(saidWords(text).has(word)).toBe(expected);
  });

  it('saidWords is empty when the text has no word of three letters or more', () => {
    expect(saidWords('ok, go!').empty).toBe(true);
    expect(saidWords('é só').empty).toBe(true);
    expect(saidWords('yes').empty).toBe(false);
    expect(saidWords('não').empty).toBe(false);
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
      'user: I prefer Python three with uv for every script in this repository.',
      'assistant: I will use uv run for the scripts from now on.',
      'user: perfect',
    ]);
  });
});

describe('small talk', () => {
  it('drops a message of greetings, how-are-yous and sign-offs, sentence by sentence', () => {
    for (const text of [
      "Hey! Good to see you. What's up? Anything new?",
      'Hi there! Great to see you again. How can I help you today?',
      "Thanks, that's all for now. Talk soon!",
      "I'm good, thanks! How are you doing?",
    ]) {
      expect(isSmallTalkOnly(text), text).toBe(true);
    }
  });

  it('keeps a message with one clause that says anything else, and confirmations', () => {
    for (const text of [
      'Hey! Good to see you. I moved to Porto last week.',
      'ok',
      'yes, that works',
      "What's up with the build? It fails on main.",
      `${'Good to see you. '.repeat(15)}`,
    ]) {
      expect(isSmallTalkOnly(text), text).toBe(false);
    }
  });

  it('leaves small talk out of the digest and the assistant’s stock offers of help out of its answers', () => {
    const digest = digestSession(
      makeSession('s', START, [
        user("Hey! Good to see you. What's up? Anything new?"),
        assistant('Great to see you again. How can I help you today?'),
        user('I moved to Porto last week.'),
        assistant('That is great news! I will update your delivery address.'),
      ]),
    );
    expect(digest.text.split('\n')).toEqual([
      '### session s · 2026-11-20',
      'user: I moved to Porto last week [week of 2026-11-09].',
      'assistant: I will update your delivery address.',
    ]);
  });
});
