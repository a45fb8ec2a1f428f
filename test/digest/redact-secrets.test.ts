import { describe, expect, it } from 'vitest';
import { containsSecret, redactSecrets } from '../../src/digest/index.js';
import { mayHoldSecret, SECRET_HINTS } from '../../src/digest/redact-secrets.js';

/**
 * [kind, text with the secret that must disappear between « and »]: each secret written once, and surely in its
 * text. Fake credentials shaped like the real ones.
 */
const MARKED: readonly (readonly [string, string])[] = [
  ['anthropic-key', 'key: «sk-ant-api03-Zx9_Yw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa»'],
  ['anthropic-key', 'export ANTHROPIC_API_KEY=«sk-ant-admin01-abcDEF1234567890ghiJKL»'],
  ['openai-key', 'use «sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56» for it'],
  ['openai-key', 'OPENAI key «sk-T3BlbkFJa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7»'],
  ['aws-access-key', 'aws_access_key_id = «AKIAIOSFODNN7EXAMPLE»'],
  ['aws-access-key', 'temporary «ASIAY34FZKBOKMUTVV7A» creds'],
  ['aws-secret-key', 'aws_secret_access_key=«wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY»'],
  ['github-token', 'git clone with «ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R»'],
  ['github-token', '«gho_16C7e42F292c6912E7710c838347Ae178B4a» and more'],
  ['github-token', '«ghs_abcdefghijklmnopqrstuvwxyz0123456789»'],
  ['github-token', '«github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF»'],
  ['gitlab-token', '«glpat-xY7zW3vU9tS1rQ5pO2nM» used'],
  ['slack-token', 'bot «xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx»'],
  ['slack-token', '«xoxp-2222222222-3333333333-4444444444-abcdef»'],
  ['slack-webhook', 'post to https://hooks.slack.com/services/«T0000/B0000/XXXXXXXXXXXXXXXX»'],
  ['stripe-key', '«sk_live_51H8abcdEFGHijklMNOPqrst»'],
  ['stripe-key', 'restricted «rk_live_4eC39HqLyjWDarjtT1zdp7dc»'],
  ['google-api-key', 'maps «AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q»'],
  ['npm-token', '//registry.npmjs.org/:_authToken=«npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8»'],
  ['twilio-key', 'twilio «SK0123456789abcdef0123456789abcdef»'],
  ['sendgrid-key', '«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»'],
  ['bearer-token', 'curl -H "Authorization: Bearer «8f14e45fceea167a5a36dedd4bea2543abc»"'],
  ['basic-auth', 'Authorization: Basic «dXNlcjpwYXNzd29yZA==»'],
  [
    'jwt',
    'token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.«eyJzdWIiOiIxMjM0NTY3ODkwIn0».dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok',
  ],
  [
    'private-key',
    '-----BEGIN RSA PRIVATE KEY-----\n«MIIEowIBAAKCAQEA7bq98»\nabcDEF123==\n-----END RSA PRIVATE KEY-----',
  ],
  ['private-key', 'cut short: -----BEGIN OPENSSH PRIVATE KEY----- «b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE»'],
  ['url-password', 'DATABASE is postgres://admin:«s3cr3tP4ss»@db.internal:5432/app'],
  ['url-password', 'redis://:«hunter2hunter2»@cache:6379'],
  ['secret-value', 'password=«hunter2»'],
  ['secret-value', '{"api_key": "«zq81-hh72-lmn0-plm3»"}'],
  ['secret-value', 'client_secret: "«correct horse battery staple»"'],
  ['secret-value', 'secret: «9a8b7c6d5e4f3g2h»'],
  ['secret-value', 'token=«Zm9vYmFyYmF6cXV4»'],
  ['secret-value', "const accessToken = '«live-tok-7781»'"],
  ['env-secret', 'DB_PASSWORD=«correcthorse»'],
  ['env-secret', 'export STRIPE_WEBHOOK_SECRET="«whsec_abc123def456»"'],
  ['env-secret', 'MY_SERVICE_TOKEN=«opensesame»'],
  ['password', 'my password is «Tr0ub4dor&3» so keep it'],
  ['high-entropy', 'the signing key is «9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08»'],
  ['high-entropy', 'webhook secret → «Qk9QX2J4N2RhM2Y5c0pXbm1MZ0t1Y3pQdw==»'],
  // Keys that mean a secret in other languages and in config files, DSNs and connection strings.
  ['secret-value', 'SECRET_KEY_BASE=«3f9a1c0b7e4d2a68f5b1c9e0d7a3b6f2c4e8a1d5b9f3c7e2a6d0b4f8c1e5a9d3»'],
  ['secret-value', '{"host": "db", "user": "shop", "pass": "«hunter2x»"}'],
  ['secret-value', '{"db_pw": "«Kx7-mq2-Lp0»"}'],
  ['secret-value', "config.dbPassword = '«Pa55word»'"],
  ['secret-value', '{"contraseña": "«Gato#2024»"}'],
  ['secret-value', "Passwort='«Sommer2024»'"],
  ['secret-value', '"mot de passe": "«Soleil2024»"'],
  ['secret-value', 'senha=«Bacalhau77»'],
  ['secret-value', 'db_pwd = "«pl4tano»"'],
  [
    'secret-value',
    'DefaultEndpointsProtocol=https;AccountName=shopdata;AccountKey=«q8Xv2Lm9Tz4Kp8Wd3Hs6Jb1Nc5Fg0Ye7Pa2Uo+RwZ/A==»;EndpointSuffix=core.windows.net',
  ],
  [
    'secret-value',
    'Endpoint=sb://shop.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=«Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA=»',
  ],
  ['secret-value', 'Server=tcp:db;User ID=app;Pwd=«Rk8-vv2-Qp9»;'],
  [
    'secret-value',
    'https://shop.blob.core.windows.net/c/f.txt?sv=2022-11-02&sig=«Xk2m9QzL8vT4pW7rY1nB5cD3fG6hJ0kL»%3D',
  ],
  ['env-secret', 'DB_PW=«correcthorse»'],
  [
    'url-credentials',
    'SENTRY_DSN=https://«e3b0c44298fc1c149afbf4c8996fb924»@o450123.ingest.sentry.io/5501234',
  ],
  ['url-credentials', 'the dsn is https://«9f86d081884c7d659a2feaa0c55ad015»@sentry.example.com/12'],
  ['url-password', 'postgres://shop:«Ban4na!split»@10.0.0.5/shop'],
  ['password-flag', 'docker login -u deploy -p "«Tundra-Fox-2210»" registry.internal'],
  ['password-flag', 'mysql -u root -p«W1nter.Is.Here» shop'],
  ['password-flag', 'vault login --password «Qz7-tide-pool» --method=userpass'],
  // Passwords stated in prose.
  ['password', 'mi contraseña del wifi de casa es «Gato#2024», no la compartas'],
  ['password', 'Mein Passwort für den Server lautet «Sommer2024»!'],
  ['password', 'das Kennwort ist «Bergsee-81»'],
  ['password', 'minha senha do banco é «Bacalhau!77»'],
  ['password', 'mon mot de passe est «Soleil2024»!'],
  ['password', 'le mdp du routeur : «Crepe_42x»'],
  ['password', 'la clave es "«tortuga»"'],
  ['password', 'my pw is «hunter22»!'],
  ['password', 'the password for the staging DB is «Tr0ub4dor&3»'],
  ['password', 'A senha gerada: «Qk9QX2J4N2RhM2Y5c0pXbm1MZ0t1Y3pQdw»'],
];

/** [kind, text, the secret that must disappear]: MARKED with the marks taken out. */
const SECRETS: readonly (readonly [string, string, string])[] = MARKED.map(([kind, marked]) => {
  const secret = /«([^»]*)»/.exec(marked)?.[1];
  if (secret === undefined) throw new Error(`no «secret» marked in ${marked}`);
  return [kind, marked.replace(/[«»]/g, ''), secret];
});

describe('redactSecrets', () => {
  it.each(SECRETS)('redacts a %s: %s', (kind, text, secret) => {
    const result = redactSecrets(text);
    expect(result.text).not.toContain(secret);
    expect(result.text).toContain(`[REDACTED:${kind}]`);
    expect(result.count).toBeGreaterThanOrEqual(1);
    expect(containsSecret(text)).toBe(true);
  });

  it('keeps what is around a secret', () => {
    expect(
      redactSecrets('curl -H "Authorization: Bearer abcdef0123456789abcdef" https://api.example.com').text,
    ).toBe('curl -H "Authorization: Bearer [REDACTED:bearer-token]" https://api.example.com');
    expect(redactSecrets('postgres://admin:s3cr3t@db:5432/app').text).toBe(
      'postgres://admin:[REDACTED:url-password]@db:5432/app',
    );
    expect(redactSecrets('password=hunter2 and more').text).toBe('password=[REDACTED:secret-value] and more');
  });

  it('redacts every secret of a text that holds many, once each', () => {
    const text = SECRETS.map(([, line]) => line).join('\n');
    const result = redactSecrets(text);
    for (const [, , secret] of SECRETS) expect(result.text).not.toContain(secret);
    expect(result.count).toBeGreaterThanOrEqual(SECRETS.length);
    expect(redactSecrets(result.text)).toEqual({ text: result.text, count: 0 });
  });

  it('redacts a whole PEM block, not only its first line', () => {
    const pem = [
      '-----BEGIN PRIVATE KEY-----',
      'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7',
      'QWERTYuiopASDFghjkZXCVbnm1234567890qwertyuiopasdfgh',
      '-----END PRIVATE KEY-----',
    ].join('\n');
    const result = redactSecrets(`before\n${pem}\nafter`);
    expect(result.text).toBe('before\n[REDACTED:private-key]\nafter');
  });
});

/** Ordinary prose, code and logs that must come out unchanged. */
const PROSE: readonly string[] = [
  'I forgot my password yesterday and had to reset it through the admin panel.',
  'The token expires after one hour, so the client refreshes it in the background.',
  'Secret: patience. That is what the migration needs.',
  'The password is stored in the vault, never in the repository.',
  'Our API key rotation happens every 90 days.',
  'See https://docs.example.com/guide?page=2#install and http://localhost:3000/api/users for details.',
  'Clone it with git clone git@github.com:acme/widgets.git and run npm install.',
  'Merged commit 9fceb02d0ae598e95dc970b74767f19372d61af8 into main after review.',
  'The request id was 550e8400-e29b-41d4-a716-446655440000 and it failed with 503.',
  'Session 123e4567-e89b-12d3-a456-426614174000 ended at 14:03.',
  'Use sk-learn? No, I meant scikit-learn, the task-management-system-for-teams project uses it.',
  'The max_tokens: 4096 setting and input_tokens = 1200 were fine.',
  'interface Config { apiKey: string; token?: string; password: z.string() }',
  'const token = process.env.GITHUB_TOKEN; const apiKey = config.apiKey;',
  'export GITHUB_TOKEN=$(gh auth token) and API_KEY=${API_KEY}',
  'The author: Jane Doe wrote the tokenizer module last spring.',
  'Set the key: value pairs in the YAML file and keep the keys sorted.',
  'We deploy the bearer of bad news, the release notes, on Fridays.',
  'The sha256 of the tarball matches the published checksum.',
  'Passwords must be at least 12 characters long according to the policy.',
  'Basic authentication is disabled; use OAuth instead.',
  'The hash e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 is the empty file.',
  'The tokenizer: sentencepiece, and the author: Jane.',
  'Set token_count = 4096 and password_policy = strict in the settings.',
  'The partition_key = customerId and the sort_key = createdAt.',
  'Clone ssh://git@github.com/acme/widgets.git and https://jane.doe@example.com/profile.',
  'Olvidé mi contraseña y la cambié ayer por una más larga.',
  'Das Passwort ist im Tresor gespeichert.',
  'A senha é guardada no cofre da equipa.',
  'Le mot de passe est trop court, il faut douze caractères.',
  'The password is stored in the vault and rotated monthly.',
  'I will pass on that, thanks. The bypass: closed.',
  'Our keyboard: US layout; the monkey: George.',
  'He designed the signal path and signed the release.',
  'Run mkdir -p src/lib and ssh -p 2222 deploy@host, then npm run build --prod.',
];

describe('redactSecrets on ordinary text', () => {
  it.each(PROSE)('leaves alone: %s', (text) => {
    expect(redactSecrets(text)).toEqual({ text, count: 0 });
    expect(containsSecret(text)).toBe(false);
  });
});

/** Whether any rule's own pre-check holds: what the first gate must never miss. */
function anyHintHolds(text: string): boolean {
  return SECRET_HINTS.some((hint) => (typeof hint === 'string' ? text.includes(hint) : hint.test(text)));
}

describe('mayHoldSecret, the first gate', () => {
  it('holds on every text of the corpora that a hint holds on', () => {
    for (const text of [...SECRETS.map(([, text]) => text), ...PROSE]) {
      if (anyHintHolds(text)) expect(mayHoldSecret(text), text).toBe(true);
    }
  });

  it('holds wherever a hint holds, in any case and in any surroundings', () => {
    // Texts that make each hint hold (and near misses), mixed with prose and with their case flipped at
    // random: whenever one of the rules' hints holds, the gate must too.
    const pieces = [
      '-----BEGIN RSA PRIVATE KEY-----',
      'eyJhbGciOi',
      'sk-ant-',
      'sk-',
      'AKIA',
      'ASIA',
      'ABIA',
      'ACCA',
      'AGPA',
      'AIDA',
      'AIPA',
      'ANPA',
      'ANVA',
      'AROA',
      'APKA',
      'ASCA',
      'aws_secret',
      'AWSSECRET',
      'ghp_',
      'gho_',
      'ghs_',
      'ghu_',
      'ghr_',
      'github_pat_',
      'glpat-',
      'xoxb-',
      'hooks.slack.com',
      'sk_live_',
      'rk_test_',
      'AIzaSy',
      'npm_',
      `AC${'0123456789abcdef'.repeat(2)}`,
      `SK${'fedcba9876543210'.repeat(2)}`,
      'SG.',
      'https://user@',
      'postgres://a:b@',
      'Bearer',
      'BEARER',
      'Authorization',
      '_SECRET',
      '_TOKEN',
      '_PASS',
      '_PWD',
      '_KEY',
      '_APIKEY',
      '_CREDENTIAL',
      '_AUTH',
      'password',
      'PassPhrase',
      'passcode',
      'secret',
      'Token',
      'KEY',
      'credential',
      'auth',
      'SIGNATURE',
      'pw',
      'DB_PW',
      'Contraseña',
      'CONTRASENA',
      'clave',
      'senha',
      'Kennwort',
      'Passwort',
      'mot de passe',
      'mdp',
      'dsn',
      'sig=',
      '-p',
      '--password',
      '--token',
      'mysql -p',
      'the build ran',
      'yesterday',
      'Jay',
      'ok',
      '://',
      'k',
      '.',
      '-',
      '_',
    ];
    let state = 11;
    const next = (limit: number): number => {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
      return (state >>> 8) % limit;
    };
    const flip = (text: string): string =>
      [...text]
        .map((char) =>
          next(4) === 0 ? (char === char.toLowerCase() ? char.toUpperCase() : char.toLowerCase()) : char,
        )
        .join('');
    let held = 0;
    for (let sample = 0; sample < 5_000; sample += 1) {
      let text = '';
      const count = 1 + next(4);
      for (let piece = 0; piece < count; piece += 1) {
        const chosen = pieces[next(pieces.length)] ?? '';
        text += `${next(2) === 0 ? flip(chosen) : chosen}${next(3) === 0 ? '' : ' '}`;
      }
      if (!anyHintHolds(text)) continue;
      held += 1;
      expect(mayHoldSecret(text), JSON.stringify(text)).toBe(true);
    }
    expect(held).toBeGreaterThan(1_000);
  });
});
