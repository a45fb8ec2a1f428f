/**
 * Whether the key of a `key = value` assignment names a secret, judged by its words, in the languages of our
 * users. Pure; used by the redactor's assignment rules (`redact-secrets.ts`).
 */

/**
 * Words of a key that name a secret, in the languages of our users: English, Spanish (contraseña, clave),
 * German (Passwort, Kennwort), French (mot de passe, mdp), Portuguese (senha), and the short forms of config
 * files (pw, pwd, pass, db_pw). A key is split into words (`DB_PASSWORD`, `dbPassword`, `db.password`,
 * `SECRET_KEY_BASE`) and one of its words must be one of these; longer words only need to end in one
 * (`dbpassword`, `accesstoken`), so `tokenizer` or `author` never count.
 */
const SECRET_KEY_WORDS = new Set([
  'password',
  'passwd',
  'passphrase',
  'passcode',
  'passwort',
  'kennwort',
  'contraseña',
  'contrasena',
  'senha',
  'clave',
  'mdp',
  'pwd',
  'pw',
  'pass',
  'secret',
  'secrets',
  'token',
  'apikey',
  'credential',
  'credentials',
  'auth',
  'dsn',
  'sig',
]);
const SECRET_WORD_ENDINGS = ['password', 'passwd', 'passwort', 'secret', 'token', 'apikey'];
/** Words that only mean a secret with a word before them: `api_key`, `AccountKey`, `signing key`. */
const KEY_WORDS = new Set(['key', 'keys']);
/** Words that make a following `key` a credential: `api_key`, `AccountKey`, `signing key` (`sort_key` is not). */
const KEY_QUALIFIERS = new Set([
  'api',
  'access',
  'private',
  'secret',
  'account',
  'signing',
  'encryption',
  'master',
  'shared',
  'client',
  'license',
  'licence',
  'app',
  'service',
  'deploy',
  'ssh',
  'gpg',
  'storage',
  'webhook',
  'auth',
]);
/** Last words that make a key about a secret rather than the secret itself: `token_count`, `password_policy`. */
const NOT_SECRET_TAIL = new Set([
  'count',
  'counts',
  'limit',
  'limits',
  'length',
  'len',
  'size',
  'type',
  'kind',
  'name',
  'names',
  'file',
  'path',
  'url',
  'uri',
  'endpoint',
  'expiry',
  'expires',
  'expiration',
  'ttl',
  'id',
  'ids',
  'usage',
  'budget',
  'header',
  'field',
  'policy',
  'rotation',
  'format',
  'hint',
  'prompt',
  'label',
  'max',
  'min',
  'mode',
  'strategy',
  'manager',
  'provider',
  'store',
  'required',
  'enabled',
  'env',
  'var',
]);
/**
 * Words whose unquoted value after ":" is only taken when it looks random ("Secret: patience" is prose,
 * "pass: the salt" a recipe): every short or general word.
 */
const AMBIGUOUS_WORDS = new Set([
  'secret',
  'secrets',
  'token',
  'auth',
  'credential',
  'credentials',
  'pass',
  'pw',
  'dsn',
  'clave',
  'mdp',
  'sig',
]);

/** The words of a key, lowercased: `dbPassword` → db, password; `SECRET_KEY_BASE` → secret, key, base. */
function keyWords(key: string): string[] {
  return key
    .replace(/["']/g, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[\s_.-]+/)
    .filter((word) => word !== '');
}

export type KeyStrength = 'none' | 'weak' | 'ambiguous' | 'strong';

/**
 * How surely a key names a secret: `strong` (password in any language, api_key, SECRET_KEY_BASE) takes any
 * value; `ambiguous` (token, secret, pass, pw …) takes a quoted or `=` value but an unquoted `: value` only
 * when it looks random; `weak` (a bare `key`) only a value that looks random; `none` is not a secret key.
 */
export function keyStrength(key: string): KeyStrength {
  if (/mot[\s_-]*de[\s_-]*passe/i.test(key)) return 'strong';
  const words = keyWords(key);
  const last = words[words.length - 1];
  if (last === undefined || NOT_SECRET_TAIL.has(last)) return 'none';
  let strength: KeyStrength = 'none';
  words.forEach((word, index) => {
    const named =
      SECRET_KEY_WORDS.has(word) ||
      (word.length > 6 && SECRET_WORD_ENDINGS.some((ending) => word.endsWith(ending)));
    if (named) {
      const next = AMBIGUOUS_WORDS.has(word) ? 'ambiguous' : 'strong';
      if (strength !== 'strong') strength = next;
      // `secret_key`, `auth_token`: two secret words together leave no doubt.
      if (index > 0 && strength === 'ambiguous' && words.slice(0, index).some((w) => SECRET_KEY_WORDS.has(w)))
        strength = 'strong';
    } else if (KEY_WORDS.has(word)) {
      const before = words[index - 1];
      if (before !== undefined && KEY_QUALIFIERS.has(before)) strength = 'strong';
      else if (strength === 'none') strength = 'weak';
    }
  });
  return strength;
}
