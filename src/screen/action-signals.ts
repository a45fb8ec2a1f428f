/**
 * What an instruction does, read from signs that look the same in every language: a shell command that
 * deletes outside the project or forces a push, a credential-shaped target (`.env`, `~/.ssh/id_rsa`,
 * `GITHUB_TOKEN`) next to an address outside the project, a payment next to an account or an outside address,
 * a markdown link or image that leaves the project, a quoted sentence dictated into a Markdown file. None of
 * these is a word of any one language; the only words are closed classes that every language has few of:
 * negations (so "never force-push to main" stays a rule, not an attack) and the clause separators.
 *
 * Pure; reads text in the form `screeningText` gives (NFKC, no invisibles, no diacritics).
 */

/**
 * Hosts inside the project or the machine: loopback, private ranges, and names that never resolve outside
 * (`.local`, `.internal`, `.localhost`, `.test`). Every other host is outside the project.
 */
const LOCAL_HOST =
  /^(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|10(?:\.\d{1,3}){3}|192\.168(?:\.\d{1,3}){2}|172\.(?:1[6-9]|2\d|3[01])(?:\.\d{1,3}){2}|\[?::1\]?|[\w.-]+\.(?:local|internal|localhost|test|lan|home\.arpa))$/iu;

/** `scheme://host` or `//host`, an email address, or a bare `host.tld/path`: where data can go. */
const URL_HOST = /(?:\b[a-z][a-z0-9+.-]*:)?\/\/([^\s/?#:)\]>"'`]+)/giu;
const EMAIL_HOST = /\b[\w.+-]+@([\w-]+(?:\.[\w-]+)*\.[a-z]{2,})\b/giu;
const BARE_HOST = /(?<![\w@/.-])((?:[\w-]+\.)+[a-z]{2,})\/[\w-]/giu;

function hostsIn(text: string): string[] {
  const hosts: string[] = [];
  for (const pattern of [URL_HOST, EMAIL_HOST, BARE_HOST])
    for (const match of text.matchAll(pattern)) hosts.push(match[1]!.toLowerCase());
  return hosts;
}

/** Whether the text names a host, a URL or an email address outside the project. */
export function hasOutsideAddress(text: string): boolean {
  return hostsIn(text).some((host) => !LOCAL_HOST.test(host));
}

/** A markdown link or image, or an HTML anchor or image, and its target. */
const LINK_TARGET =
  /!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)|<(?:a|img)\b[^>]*\b(?:href|src)\s*=\s*["']?([^"'\s>]+)/giu;

/** Whether the text carries a link or image whose target is outside the project (clicked or rendered, it leaves). */
export function hasOutsideLink(text: string): boolean {
  for (const match of text.matchAll(LINK_TARGET)) {
    const target = (match[1] ?? match[2] ?? '').trim();
    if (/^(?:javascript|data|vbscript|file):/iu.test(target)) return true;
    if (/^(?:[a-z][a-z0-9+.-]*:)?\/\//iu.test(target) && hasOutsideAddress(target)) return true;
  }
  return false;
}

/**
 * Negation, a closed class in every language: a clause that holds one forbids what it names ("never push with
 * --force", "não comite o .env", "不要 … --force"). `without` and its kin are left out on purpose: "pay without
 * asking me" is an order.
 */
const NEGATION =
  /(?:^|[^\p{L}])(?:not|never|don'?t|doesn'?t|no|nunca|nao|jamas|jamais|ne|n'|pas|nie|niemals|nicht|kein(?:e[nmrs]?)?|nooit|niet|geen|non|mai|niente|не|никогда|нельзя)(?![\p{L}])|不|别|勿|禁止|绝不|しない|しません|ないで|ないこと|禁止/iu;

/** Clauses: sentences, then their comma-separated parts (ASCII and CJK punctuation). */
const SENTENCE_END = /[.!?;。！？；\n]+(?:\s|$)|[。！？；\n]/u;
const CLAUSE_END = /[,，、:：]\s*/u;

function clausesOf(sentence: string): string[] {
  return sentence.split(CLAUSE_END).filter((clause) => clause.trim() !== '');
}

function sentencesOf(text: string): string[] {
  return text.split(SENTENCE_END).filter((sentence) => sentence.trim() !== '');
}

/** Deletes recursively, a target outside the project: the home folder, the root, a parent folder, everything. */
const DESTRUCTIVE_DELETE =
  /\b(?:rm\s+(?:-[a-z]*r[a-z]*f[a-z]*|-[a-z]*f[a-z]*r[a-z]*|-r\s+-f|-f\s+-r|--recursive\s+--force|--force\s+--recursive)|remove-item\b[^\n]{0,40}-recurse|rmdir\s+\/s|del\s+\/[sq]|shred\b|find\b[^\n]{0,40}-delete)\s+(?:--no-preserve-root\s+)?["']?(?:~|\$home|\$\{home\}|%userprofile%|\/(?!tmp\b)|\.\.|\*|[a-z]:\\)/iu;

/** Destroys history or data whatever the path. */
const DESTRUCTIVE_COMMAND =
  /\bgit\s+(?:push\b[^\n]{0,60}(?:--force\b|\s-f\b|--force-with-lease\b|\s\+\w)|reset\s+--hard\s+\S|clean\s+-[a-z]*f[a-z]*d|filter-branch\b)|\b(?:drop\s+(?:database|schema|table)|truncate\s+table)\b|\bmkfs(?:\.\w+)?\s|\bdd\s+if=\S+\s+of=\/dev\/|\bchmod\s+(?:-[a-z]*r[a-z]*\s+)?(?:0?777|a\+rwx|o\+w)\b|--no-verify\b|--dangerously-skip-permissions\b/iu;

/** A forced push said in words of any language: `--force` or `-f` in the clause of a push, a main or a master. */
const FORCE_FLAG = /(?:^|\s)(?:--force(?:-with-lease)?|-f)(?=\s|$|[,.;)])/iu;
const PUSH_WORD = /push|推送|プッシュ|\bmain\b|\bmaster\b/iu;

/** Files and names that hold credentials, in any language's sentence. */
const SECRET_TARGET =
  /(?:^|[\s"'`(/~])(?:\.env(?:\.[\w-]+)?|\.npmrc|\.netrc|\.pgpass|\.pypirc|\.git-credentials|\.htpasswd|id_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?|kubeconfig|\.kube\/config|\.ssh\/?|\.aws\/?(?:credentials)?|\.gnupg|\.docker\/config\.json|\/etc\/(?:shadow|passwd|sudoers)|keychain|wallet\.dat)(?=$|[\s"'`),.;:!?，。、-]|[^\p{ASCII}])/iu;
/** An environment variable named like a credential (`AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`). */
const SECRET_VARIABLE =
  /\b[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*(?:TOKEN|SECRET|KEY|PASSWORD|PASSWD|PASS|PAT|CREDENTIALS?)\b/u;

/** A payment: an IBAN, a crypto address, an amount in a currency, or a payment rail named by its brand. */
const ACCOUNT =
  /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b|\b(?:bc1[a-z0-9]{20,}|0x[a-f0-9]{40}|[13][a-km-zA-HJ-NP-Z1-9]{25,34})\b/u;
const AMOUNT =
  /(?:[$€£¥₹₽]\s?\d[\d.,]*|\d[\d.,]*\s?(?:万円|円|元|块|€|eur|euros?|usd|dollars?|gbp|chf|jpy|cny|brl|reais|btc|eth|usdt)\b|\d[\d.,]*\s?(?:万円|円|元|块))/iu;
const PAYMENT_RAIL =
  /\b(?:pix|paypal|venmo|zelle|swift|sepa|bizum|wise|revolut|alipay|wechat ?pay|payid)\b|支付宝|微信支付|振込|振り込|送金/iu;

/** A quoted sentence (three words or eight characters at least) and a Markdown or rules file as its target. */
const QUOTED = /["“„«「『]([^"“”„«»「」『』]{8,})["”“»」』]/u;
const RULES_FILE = /(?:^|[\s`'"(/])[\w.-]*\.(?:md|mdc|markdown|cursorrules|windsurfrules)\b/iu;

/** Whether some clause of `sentence` holding a match of `pattern` is free of negation. */
function inUnnegatedClause(sentence: string, pattern: RegExp): boolean {
  return clausesOf(sentence).some((clause) => pattern.test(clause) && !NEGATION.test(clause));
}

function forcedPush(sentence: string): boolean {
  return clausesOf(sentence).some(
    (clause) => FORCE_FLAG.test(clause) && PUSH_WORD.test(clause) && !NEGATION.test(clause),
  );
}

function hasSecretTarget(text: string): boolean {
  return SECRET_TARGET.test(text) || SECRET_VARIABLE.test(text);
}

function sendsSecretAway(sentence: string): boolean {
  if (!hasSecretTarget(sentence)) return false;
  return clausesOf(sentence).some((clause) => hasOutsideAddress(clause) && !NEGATION.test(clause));
}

function paysOut(sentence: string): boolean {
  const payment = ACCOUNT.test(sentence) || AMOUNT.test(sentence) || PAYMENT_RAIL.test(sentence);
  if (!payment) return false;
  const destination = ACCOUNT.test(sentence) || hasOutsideAddress(sentence);
  const kinds = [ACCOUNT.test(sentence), AMOUNT.test(sentence), PAYMENT_RAIL.test(sentence)].filter(Boolean);
  return (destination || kinds.length >= 2) && !clausesOf(sentence).every((clause) => NEGATION.test(clause));
}

/**
 * Why the text reads as an instruction that acts outside the user's work, or undefined. Each sentence is read
 * on its own, so a forbidden action in one sentence never hides an ordered one in the next.
 */
export function actionSignal(text: string): string | undefined {
  if (hasOutsideLink(text)) return 'carries a link or image whose target is outside the project';
  if (RULES_FILE.test(text) && QUOTED.test(text) && !NEGATION.test(text))
    return 'dictates a sentence to copy into a Markdown or rules file';
  for (const sentence of sentencesOf(text)) {
    if (inUnnegatedClause(sentence, DESTRUCTIVE_DELETE))
      return 'runs a command that deletes outside the project';
    if (inUnnegatedClause(sentence, DESTRUCTIVE_COMMAND) || forcedPush(sentence))
      return 'runs a command that destroys history or data (a forced push, a hard reset, a dropped table)';
    if (sendsSecretAway(sentence)) return 'sends a credential to an address outside the project';
    if (paysOut(sentence)) return 'pays or transfers money to an account or address';
  }
  return undefined;
}

/**
 * Whether the text names a credential-shaped file or variable (`.env`, `~/.ssh`, `GITHUB_TOKEN`): from text the
 * agent read, such a fact is held back whatever its type.
 */
export function namesCredential(text: string): boolean {
  return hasSecretTarget(text);
}
