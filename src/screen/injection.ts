/**
 * Detects candidate facts that read as instructions aimed at an AI or at the memory system (prompt injection,
 * memory poisoning) rather than as facts about the user or their work. Flagged candidates are quarantined for a
 * person to review, never written to memory.
 *
 * The line it draws: a rule about how to do the user's work ("always use metric units because …", "answer in
 * Portuguese", "never push to main") is a legitimate feedback fact, even though it is imperative and addressed
 * to the agent. What is flagged is text that tries to change the agent's instructions or role, to act on the
 * memory itself (its files, its index, forgetting or rewriting it), to leak data, or that wears fake role tags
 * or hidden characters. False positives cost a look in the quarantine; false negatives cost a poisoned memory,
 * so the patterns lean towards flagging anything that talks about instructions, prompts or memory files.
 *
 * Also flagged: commands that fetch and run code or open the machine up (`curl … | bash`, `chmod -R 777`),
 * sending data to an address, telling the agent to visit or hand out links, standing orders about how to treat
 * third parties, markdown images and links that carry query data (a rendered image is a request that leaks),
 * and notes addressed to the memory consolidator. Every text is screened in the form a person reads
 * (`screeningText`: NFKC, invisibles removed, look-alike letters folded, diacritics dropped), in English,
 * Portuguese, Spanish, French, German and Chinese. Beyond those word patterns, `action-signals.ts` reads what
 * a text does from signs every language shares (a link outside the project, `rm -rf ~`, `--force`, `.env`
 * next to an outside address, an IBAN), so an instruction in any language is caught by its act.
 */

import { TOPIC_FILES } from '../memory/types.js';
import { actionSignal } from './action-signals.js';
import { screeningText } from './screening-text.js';

export interface InstructionVerdict {
  readonly flagged: boolean;
  /** Why it was flagged, for the quarantine file; absent when not flagged. */
  readonly reason?: string;
}

interface Rule {
  readonly reason: string;
  readonly pattern: RegExp;
}

/**
 * Characters that are invisible or reorder text (Unicode tag characters, zero-width spaces, bidi controls): a
 * fact a person cannot read as written is not a fact. U+200D (zero-width joiner) is left out: emoji use it.
 */
const HIDDEN_CHARACTERS =
  /[\u{E0000}-\u{E007F}\u200B\u200C\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/u;

/** "Memory" in the sense of the agent's memory, not RAM ("the memory limit" is a project fact). */
const AGENT_MEMORY =
  String.raw`(?:your|the|its|agent'?s?|assistant'?s?|long[- ]term|persistent|saved|stored)\s+(?:(?:whole|entire)\s+)?memor(?:y|ies)` +
  String.raw`(?!\s+(?:limits?|usage|leaks?|footprint|pressure|budget|consumption|allocation|size|cache|bandwidth|of the (?:server|host|machine|container|worker|process)))`;

/** dreamd's topic files, from the types registry (`user.md`, `feedback.md` …), as one alternative. */
const TOPIC_FILE_NAMES = `(?:${Object.values(TOPIC_FILES)
  .map((file) => file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  .join('|')})`;

/** Places where dreamd and similar systems keep an agent's memory. */
const MEMORY_TARGET =
  String.raw`(?:memory\.md|claude\.md|agents\.md|${TOPIC_FILE_NAMES}|${AGENT_MEMORY}|` +
  String.raw`memory\s+(?:index|files?|system|store|directory|folder)|consolidator)`;

const WRITE_VERB =
  String.raw`(?:save|store|write|add|record|persist|copy|insert|append|paste|put|rewrite|overwrite|replace|edit|` +
  String.raw`modify|update|delete|remove|erase|wipe|clear|purge|reset|empty)`;

const AI_NOUN = String.raw`(?:ai|a\.i\.|llm|language model|assistant|chatbot|model|agent|bot|claude|chatgpt|gpt|gemini|(?:memory\s+)?consolidator|summari[sz]er|extractor|memory system|dreamd|autodream)`;

/** An address data can be sent to, or a link: a URL, a bare domain with a path, or an email address. */
const ADDRESS = String.raw`(?:https?:\/\/|www\.|[\w.+-]+@[\w-]+\.[\w.-]+|\b[\w-]+\.(?:com|net|org|io|ru|cn|xyz|top|site|info|biz|me|co|app|dev)\/)`;

/** "Send" in the six languages (diacritics already dropped). */
const SEND_VERB = String.raw`(?:\b(?:send|forward|post|upload|exfiltrate|transmit|email|e-mail|mail|beacon|leak|cc|bcc|envi(?:e|a|ar|e[mn])|encaminh(?:e|a|ar)|mand(?:e|a|ar)|reenvi(?:a|e|ar)|envoie[sz]?|envoyer|transfere[rz]?|transmet(?:s|tez|tre)?|sende|senden|schicke|schicken|leite\S*\s+\S*\s*weiter|weiterleiten|ubermittle|ubermitteln)\b|发送|转发|发给|发到|上传|传给)`;

/** "Always", "every time", "from now on" in the six languages: what makes a sentence a standing order. */
const STANDING = String.raw`(?:\b(?:always|every\s+(?:time|answer|reply|response|message|session|conversation|turn)|whenever|from now on|from here on|henceforth|each time|sempre|toda vez|a partir de agora|siempre|cada vez|a partir de ahora|de ahora en adelante|toujours|chaque fois|a partir de maintenant|desormais|dorenavant|immer|jedes mal|ab (?:jetzt|sofort|nun)|kunftig|von nun an)\b|总是|每次|从现在开始|以后)`;

const RULES: readonly Rule[] = [
  {
    reason: 'tries to override earlier instructions',
    pattern: new RegExp(
      String.raw`\b(?:ignore|disregard|forget|override|bypass)\b[^.!?\n]{0,30}\b(?:previous|prior|above|earlier|preceding|original|system|initial|your|any other|the assistant'?s?)\b[^.!?\n]{0,20}\b(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|programming)\b|` +
        String.raw`\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+)?(?:instructions|prompts|guardrails|your programming)\b`,
      'iu',
    ),
  },
  {
    reason: 'tries to override earlier instructions',
    pattern: new RegExp(
      String.raw`\b(?:ignor(?:e|a|ar|ez|iere|ieren|ieres)|desconsider(?:e|a|ar)|esquec(?:a|e|er)|olvid(?:a|e|ar)|oubli(?:e|ez|er)|vergiss|vergessen|missachte)\b[^.!?\n]{0,50}\b(?:instruc(?:oes|ao|ciones|cion|tions?)|anweisungen|anweisung|befehle|regeln|reglas|regras|regles|consignes|directiv(?:as|es)|diretrizes|richtlinien|vorgaben|prompts?)\b|` +
        String.raw`(?:忽略|无视|忘记|忘掉|不要理会)[^。！？\n]{0,20}(?:指令|指示|说明|提示|规则|要求)`,
      'iu',
    ),
  },
  {
    reason: 'announces new instructions',
    pattern:
      /\b(?:new|updated|real|actual|hidden|secret|override|priority|admin|developer|system)\s+(?:instructions?|directives?|system prompt)\s*[:!-]/iu,
  },
  {
    reason: 'claims to change the rules',
    pattern: /\b(?:system|admin|security|developer)\s+override\b|\bdeveloper mode\b|\bjailbr(?:eak|oken)\b/iu,
  },
  {
    reason: 'reassigns the AI a new role',
    pattern:
      /\byou\s+are\s+(?:now|no longer|actually|henceforth)\b|\b(?:pretend|imagine)\s+(?:to be|you are|that you are)\b|\bfrom now on,?\s+you\s+are\b|\byour (?:new |real |true |actual |only )?(?:role|job|task|goal|purpose|mission|instructions?) (?:is|are|now is|from now on is) (?:to|now)\b|\byour new (?:role|task|goal|purpose|instructions?) (?:is|are)\b|\b(?:a partir de (?:agora|ahora|maintenant)|desde ahora|desormais|ab (?:jetzt|sofort))\s*,?\s*(?:voce|tu|vous)?\s*(?:e|es|eres|seras|sera|etes|bist du|du bist)\b|\bdu bist (?:jetzt|nun|ab sofort|ab jetzt)\b|\b(?:voce|tu) (?:agora )?(?:e|es) (?:agora )?(?:um|uma|o|a) (?:novo|nova)\b|\bahora eres\b|\b(?:tu es|vous etes) (?:maintenant|desormais)\b|\b(?:sua|tu|ta|votre|deine) (?:nova |nueva |nouvelle |neue )?(?:tarefa|funcao|tarea|funcion|mission|mision|missao|aufgabe|rolle) (?:e|es|est|ist) (?:agora )?(?:de |a |d')?|从现在开始你是|你现在是|你的(?:新)?(?:角色|任务|工作)是/iu,
  },
  {
    reason: 'addresses an AI system directly',
    pattern: new RegExp(
      String.raw`\bas an? (?:ai|a\.i\.|large language model|language model|llm)\b|` +
        String.raw`\b(?:dear|attention|note to|hey|hello|hi)\s+(?:the\s+|any\s+|all\s+)?${AI_NOUN}s?\s*[,:!]|` +
        String.raw`\bif you are an? ${AI_NOUN}\b|` +
        String.raw`\b${AI_NOUN}s?\s+(?:reading|processing|summari[sz]ing|consolidating|parsing)\s+this\b|` +
        String.raw`\b(?:the|any|a|dear)\s+(?:memory\s+)?consolidators?\b[^.!?\n]{0,20}\b(?:must|should|shall|needs? to|has to|is to|will|may|can|please)\b|` +
        String.raw`\b(?:to|for|attention|dear|hey|hi|hello)\s+(?:the\s+|any\s+)?memory\s+(?:consolidator|system|agent|process|pipeline|extractor)\b|` +
        String.raw`\b(?:querid[ao]|atencao|nota (?:para|a|al|pour|an)|ola|hola|cher|chere|achtung|hinweis (?:an|fur)|hallo|liebe[rs]?)\s+(?:a |o |la |el |le |l'|al |au |die |den |das |der )?(?:ia|ai|ki|modelo|modele|modell|assistente|asistente|assistant|assistent(?:en)?|agente|agent|consolidador|consolidateur|konsolidierer|bot)\b|` +
        String.raw`\b(?:se (?:voce|tu) (?:e|for) uma? ia|si (?:eres|usted es) una? ia|si (?:tu es|vous etes) une? (?:ia|intelligence artificielle)|wenn du eine ki bist|falls du eine ki bist)\b|` +
        String.raw`(?:如果你是|致|给)(?:一个)?(?:AI|人工智能|模型|助手|智能体|记忆整合器)`,
      'iu',
    ),
  },
  {
    reason: 'tells the agent to run a command that fetches code or opens the machine up',
    pattern: new RegExp(
      String.raw`\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b[^|\n]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi|c)?sh\b|` +
        String.raw`\b(?:ba|z)?sh\s+(?:-c\s+)?["']?\$\((?:curl|wget)\b|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b|` +
        String.raw`\b(?:iex|invoke-expression)\b[^\n]{0,80}\b(?:downloadstring|iwr|irm|invoke-webrequest)\b|` +
        String.raw`\bchmod\s+(?:-[a-z]*r[a-z]*\s+)?(?:0?777|a\+rwx|o\+w)\b|\bchown\s+-r\b[^\n]{0,40}\s\/(?:\s|$)|` +
        String.raw`\brm\s+-[a-z]*(?:rf|fr)[a-z]*\s+(?:--no-preserve-root\s+)?(?:\/|~|\$home|\*)(?:\s|$)|\bmkfs(?:\.\w+)?\s|\bdd\s+if=\S+\s+of=\/dev\/|` +
        String.raw`:\(\)\s*\{\s*:\|:&\s*\};:|\bbase64\s+(?:-d|--decode)\b[^\n]{0,40}\|\s*(?:ba|z)?sh\b|` +
        String.raw`\b(?:nc|ncat|netcat)\b[^\n]{0,40}\s-e\s|\/dev\/tcp\/|\bpowershell(?:\.exe)?\b[^\n]{0,40}\s-(?:e|enc|encodedcommand)\s|` +
        String.raw`\b(?:start|begin|end|precede|follow|open)s?\b[^.!?\n]{0,30}\bby\s+(?:running|executing|calling|fetching|visiting|opening|sending)\b|` +
        String.raw`${STANDING}[^.!?\n]{0,60}\b(?:run|execute|exec|executar|execute|ejecuta|ejecutar|execute[rz]?|lance[rz]?|fuhre|ausfuhren|运行|执行)\b[^.!?\n]{0,40}(?:\b(?:curl|wget|sudo|bash|sh|powershell|script|this command|the following command|este comando|ce script|diesen befehl)\b|命令|脚本)`,
      'iu',
    ),
  },
  {
    reason: 'asks to send data to an outside address',
    pattern: new RegExp(String.raw`${SEND_VERB}[^\n]{0,120}?${ADDRESS}`, 'iu'),
  },
  {
    reason: 'carries a markdown image or a link with query data (a rendered image or a click leaks it)',
    pattern:
      /!\[[^\]\n]{0,200}\]\(\s*<?\s*(?:https?:)?\/\/|<img\b[^>]{0,200}\bsrc\s*=\s*["']?(?:https?:)?\/\/|\[[^\]\n]{0,200}\]\(\s*<?\s*https?:\/\/[^)\s]*\?[^)\s]*=|https?:\/\/[^\s)]*(?:\{\{?|\$\{|%7b|<)\s*(?:conversation|chat|history|memory|memories|secret|token|key|data|user|prompt|context|messages?|summary)/iu,
  },
  {
    reason: 'tells the agent to visit or hand out a link',
    pattern: new RegExp(
      String.raw`\b(?:send|direct|refer|point|redirect|tell|ask|invite|guide|take)\s+(?:the\s+|all\s+|any\s+|our\s+)?(?:user|users|them|customers?|clients?|people|visitors|everyone|anyone|him|her|callers?)\b[^.!?\n]{0,80}${ADDRESS}|` +
        String.raw`${STANDING}[^.!?\n]{0,80}\b(?:visit|open|click|fetch|load|browse|go to|navigate to|check|ping|call|visite|visita|abre|abra|acesse|accede|visitez|ouvre|ouvrez|besuche|besuchen|offne|offnen|rufe|aufrufen|访问|打开)\b[^.!?\n]{0,60}${ADDRESS}|` +
        String.raw`\b(?:log ?in|sign ?in|verify|confirm|reset|update)\b[^.!?\n]{0,40}\b(?:account|password|credentials|identity|payment|card)\b[^.!?\n]{0,40}\bat\s+${ADDRESS}`,
      'iu',
    ),
  },
  {
    reason: 'changes how the agent treats third parties',
    pattern: new RegExp(
      String.raw`\b(?:tell|say to|inform|reply to|respond to|answer|advise|recommend to|offer|promise|give|approve|grant|refund)\s+(?:all\s+|every\s+|any\s+|other\s+)?(?:customers?|clients?|visitors?|people|everyone|everybody|anyone|anybody|callers?|third parties|other users|every user|all users)\b|` +
        String.raw`\bwhen(?:ever)?\s+(?:anyone|someone|somebody|a customer|customers|a client|clients|a user|users|people|a visitor|visitors)\s+(?:asks?|writes?|contacts?|messages?|calls?)\b[^.!?\n]{0,80}\b(?:say|tell|answer|reply|respond|send|give|recommend|point|direct)\b|` +
        String.raw`\b(?:diga|conte|responda|dile|diles|digale|responde|dis|dites|reponds|repondez|sag|sage|antworte)\s+(?:a|aos|as|al|a los|a las|aux|a tous|den|allen|jedem)\s*(?:os\s+|las\s+|los\s+|les\s+)?(?:clientes?|usuarios?|utilisateurs?|kunden|nutzern|benutzern|todos|tout le monde|visitantes?|visiteurs?|besuchern)\b|` +
        String.raw`告诉(?:所有)?(?:客户|用户|访客|所有人|每个人)|对(?:所有)?(?:客户|用户)(?:说|回复)`,
      'iu',
    ),
  },
  {
    reason: 'fake role or control tag',
    pattern:
      /<\/?\s*(?:system|assistant|developer|human|transcripts?|instructions?|tool_result|tool_use|memory|im_start|im_end)\b[^>]{0,40}>|\[\/?\s*(?:system|inst|sys|developer|assistant)\s*\]|<<\s*\/?SYS\s*>>|<\|[a-z_]{2,20}\|>|^\s*#{1,4}\s*(?:system|instructions?)\b|^\s*(?:system|developer)(?:\s+(?:prompt|message))?\s*:\s*(?:you\b|ignore|disregard|from now|new\b|override|the (?:assistant|ai|model))/imu,
  },
  {
    reason: 'tries to write to or erase the memory itself',
    pattern: new RegExp(
      String.raw`\b${WRITE_VERB}\b[^.!?\n]{0,60}?${MEMORY_TARGET}|` +
        String.raw`${MEMORY_TARGET}[^.!?\n]{0,30}\b(?:must|should|shall|needs? to)\s+(?:be\s+)?(?:contain|include|say|saved|stored|written|updated|rewritten|replaced|deleted|cleared|wiped|erased)\b|` +
        String.raw`\b(?:rewrite|overwrite|wipe|erase|delete|clear|replace|edit)\s+(?:the|your)\s+(?:whole\s+|entire\s+)?(?:memory\s+)?index\b(?!\s+(?:on|of|for)\s+(?:the\s+)?(?:table|column|collection|database|db))`,
      'iu',
    ),
  },
  {
    reason: 'tries to write to or erase the memory itself',
    pattern:
      /\b(?:salv[ea]|grave|guard[ea]|registr[ea]|anot[ea]|escrib[ae]|escrev[ae]|enregistre[rz]?|sauvegarde[rz]?|memorise[rz]?|ecri[st]|speichere|schreibe|merke dir|apag[ae]|borr[ae]|efface[rz]?|losche)\b[^.!?\n]{0,60}\b(?:(?:na|em|en|dans|in)\s+(?:sua|tu|su|ta|votre|deine[mn]?|ihre[mn]?|la|a|le)\s+(?:memoria|memoire|gedachtnis|speicher)|memory\.md)\b|(?:写入|保存到|记录到|存入|删除|清空)(?:你的)?(?:记忆|内存|MEMORY\.md)/iu,
  },
  {
    reason: 'asks for text to be kept verbatim',
    pattern:
      /\b(?:save|store|record|remember|memori[sz]e|persist)\b[^.!?\n]{0,40}\b(?:verbatim|word for word|exactly as (?:written|is|follows)|as-is)\b/iu,
  },
  {
    reason: 'asks the memory to forget everything',
    pattern: new RegExp(
      String.raw`\bforget\s+(?:everything|all\b)|` +
        String.raw`\b(?:erase|delete|wipe|clear|purge|reset|forget)\s+(?:all\s+(?:of\s+)?)?(?:${AGENT_MEMORY}|(?:your|its)\s+(?:memor(?:y|ies)|knowledge)|(?:all\s+)?(?:stored|saved|remembered)\s+facts)`,
      'iu',
    ),
  },
  {
    reason: 'asks to reveal hidden instructions',
    pattern:
      /\b(?:reveal|print|show|output|repeat|leak|dump|disclose|tell me)\b[^.!?\n]{0,20}\b(?:your|the)\s+(?:system prompt|hidden prompt|initial prompt|instructions|system message)\b/iu,
  },
  {
    reason: 'asks to send data to an outside address',
    pattern:
      /\b(?:send|post|upload|exfiltrate|forward|transmit|email|e-mail|leak|beacon|curl)\b[^!?\n]{0,80}\b(?:api[ _-]?keys?|credentials|secrets?|tokens?|passwords?|env(?:ironment)?(?: variables)?|\.env|ssh keys?|private keys?|memor(?:y|ies)|conversations?|transcripts?|chat history|system prompt)\b[^!?\n]{0,40}\bto\s+(?:https?:\/\/|[\w.+-]+@[\w-]+\.[\w.]+|(?:this|the following|my|our|an?|that)\s+(?:webhook|endpoint|url|server|address|email))/iu,
  },
  {
    reason: 'dictates the exact words of every reply',
    pattern:
      /\b(?:always|only|from now on|in every (?:reply|response|answer))\b[^.!?\n]{0,20}\b(?:reply|respond|answer|say|output|print|start|end|begin)\b[^.!?\n]{0,20}\b(?:with\s+)?(?:exactly|verbatim|the (?:exact |following )?(?:phrase|string|words?|text|sentence))\b/iu,
  },
  {
    reason: 'tries to spread itself into future prompts',
    pattern:
      /\b(?:include|insert|inject|embed|repeat|copy|add)\b[^.!?\n]{0,30}\b(?:this|these|the following)\s+(?:instructions?|message|text|prompt|rules?|lines?)\b[^.!?\n]{0,40}\b(?:every|all|each|future)\s+(?:replies|responses|answers|prompts?|sessions?|conversations?|outputs?|memor(?:y|ies))/iu,
  },
  {
    reason: 'asks to hide something from the user',
    pattern:
      /\b(?:without|don'?t|do not|never)\s+(?:telling|informing|tell|inform|let(?:ting)?)\s+(?:it\s+to\s+|this\s+to\s+)?the user(?:\s+know)?\b|\bkeep (?:this|it) (?:hidden|secret) from the user\b|\b(?:sem|nao|sin|no|sans|ne|ohne)\s+(?:contar|avisar|dizer|informar|decir(?:le)?|le dire|prevenir|informer|dire)\s+(?:nada\s+)?(?:ao|al|a l'|l'|a)\s*(?:usuario|utilisateur)|\bohne\s+(?:es\s+)?(?:dem|den)\s+(?:benutzer|nutzer|anwender)\s+zu\s+(?:sagen|erzahlen|melden)|不要告诉用户|别告诉用户|瞒着用户/iu,
  },
];

/**
 * Whether a text reads as an instruction to an AI or to the memory system rather than as a fact.
 * Pure and synchronous; safe to run on every field of every candidate.
 */
export function looksLikeInstruction(text: string): InstructionVerdict {
  if (HIDDEN_CHARACTERS.test(text))
    return { flagged: true, reason: 'contains hidden or direction-changing characters' };
  const prepared = screeningText(text);
  for (const rule of RULES) {
    if (rule.pattern.test(prepared)) return { flagged: true, reason: rule.reason };
  }
  // What the text does, whatever its language (action-signals.ts).
  const action = actionSignal(prepared);
  if (action !== undefined) return { flagged: true, reason: action };
  return { flagged: false };
}

/**
 * Words that make a sentence a rule or a preference about how to act ("must", "always", "prefers", "never"),
 * in the six languages. Used on facts whose only evidence is text the agent read: there even a harmless-looking
 * rule is held back, since a page or a file is not the user.
 */
const RULE_WORDS =
  /\b(?:must|should|shall|always|never|make sure|be sure|do not|don'?t|need to|needs to|have to|has to|is required to|are required to|from now on|prefer(?:s|red)?|wants?|deve(?:m)?|sempre|nunca|prefere|debe(?:n)?|siempre|prefiere|doi(?:t|vent)|toujours|jamais|prefere|muss|mussen|sollte?n?|immer|niemals|bevorzugt|devi|dovete|bisogna|preferisce|altijd|nooit|moet(?:en)?|liever)\b|(?<![\p{L}])(?:всегда|никогда|должен|должны|нельзя)(?![\p{L}])|必须|总是|一律|从现在开始|以后|今後|永远|不要|应该|偏好|常に|必[ずす]|いつも|こと[。.]?$|してく[だた]さい|しないで|しないて|べき/iu;

/** Whether a text reads as a rule or preference about how to act (see `RULE_WORDS`). */
export function looksLikeRule(text: string): boolean {
  return RULE_WORDS.test(screeningText(text));
}

/**
 * A request addressed to someone, a closed class in every language: "please", "por favor", "bitte", "请",
 * "ください" … A fact never asks; a page or a file that asks the agent to do something does. (Kana are
 * matched as `screeningText` leaves them, their voicing marks dropped: "ください" reads "くたさい".)
 */
const POLITE_REQUEST =
  /(?<![\p{L}])(?:please|pls|kindly|por favor|porfa|bitte|s'il (?:te|vous) plait|veuillez|per favore|per piacere|alsjeblieft|alstublieft|prosze|пожалуйста|lutfen)(?![\p{L}])|请|請|麻烦|く[だた]さい|下さい|お願い|주세요|부탁/iu;

/**
 * A clause that opens with an imperative (what the reader is told to do): the verbs an instruction to an
 * agent is made of (write, save, remember, use, run, send, delete, answer …), in the nine languages of the
 * screen, at the start of the text or of a clause. A fact states ("The build writes to dist/"); an
 * instruction orders ("Write this into preferences.md").
 */
const IMPERATIVE_START = new RegExp(
  String.raw`(?:^|[.!?;:\n]\s*|\b(?:and|then|e|y|et|und|dann|en|poi)\s+)` +
    String.raw`(?:(?:now|also|just|agora|ahora|maintenant|jetzt|ora|nu)\s+)?` +
    String.raw`(?:write|save|store|record|remember|memori[sz]e|note down|add|append|insert|put|copy|paste|include|use|run|execute|send|post|upload|forward|delete|remove|erase|wipe|set|update|change|replace|create|follow|obey|ignore|disregard|treat|answer|reply|respond|tell|say|mention|call|fetch|download|install|commit|push|deploy|keep|prefer|avoid|stop|start|end|close|finish|begin|sign|pay|transfer|` +
    // Portuguese, Spanish
    String.raw`escreva|escreve|escrevam|salve|salva|grave|guarde|guarda|adicione|adiciona|acrescente|inclua|incluye|use|usa|usem|rode|execute|executa|ejecuta|envie|envia|envía|mande|apague|apaga|borra|remova|elimina|lembre|recuerda|copie|copia|coloque|pon|ponga|responda|responde|termine|termina|escribe|escriba|anade|agrega|agregue|` +
    // French, German, Italian, Dutch
    String.raw`ecris|ecrivez|enregistre|enregistrez|ajoute|ajoutez|utilise|utilisez|execute|executez|envoie|envoyez|supprime|supprimez|souviens|rappelle|copiez|mets|mettez|reponds|repondez|termine|terminez|schreib|schreibe|schreiben sie|speichere|speichern sie|fuge|fugen sie|verwende|verwenden sie|benutze|nutze|fuhre|sende|schicke|losche|entferne|merk|merke|kopiere|antworte|beende|scrivi|scrivete|salva|aggiungi|esegui|invia|cancella|ricorda|metti|rispondi|termina|schrijf|sla|voeg|gebruik|voer|stuur|verwijder|onthoud|kopieer|antwoord|` +
    // Russian
    String.raw`напиши|напишите|запиши|запишите|сохрани|сохраните|добавь|добавьте|используй|используйте|запусти|отправь|отправьте|удали|удалите|запомни|запомните|ответь|отвечай|заканчивай)` +
    String.raw`(?![\p{L}])`,
  'iu',
);

/** Chinese and Japanese orders: a request form, or a verb of writing, saving or remembering at a clause's start. */
const CJK_IMPERATIVE =
  /(?:^|[。！？；：\n])\s*(?:把|将|写入|写进|记住|记下|保存|添加|使用|运行|发送|删除|回答|务必|一定要)|(?:して|しろ|せよ|しなさい|書いて|保存して|記録して|覚えて|追加して|使って|実行して|送って|削除して|答えて)(?:ね|よ|。|$)/u;

/**
 * Whether a text is a rule, preference or instruction to the agent: what only the user may give. A rule or
 * preference word (`looksLikeRule`), a polite request, or a clause that opens with an order. Read on facts
 * whose words the agent only read: there a project fact ("the build writes to dist/") stays, and whatever
 * tells the agent what to do waits for the user, whatever type or label the model gave it.
 */
export function looksLikeDirective(text: string): boolean {
  const prepared = screeningText(text);
  return (
    RULE_WORDS.test(prepared) ||
    POLITE_REQUEST.test(prepared) ||
    IMPERATIVE_START.test(prepared.trim()) ||
    CJK_IMPERATIVE.test(prepared.trim())
  );
}
