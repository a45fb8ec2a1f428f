/**
 * What a fact says of its subject, coarsely: where someone works, where they live, what they study, their pets,
 * their partner, a venture they plan, an instrument they play, a project's data store, its language or
 * framework, an editor, a code-style rule (indentation, naming, comments, types, errors, imports, tests), a
 * branch or deploy. The update check (`update-check.ts`) ranks a subject's facts by it: "Priya works as a nurse
 * at St Mary's." and "She left the hospital; Priya is a data analyst at Monzo now." share one word, the name,
 * and one attribute, the job, so among a hundred facts about Priya the older job is the one shown beside the
 * newer. Two facts of one subject that share no attribute (her job, her cat) are not shown to each other.
 *
 * Words are matched by their start, accents folded, in English, Portuguese and Spanish: a lexicon, not a model.
 * A fact that matches none is found by its words and names alone, as before.
 */

/**
 * Attribute → starts of the words that say it; one ending in `$` is a whole word, or it with an "s" ("cat",
 * "cats", not "catch").
 */
// prettier-ignore
const LEXICON: Readonly<Record<string, readonly string[]>> = {
  job: [
    'work', 'job', 'employ', 'hire', 'career', 'profession', 'occupation', 'engineer', 'developer', 'programmer',
    'nurse', 'doctor', 'physician', 'teacher', 'analyst', 'designer', 'manager', 'lawyer', 'accountant',
    'consultant', 'intern', 'barista', 'chef', 'cook$', 'architect', 'scientist', 'researcher', 'freelanc',
    'contractor', 'startup', 'company', 'position', 'promot', 'resign', 'quit', 'retire', 'hospital', 'clinic',
    'bank$', 'agency', 'firm$', 'trabalh', 'emprego', 'empresa', 'trabaj', 'empleo', 'oficio', 'profes',
    'enfermeir', 'enfermer', 'medic', 'analista', 'engenheir', 'ingenier', 'nursing', 'analys',
  ],
  home: [
    'live', 'living', 'moved', 'move$', 'moving', 'reloc', 'home$', 'house', 'apartment', 'flat$', 'rent$',
    'rented', 'neighbo', 'address', 'city', 'cities', 'town', 'mora', 'vive', 'vivi', 'casa', 'piso', 'apartament',
    'mudou', 'mudo', 'mudan', 'mudarse', 'cidade', 'ciudad', 'bairro', 'barrio', 'cottage', 'villa',
  ],
  study: [
    'study', 'studi', 'student', 'school', 'universit', 'college', 'degree', 'course', 'class', 'major',
    'graduat', 'phd', 'master', 'estud', 'escola', 'escuela', 'universidad', 'faculdade', 'curso', 'lesson', 'practis', 'practic', 'tutor',
  ],
  pet: [
    'pet$', 'dog$', 'cat$', 'puppy', 'puppies', 'kitten', 'parrot', 'hamster', 'rabbit', 'tortoise', 'turtle',
    'adopt', 'cachorr', 'cao$', 'gato', 'perro', 'perrit', 'mascota', 'papagai', 'loro$', 'coelho', 'conejo',
  ],
  partner: [
    'married', 'marry', 'wife', 'husband', 'partner', 'girlfriend', 'boyfriend', 'fiance', 'engaged', 'divorc',
    'dating', 'spouse', 'namorad', 'novi', 'casad', 'espos', 'marido', 'mulher', 'pareja',
  ],
  venture: [
    'plan$', 'planned', 'planning', 'dream', 'open$', 'opened', 'opening', 'launch', 'business', 'shop', 'studio',
    'bakery', 'cafe', 'restaurant', 'store$', 'venture', 'pottery', 'gallery', 'workshop', 'plano', 'planea',
    'abrir', 'negocio', 'loja', 'tienda', 'estudio', 'padaria', 'panaderia',
  ],
  instrument: [
    'play$', 'plays', 'played', 'playing', 'guitar', 'piano', 'violin', 'drum', 'cello', 'bass$', 'sax$',
    'saxophone', 'flute', 'ukulele', 'instrument', 'lesson', 'choir', 'band$', 'toca', 'guitarr', 'violao',
    'bateria', 'aula', 'sing$', 'sings', 'singing', 'orchestra',
  ],
  transport: [
    'drive', 'driving', 'drove', 'car$', 'cycle', 'cycles', 'cycling', 'bike', 'bicycle', 'commut', 'motorbike',
    'scooter', 'bus$', 'tram$', 'carro', 'coche', 'bicicleta', 'conduz', 'conduc',
  ],
  sport: [
    'swim', 'pool', 'climb', 'gym$', 'yoga', 'tennis', 'football', 'soccer', 'hike', 'hiking', 'sport',
    'marathon', 'jog$', 'jogging', 'pilates', 'boulder', 'nada', 'natac', 'futebol', 'futbol', 'escalad',
  ],
  diet: [
    'vegetarian', 'vegan', 'eat$', 'eats', 'eating', 'meat', 'fish$', 'pescatar', 'diet', 'gluten', 'dairy',
    'lactose', 'halal', 'kosher', 'carne', 'peixe', 'pescado', 
  ],
  boss: ['manager', 'boss', 'report$', 'reports', 'reporting', 'supervisor', 'chefe', 'jefe'],
  store: [
    'database', 'datastore', 'storage', 'stores', 'stored', 'persist', 'postgres', 'mysql', 'mariadb', 'sqlite',
    'redis', 'mongo', 'dynamo', 'cassandra', 'clickhouse', 'elastic', 'supabase', 'firestore',
  ],
  stack: [
    'language', 'framework', 'library', 'written', 'typescript', 'javascript', 'python', 'rust$', 'golang',
    'java$', 'kotlin', 'swift', 'ruby', 'react', 'vue$', 'svelte', 'angular', 'django', 'flask', 'rails',
    'spring', 'node$', 'deno', 'bun$',
  ],
  editor: ['editor', 'ide$', 'vim$', 'neovim', 'emacs', 'vscode', 'intellij', 'pycharm', 'zed$', 'sublime'],
  indentation: ['indent', 'tab$', 'spaces', 'whitespace'],
  naming: ['name$', 'named', 'naming', 'prefix', 'suffix', 'camel', 'snake', 'kebab', 'pascal', 'case$'],
  comments: ['comment', 'docstring', 'documentation', 'docs$', 'jsdoc'],
  types: ['type$', 'typed', 'annotat', 'hint', 'typing'],
  errors: ['try$', 'except', 'catch', 'error', 'exception', 'assert', 'raise', 'throw'],
  imports: ['import', 'module', 'package', 'depend'],
  decorators: ['decorat'],
  tests: ['test$', 'tested', 'testing', 'vitest', 'jest', 'pytest', 'mocha', 'coverage'],
  branch: ['branch', 'deploy', 'release', 'merge', 'main$', 'master$', 'staging', 'production', 'ship$'],
  format: ['format', 'lint', 'prettier', 'eslint', 'black', 'ruff', 'semicolon', 'quote'],
};

/** The lexicon by the first three letters of each start: a word looks at a handful of starts, not hundreds. */
const BY_HEAD = new Map<
  string,
  { readonly start: string; readonly whole: boolean; readonly attribute: string }[]
>();
for (const [attribute, starts] of Object.entries(LEXICON)) {
  for (const entry of starts) {
    const whole = entry.endsWith('$');
    const start = whole ? entry.slice(0, -1) : entry;
    const head = start.slice(0, 3);
    const list = BY_HEAD.get(head) ?? [];
    list.push({ start, whole, attribute });
    BY_HEAD.set(head, list);
  }
}

/** Lower case, accents folded, split into words. */
function words(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
}

/** The attributes a text speaks of (see the module comment); empty when it speaks of none the lexicon knows. */
export function attributesOf(text: string): ReadonlySet<string> {
  const found = new Set<string>();
  for (const word of words(text)) {
    for (const { start, whole, attribute } of BY_HEAD.get(word.slice(0, 3)) ?? []) {
      const match = whole ? word === start || word === `${start}s` : word.startsWith(start);
      if (match) found.add(attribute);
    }
  }
  return found;
}

/** Whether two attribute sets share one. */
export function shareAttribute(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const attribute of a) if (b.has(attribute)) return true;
  return false;
}
