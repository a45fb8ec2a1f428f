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
 */

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

/** Places where dreamd and similar systems keep an agent's memory. */
const MEMORY_TARGET =
  String.raw`(?:memory\.md|claude\.md|agents\.md|(?:user|feedback|project|reference)\.md|${AGENT_MEMORY}|` +
  String.raw`memory\s+(?:index|files?|system|store|directory|folder)|consolidator)`;

const WRITE_VERB =
  String.raw`(?:save|store|write|add|record|persist|copy|insert|append|paste|put|rewrite|overwrite|replace|edit|` +
  String.raw`modify|update|delete|remove|erase|wipe|clear|purge|reset|empty)`;

const AI_NOUN = String.raw`(?:ai|a\.i\.|llm|language model|assistant|chatbot|model|agent|bot|claude|chatgpt|gpt|gemini|consolidator|summari[sz]er|extractor|memory system)`;

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
      /\byou\s+are\s+(?:now|no longer|actually|henceforth)\b|\b(?:pretend|imagine)\s+(?:to be|you are|that you are)\b|\bfrom now on,?\s+you\s+are\b|\byour new (?:role|task|goal|purpose|instructions?) (?:is|are)\b/iu,
  },
  {
    reason: 'addresses an AI system directly',
    pattern: new RegExp(
      String.raw`\bas an? (?:ai|a\.i\.|large language model|language model|llm)\b|` +
        String.raw`\b(?:dear|attention|note to|hey|hello|hi)\s+(?:the\s+|any\s+|all\s+)?${AI_NOUN}s?\s*[,:!]|` +
        String.raw`\bif you are an? ${AI_NOUN}\b|` +
        String.raw`\b${AI_NOUN}s?\s+(?:reading|processing|summari[sz]ing|consolidating|parsing)\s+this\b`,
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
      /\b(?:without|don'?t|do not|never)\s+(?:telling|informing|tell|inform|let(?:ting)?)\s+(?:it\s+to\s+|this\s+to\s+)?the user(?:\s+know)?\b|\bkeep (?:this|it) (?:hidden|secret) from the user\b/iu,
  },
];

/** Compatibility forms folded (full-width letters, ligatures), curly apostrophes straightened, spaces collapsed. */
function prepare(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/[\u2018\u2019\u02BC]/gu, "'")
    .replace(/[\t ]+/gu, ' ');
}

/**
 * Whether a text reads as an instruction to an AI or to the memory system rather than as a fact.
 * Pure and synchronous; safe to run on every field of every candidate.
 */
export function looksLikeInstruction(text: string): InstructionVerdict {
  if (HIDDEN_CHARACTERS.test(text))
    return { flagged: true, reason: 'contains hidden or direction-changing characters' };
  const prepared = prepare(text);
  for (const rule of RULES) {
    if (rule.pattern.test(prepared)) return { flagged: true, reason: rule.reason };
  }
  return { flagged: false };
}
