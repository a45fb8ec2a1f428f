import { describe, expect, it } from 'vitest';
import { keyStrength } from '../../src/digest/secret-keys.js';

describe('keyStrength', () => {
  it.each([
    ['DB_PASSWORD', 'strong'],
    ['dbPassword', 'strong'],
    ['"contraseña"', 'strong'],
    ['Passwort', 'strong'],
    ['mot de passe', 'strong'],
    ['senha', 'strong'],
    ['SECRET_KEY_BASE', 'strong'],
    ['AccountKey', 'strong'],
    ['api_key', 'strong'],
    ['auth_token', 'strong'],
    ['db_pw', 'ambiguous'],
    ['pass', 'ambiguous'],
    ['token', 'ambiguous'],
    ['key', 'weak'],
    ['sort_key', 'weak'],
    ['token_count', 'none'],
    ['password_policy', 'none'],
    ['api_key_id', 'none'],
    ['tokenizer', 'none'],
    ['author', 'none'],
    ['keyboard', 'none'],
  ] as const)('%s is %s', (key, strength) => {
    expect(keyStrength(key)).toBe(strength);
  });
});
