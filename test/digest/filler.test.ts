import { describe, expect, it } from 'vitest';
import { dropAssistantFiller, isCourtesyOnly, isSmallTalkOnly, saidWords } from '../../src/digest/filler.js';
import { assistant, digestLines, user } from './sessions.js';

/** One test per text of `texts`, titled `title` and the text: `classify` answers `expected` for each. */
function eachText(
  classify: (text: string) => boolean,
  expected: boolean,
  title: string,
  texts: readonly string[],
): void {
  it.each(texts)(`${title}: %j`, (text) => {
    expect(classify(text)).toBe(expected);
  });
}

describe('courtesy and filler', () => {
  eachText(
    isCourtesyOnly,
    true,
    'tells greetings, thanks and goodbyes said alone, in English, Portuguese and Spanish',
    [
      'Hi!',
      'hello there',
      'Thanks a lot :)',
      'ok thanks, bye',
      'Olá, bom dia!',
      'Muito obrigada',
      '¡Hola!',
      'Muchas gracias, hasta luego 👋',
    ],
  );

  eachText(isCourtesyOnly, false, 'keeps confirmations and anything that says more than courtesy', [
    'ok',
    'yes',
    'perfect',
    'exactly like that',
    'thanks, I live in Porto now',
    'hi, my name is Ana',
    'obrigado, moro no Porto',
    '',
  ]);

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
    expect(
      digestLines([
        user('Good morning!'),
        assistant('Good morning! How can I help you today?'),
        user('I prefer Python three with uv for every script in this repository.'),
        assistant(`Of course! ${echo}I will use uv run for the scripts from now on.`),
        user('perfect'),
        user('thanks, bye'),
      ]),
    ).toEqual([
      '### session s1 · 2026-11-20',
      'user: I prefer Python three with uv for every script in this repository.',
      'assistant: I will use uv run for the scripts from now on.',
      'user: perfect',
    ]);
  });
});

describe('small talk', () => {
  eachText(
    isSmallTalkOnly,
    true,
    'drops a message of greetings, how-are-yous and sign-offs, sentence by sentence',
    [
      "Hey! Good to see you. What's up? Anything new?",
      'Hi there! Great to see you again. How can I help you today?',
      "Thanks, that's all for now. Talk soon!",
      "I'm good, thanks! How are you doing?",
    ],
  );

  eachText(
    isSmallTalkOnly,
    false,
    'keeps a message with one clause that says anything else, and confirmations',
    [
      'Hey! Good to see you. I moved to Porto last week.',
      'ok',
      'yes, that works',
      "What's up with the build? It fails on main.",
      `${'Good to see you. '.repeat(15)}`,
    ],
  );

  it('leaves small talk out of the digest and the assistant’s stock offers of help out of its answers', () => {
    expect(
      digestLines([
        user("Hey! Good to see you. What's up? Anything new?"),
        assistant('Great to see you again. How can I help you today?'),
        user('I moved to Porto last week.'),
        assistant('That is great news! I will update your delivery address.'),
      ]),
    ).toEqual([
      '### session s1 · 2026-11-20',
      'user: I moved to Porto last week [week of 2026-11-09].',
      'assistant: I will update your delivery address.',
    ]);
  });

  eachText(isSmallTalkOnly, true, 'drops an appraisal said with thanks, in five languages', [
    'Great, thanks.',
    'Perfect, thank you!',
    'awesome thanks 🙏',
    'Good, thanks a lot. Bye!',
    'Ótimo, obrigado!',
    'Perfeito, valeu',
    'Genial, muchas gracias.',
    'Parfait, merci beaucoup !',
    'Super, vielen Dank!',
    'Danke schön, bis bald',
  ]);

  eachText(isSmallTalkOnly, false, 'keeps a turn that carries anything besides thanks and praise', [
    'Great.',
    'Perfect!',
    'No, thanks.',
    'Yes, thanks',
    'Use tabs.',
    'Thanks, and deploy to staging',
    'Great, thanks, that fixed the build',
    'Perfeito, obrigado, mas use tabs',
    'Merci, mais pas le vendredi',
  ]);

  it('leaves "Great, thanks." out of the digest and keeps the short instruction after it', () => {
    expect(
      digestLines([
        user('Can you make the indentation tabs?'),
        assistant('Done: the project now indents with tabs.'),
        user('Great, thanks.'),
        user('Use tabs in the tests too.'),
      ]),
    ).toEqual([
      '### session s1 · 2026-11-20',
      'user: Can you make the indentation tabs?',
      'assistant: Done: the project now indents with tabs.',
      'user: Use tabs in the tests too.',
    ]);
  });
});
