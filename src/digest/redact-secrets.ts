/**
 * Secret redaction: every secret-looking span is replaced by `[REDACTED:<kind>]` before transcript text leaves
 * the process. Rules run in order, most specific first (a PEM block before the base64 inside it, a provider's
 * key format before the generic "token=…" assignment), and an already-redacted span is never matched again.
 *
 * False positives are kept low on purpose: the digest feeds memory, and a sentence that loses a word to an
 * over-eager rule loses a fact. So provider formats need their exact prefix and length, generic assignments
 * skip code references (`process.env.X`, `config.apiKey`, `getToken()`) and type names, and a bare hex or
 * base64 string is only taken when a key-like word comes just before it (a git SHA in a sentence survives).
 */

import { keyStrength } from './secret-keys.js';

export interface Redaction {
  readonly text: string;
  /** Number of spans replaced. */
  readonly count: number;
}

interface RedactionRule {
  readonly kind: string;
  /**
   * Global regex with a named group `value` (the part replaced). Optional named groups `pre` and `post`
   * are kept around the marker, so `Bearer abc…` becomes `Bearer [REDACTED:bearer-token]`.
   */
  readonly pattern: RegExp;
  /**
   * Cheap pre-check: the rule runs only when the text contains this (a literal, or a regex without the
   * global flag). Most text holds no secret, and the generic rules cost ten times a literal scan. Every text
   * the pattern matches must contain the hint: `mayHoldSecret`, the first gate, holds wherever a hint holds.
   */
  readonly hint: string | RegExp;
  /** Return false to leave a match alone (a reference, a placeholder, prose). */
  readonly accept?: (value: string, groups: Readonly<Record<string, string | undefined>>) => boolean;
}

const MARKER_PREFIX = '[REDACTED:';

/** Characters that may sit between a key-like word and a high-entropy string ("key is ", "token: "). */
const KEY_GAP_CHARS = 24;

/** Values that are code, types or placeholders rather than secrets. */
const NOT_A_SECRET_WORDS = new Set([
  'null',
  'undefined',
  'none',
  'nil',
  'true',
  'false',
  'string',
  'number',
  'boolean',
  'str',
  'int',
  'bytes',
  'await',
  'new',
  'this',
  'self',
  'required',
  'optional',
  'redacted',
  'hidden',
  'empty',
  'secret',
  'token',
]);

const REFERENCE_PREFIX = /^(?:\$|%|<|\{|\[|process\.env|os\.environ|os\.getenv|env\.|ENV\[|getenv)/;
const DOTTED_PATH = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/;
const FILLER = /^(?:x+|\*+|\.+|-+|_+|•+)$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function unquote(value: string): string {
  const first = value[0];
  if ((first === '"' || first === "'") && value.endsWith(first) && value.length >= 2)
    return value.slice(1, -1);
  return value;
}

/** Shannon entropy in bits per character. Random base64 is about 5, hex about 3.8, English words about 3. */
export function shannonEntropy(value: string): number {
  const counts = new Map<string, number>();
  for (const char of value) counts.set(char, (counts.get(char) ?? 0) + 1);
  let entropy = 0;
  for (const count of counts.values()) {
    const p = count / value.length;
    entropy -= p * Math.log2(p);
  }
  return entropy;
}

function hasLetterAndDigit(value: string): boolean {
  return /[A-Za-z]/.test(value) && /\d/.test(value);
}

/** A value that reads like a generated credential rather than a word. */
function looksRandom(value: string): boolean {
  if (value.length >= 8 && hasLetterAndDigit(value)) return true;
  return value.length >= 20 && !/\s/.test(value) && shannonEntropy(value) >= 3.5;
}

/** True when the value of a `key = value` / `key: value` assignment should be redacted. */
function isSecretValue(raw: string, key: string, separator: string): boolean {
  const quoted = raw !== unquote(raw);
  const value = unquote(raw).trim();
  if (value.length < 4) return false;
  if (value.includes(MARKER_PREFIX) || REFERENCE_PREFIX.test(value)) return false;
  if (value.includes('(') || FILLER.test(value) || NOT_A_SECRET_WORDS.has(value.toLowerCase())) return false;
  if (!quoted && DOTTED_PATH.test(value)) return false;
  const strength = keyStrength(key);
  if (strength === 'none') return false;
  if (strength === 'weak') return looksRandom(value);
  const quotedKey = /["']$/.test(key);
  if (strength === 'ambiguous' && !quoted && !quotedKey && separator === ':') return looksRandom(value);
  return true;
}

const hasDigit = (value: string): boolean => /\d/.test(value);

const KEY_WORD_HINT =
  /pass|pw|secret|token|key|credential|auth|signature|sig=|contras|clave|senha|kennw|mdp|dsn/i;

/** Words for a password in prose, in English, Spanish, German, French and Portuguese. */
const PASSWORD_WORDS = String.raw`(?:pass(?:words?|phrase|code)?|pwd?|passw(?:o|ö)rt|kennwort|contrase(?:ñ|n)as?|claves?|senhas?|mots? de passe|mdp)`;
/** "is" in those languages, or a colon or equals sign: "password is", "Passwort lautet", "senha é", "mdp :". */
const PASSWORD_VERBS = String.raw`(?:is|was|are|ist|lautet|war|es|era|est|était|etait|é|è|:|=)`;
const QUOTE_CHARS = '"\'`«„“‘';

/** The rules, in the order they run. */
const RULES: readonly RedactionRule[] = [
  {
    // The whole block. A block cut short (no END line) is redacted through its base64 lines (runs of 16+
    // base64 characters), so prose after it survives.
    kind: 'private-key',
    hint: 'PRIVATE KEY',
    pattern:
      /(?<value>-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?:\s*[A-Za-z0-9+/=]{16,})*))/g,
  },
  {
    kind: 'jwt',
    hint: 'eyJ',
    pattern: /\b(?<value>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)/g,
  },
  { kind: 'anthropic-key', hint: 'sk-ant-', pattern: /\b(?<value>sk-ant-[A-Za-z0-9_-]{20,})/g },
  {
    kind: 'openai-key',
    hint: 'sk-',
    pattern: /\b(?<value>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})/g,
    accept: hasLetterAndDigit,
  },
  {
    kind: 'aws-access-key',
    hint: /A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|ROA|PKA|SCA)/,
    pattern: /\b(?<value>(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16})\b/g,
  },
  {
    kind: 'aws-secret-key',
    hint: /aws_?secret/i,
    pattern: /(?<pre>aws_?secret_?access_?key["']?\s*[:=]\s*["']?)(?<value>[A-Za-z0-9/+=]{30,})/gi,
  },
  {
    kind: 'github-token',
    hint: /gh[psoru]_/,
    pattern: /\b(?<value>(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{30,})/g,
  },
  { kind: 'github-token', hint: 'github_pat_', pattern: /\b(?<value>github_pat_[A-Za-z0-9_]{22,})/g },
  { kind: 'gitlab-token', hint: 'glpat-', pattern: /\b(?<value>glpat-[A-Za-z0-9_-]{20,})/g },
  { kind: 'slack-token', hint: 'xox', pattern: /\b(?<value>xox[abposr]-[A-Za-z0-9-]{10,})/g },
  {
    kind: 'slack-webhook',
    hint: 'hooks.slack.com',
    pattern: /(?<value>https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9_/]+)/g,
  },
  {
    kind: 'stripe-key',
    hint: /[sr]k_(?:live|test)_/,
    pattern: /\b(?<value>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})/g,
  },
  { kind: 'google-api-key', hint: 'AIza', pattern: /\b(?<value>AIza[0-9A-Za-z_-]{35})/g },
  { kind: 'npm-token', hint: 'npm_', pattern: /\b(?<value>npm_[A-Za-z0-9]{36})\b/g },
  { kind: 'twilio-key', hint: /(?:AC|SK)[0-9a-f]{32}/, pattern: /\b(?<value>(?:AC|SK)[0-9a-f]{32})\b/g },
  {
    kind: 'sendgrid-key',
    hint: 'SG.',
    pattern: /\b(?<value>SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64})/g,
  },
  {
    // scheme://user:password@host — the user name stays, the password goes.
    kind: 'url-password',
    hint: /:\/\/[^\s/?#@]*@/,
    pattern: /(?<pre>\b[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s:/?#@[]*:)(?<value>[^\s/?#@]+)(?<post>@)/g,
    accept: (value) => !value.startsWith(MARKER_PREFIX),
  },
  {
    // A DSN's credential in the user part alone: https://<key>@o1.ingest.sentry.io/2 (ssh://git@ survives).
    kind: 'url-credentials',
    hint: /:\/\/[^\s/?#@]*@/,
    pattern: /(?<pre>\b[A-Za-z][A-Za-z0-9+.-]*:\/\/)(?<value>[A-Za-z0-9._~%+-]{12,})(?<post>@)/g,
    accept: (value) => !value.startsWith(MARKER_PREFIX) && looksRandom(value),
  },
  {
    kind: 'bearer-token',
    hint: /bearer/i,
    pattern: /(?<pre>\b[Bb]earer\s+)(?<value>[A-Za-z0-9._~+/-]{16,}=*)/g,
    accept: hasDigit,
  },
  {
    kind: 'basic-auth',
    hint: /authorization/i,
    pattern: /(?<pre>Authorization["']?\s*[:=]\s*["']?Basic\s+)(?<value>[A-Za-z0-9+/]{8,}={0,2})/gi,
  },
  {
    // env style: FOO_SECRET=…, GITHUB_TOKEN="…", DB_PASSWORD='…'
    kind: 'env-secret',
    hint: /_(?:SECRET|TOKEN|PASS|PW|KEY|APIKEY|CREDENTIAL|AUTH)/,
    pattern:
      /\b(?<pre>(?<key>[A-Z][A-Z0-9_]{0,60}_(?:SECRET|TOKEN|PASSWORD|PASSWD|PASS|PWD|PW|KEY|APIKEY|CREDENTIALS?|AUTH))\s*=\s*)(?<value>"[^"\n]*"|'[^'\n]*'|[^\s"'`;,)]+)/g,
    accept: (value, groups) => isSecretValue(value, groups['key'] ?? '', '='),
  },
  {
    // password=…, "api_key": "…", secret: …, token=…, accessToken: '…', "db_pw": "…", SECRET_KEY_BASE=…,
    // "contraseña": "…", AccountKey=…; (a connection string), sig=… (a SAS URL). The key's words decide
    // (`keyStrength`), so `tokenizer: bpe`, `author: Jane` and `sort_key = id` survive.
    kind: 'secret-value',
    hint: KEY_WORD_HINT,
    pattern:
      /(?<![A-Za-z0-9])(?<pre>(?<key>[A-Za-z0-9_.-]{0,40}?(?:pass|pw|secret|token|key|credential|auth|sig|contrase(?:ñ|n)a|clave|kennwort|senha|mdp|dsn|mot[ _-]?de[ _-]?passe)[A-Za-z0-9_.-]{0,30}?["']?)\s*(?<separator>:=|=>|=|:)\s*)(?<value>"[^"\n]{1,300}"|'[^'\n]{1,300}'|[^\s"'`,;)}\]]+)/gi,
    accept: (value, groups) => isSecretValue(value, groups['key'] ?? '', groups['separator'] ?? '='),
  },
  {
    // A password given to a command: `--password X`, `--token=X`, `docker login -p X`, `mysql -pX`, `sshpass -p X`.
    kind: 'password-flag',
    hint: /--(?:pass|tok|api|sec)|-p/i,
    pattern:
      /(?<pre>(?:(?<![\w-])--(?:password|passwd|pass|token|api-key|apikey|secret|auth-token|access-token)(?:=|\s+)|\b(?:mysql|mysqldump|mariadb|(?:docker|podman|nerdctl|buildah) login|sshpass)\b[^\n|;&]{0,80}?\s-p\s*)["']?)(?<value>[^\s"']{3,})/gi,
    accept: (value) => !value.includes(MARKER_PREFIX) && !REFERENCE_PREFIX.test(value),
  },
  {
    // "my password is Tr0ub4dor&3", "mi contraseña del wifi es Gato#2024", "Mein Passwort lautet Sommer2024!",
    // "minha senha é Bacalhau!77", "mon mot de passe est Soleil2024!": a value with a digit or symbol, or a
    // quoted one, so "the password is stored in the vault" survives. Up to four words may sit between.
    kind: 'password',
    hint: /pass|pw|contras|clave|senha|kennw|mdp/i,
    pattern: new RegExp(
      String.raw`(?<pre>(?<![A-Za-z])${PASSWORD_WORDS}(?![A-Za-z])(?:[ \t]+[^\s:=]{1,20}){0,4}?[ \t]*${PASSWORD_VERBS}(?![A-Za-z])[ \t]*:?[ \t]*(?<quote>[${QUOTE_CHARS}])?)` +
        String.raw`(?<value>[^\s${QUOTE_CHARS}»”’]{4,}?)(?=[.,;:!?)${QUOTE_CHARS}»”’]*(?:\s|$))`,
      'gi',
    ),
    accept: (value, groups) => {
      if (value.includes(MARKER_PREFIX) || value.includes('(') || REFERENCE_PREFIX.test(value)) return false;
      if (groups['quote'] !== undefined) return true;
      return value.length >= 5 && !DOTTED_PATH.test(value) && /\p{L}/u.test(value) && /[\d\W_]/.test(value);
    },
  },
  {
    // A long hex or base64 string shortly after a key-like word ("signing key: 9f86d0…").
    kind: 'high-entropy',
    hint: KEY_WORD_HINT,
    pattern: new RegExp(
      String.raw`(?<pre>(?<![A-Za-z])(?:keys?|secrets?|tokens?|password|passwd|credentials?|apikey|signature|auth|pwd?|pass|dsn|${PASSWORD_WORDS})(?![A-Za-z])[^\n]{0,${KEY_GAP_CHARS}}?)` +
        String.raw`(?<value>\b[A-Fa-f0-9]{32,}\b|[A-Za-z0-9+/_-]{32,}={0,2})`,
      'gi',
    ),
    accept: (value) => {
      if (UUID.test(value) || !hasLetterAndDigit(value)) return false;
      const isHex = /^[A-Fa-f0-9]+$/.test(value);
      return shannonEntropy(value) >= (isHex ? 3 : 3.8);
    },
  },
];

function applyRule(text: string, rule: RedactionRule, counter: { count: number }): string {
  return text.replace(rule.pattern, (...args: unknown[]) => {
    const match = args[0] as string;
    const groups = args[args.length - 1] as Record<string, string | undefined>;
    const value = groups['value'] ?? match;
    if (value.startsWith(MARKER_PREFIX)) return match;
    if (rule.accept !== undefined && !rule.accept(value, groups)) return match;
    counter.count += 1;
    return `${groups['pre'] ?? ''}${MARKER_PREFIX}${rule.kind}]${groups['post'] ?? ''}`;
  });
}

/** Every rule's pre-check, in the order the rules run (for the tests that hold `mayHoldSecret` to them). */
export const SECRET_HINTS: readonly (string | RegExp)[] = RULES.map((rule) => rule.hint);

/**
 * The first gate, on the lowercased text: a piece of every hint, each led by a character that is rare in
 * prose, so the scan rarely stops. Case-insensitive hints: `key`, to`ken`, se`cre`t / `cre`dential, `pass`,
 * a`uth`, si`gnat`ure, `bear`er (aws_secret, authorization and pass(word) fall under them, PRIVATE KEY
 * under `key`). Case-sensitive ones, lowercased: `_` (gh?_, github_pat_, [sr]k_live_, npm_, FOO_SECRET),
 * e`yJ`, s`k-`, `glpat-`, `xox`, hooks.slac`k.c`om, `://`. The words of other languages and of config
 * files: `pw` (pwd, db_pw), `contras`eña, `clave`, `senh`a, `mdp`, `dsn`, si`g=` (Passwort and mot de passe
 * fall under `pass`, Kennwort under `ken`), and a command's password flags: `-p`, `--pas`sword, `--tok`en,
 * `--api`-key, `--sec`ret. The new pieces share their first letter with an old one where they
 * can (`c`, `p`, `g`): a new first letter is what costs.
 */
const LOWERCASE_GATE =
  /k(?:ey|en|-|\.c)|c(?:re|lave|ontras)|p(?:ass|w)|uth|g(?:nat|lpat-|=)|bear|_|yj|xox|:\/\/|mdp|senh|dsn|-(?:p|-(?:pas|tok|api|sec))/;
/** The rest of the case-sensitive hints, tested as written: AWS key ids, AIza, Twilio's AC/SK, SG. */
const UPPERCASE_GATE =
  /A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|ROA|PKA|SCA|Iza|C[0-9a-f]{32})|S(?:K[0-9a-f]{32}|G\.)/;

/**
 * False only when no rule's hint holds in `text`: one cheap test that answers for almost all text,
 * instead of one scan a rule. A text it clears is returned as it is; markers added by a replacement never
 * matter, as a text with a replacement passed it. Two regular expressions of few alternatives, one on the
 * lowercased text, scan three times as fast as one case-insensitive alternative of every hint.
 */
export function mayHoldSecret(text: string): boolean {
  return LOWERCASE_GATE.test(text.toLowerCase()) || UPPERCASE_GATE.test(text);
}

/** Replace every secret in `text` by `[REDACTED:<kind>]` and count them. Pure and deterministic. */
export function redactSecrets(text: string): Redaction {
  if (!mayHoldSecret(text)) return { text, count: 0 };
  const counter = { count: 0 };
  let result = text;
  for (const rule of RULES) {
    const hint = rule.hint;
    if (!(typeof hint === 'string' ? result.includes(hint) : hint.test(result))) continue;
    result = applyRule(result, rule, counter);
  }
  return { text: result, count: counter.count };
}

/** True when `text` holds anything `redactSecrets` would replace (the reconciler quarantines such facts). */
export function containsSecret(text: string): boolean {
  return redactSecrets(text).count > 0;
}

/** The kinds `redactSecrets` can report, for documentation and tests. */
export const SECRET_KINDS: readonly string[] = [...new Set(RULES.map((rule) => rule.kind))];
