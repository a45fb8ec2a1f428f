/**
 * The allotment conversation of the long dataset, planted to break dreamd's updates. Four neighbours walk the
 * register of a large allotment site in their first weeks, one plot a turn ("River site, plot 12: leeks."), so
 * memory holds hundreds of facts; months later some of the earliest plots change crop. The older fact of such an
 * update was learned `FAR_BACK_FACTS` (200) facts or more before the newer one: far outside what one call's
 * memory list holds, so only a list that looks for what the session says can show it to the model. A few of
 * the last plots stated change too (near), for contrast. Seeded like the circles (`generate.ts`).
 */
import type { Conversation } from './format.js';
import { FAR_BACK_FACTS } from './plant-figures.js';
import type { Rng } from './rng.js';

/**
 * The allotment register's size: how many plots its early sessions state (one fact each), and how many of them
 * change months later, far back (among the first plots) or near (among the last 20).
 */
export interface GardenSize {
  readonly plots: number;
  readonly farChanges: number;
  readonly nearChanges: number;
  /** Site rules taught in four sessions (the first saves, three later ones say it again, two in other words). */
  readonly rulesTaughtAgain: number;
  /** Site rules taught once, for contrast. */
  readonly rulesTaughtOnce: number;
}

/**
 * Site rules, each in two wordings dreamd judges the same rule (a rewording, `src/consolidation/reconcile/rewording.ts`;
 * word and pair similarity under the near-duplicate threshold, so no merge rule but the rewording joins them).
 */
const RULES: readonly (readonly [string, string])[] = [
  ['Lock the tool shed after every visit.', 'The tool shed should be locked after every visit.'],
  ['Use the green bins for garden waste.', 'Garden waste goes in the green bins.'],
  ['Close the river gate after dark.', 'The river gate must be closed after dark.'],
  ['Water the plots before nine in the morning.', 'Plots should be watered before nine in the morning.'],
  ['Sign the visitors book at the main gate.', 'The visitors book at the main gate must be signed.'],
  [
    'Return the wheelbarrows to the shed after use.',
    'The wheelbarrows should be returned to the shed after use.',
  ],
];
const RULES_ONCE: readonly string[] = [
  'Keep the paths between plots clear of weeds.',
  'Bring your own gloves to the work days.',
  'Report a broken tap to the site secretary.',
  'Park bicycles along the north fence.',
];

/**
 * Which session teaches which rule: rule g first in session g + 1, again in sessions g + 3 and g + 6 and in
 * the session `sessions - g` (months later, among the changes), wordings A, B, A, B; a rule taught once in a
 * register session after those. Session number → the rules' texts and groups.
 */
function plantRules(size: GardenSize, sessions: number): Map<number, { text: string; group: number }[]> {
  if (size.rulesTaughtAgain > RULES.length || size.rulesTaughtOnce > RULES_ONCE.length)
    throw new Error(`at most ${RULES.length} rules taught again and ${RULES_ONCE.length} taught once`);
  if (size.rulesTaughtAgain > 0 && sessions - (size.rulesTaughtAgain - 1) <= size.rulesTaughtAgain + 5)
    throw new Error(`${sessions} sessions are too few to teach ${size.rulesTaughtAgain} rules four times`);
  const plan = new Map<number, { text: string; group: number }[]>();
  const teach = (session: number, text: string, group: number) =>
    plan.set(session, [...(plan.get(session) ?? []), { text, group }]);
  for (let group = 0; group < size.rulesTaughtAgain; group += 1) {
    const [first, reworded] = RULES[group]!;
    const at = [group + 1, group + 3, group + 6, sessions - group];
    at.forEach((session, index) => teach(session, index % 2 === 0 ? first : reworded, group));
  }
  for (let once = 0; once < size.rulesTaughtOnce; once += 1)
    teach(size.rulesTaughtAgain + once + 2, RULES_ONCE[once]!, size.rulesTaughtAgain + once);
  return plan;
}

const GARDENERS = ['Vera', 'Wim', 'Yara', 'Zeno'];
const SITES = ['north', 'river', 'orchard'];
const CROPS = [
  'leeks',
  'beans',
  'potatoes',
  'tomatoes',
  'courgettes',
  'pumpkins',
  'strawberries',
  'garlic',
  'onions',
  'kale',
  'spinach',
  'carrots',
  'beetroot',
  'peas',
  'lettuce',
  'rhubarb',
  'sunflowers',
  'chard',
  'fennel',
  'asparagus',
  'raspberries',
  'cabbages',
];
const SMALL_TALK = [
  'The water butts are full again after all that rain.',
  'Someone left the shed unlocked last night.',
  'Slugs everywhere this week, honestly.',
  'The compost heap is finally warm.',
  'Bring gloves next time, the brambles are back.',
];
/** Plots stated in one register session: about 30 turns, a session that spans a few calls at 750 tokens each. */
const PLOTS_PER_SESSION = 28;
/** Changes told in one later session. */
const CHANGES_PER_SESSION = 5;
/** The last plots stated, among which the near changes are drawn. */
const NEAR_PLOTS = 20;
const DAY = 86_400_000;

interface Plot {
  readonly site: string;
  readonly number: number;
  crop: string;
  turn: string;
}

function plotFact(plot: Plot): string {
  return `Plot ${plot.number} at the ${plot.site} site grows ${plot.crop}.`;
}

export function gardenConversation(rng: Rng, size: GardenSize): Conversation {
  if (size.plots - FAR_BACK_FACTS < size.farChanges || size.nearChanges > NEAR_PLOTS)
    throw new Error(
      `garden of ${size.plots} plots: ${size.farChanges} far-back changes need that many plots before the last ${FAR_BACK_FACTS}, and near changes at most ${NEAR_PLOTS}`,
    );
  const record: Record<string, unknown> = {};
  const observation: Record<string, Record<string, [string, string][]>> = {};
  const qa: { question: string; answer: string; evidence: string[]; category: string }[] = [];
  const updates: [string, string][] = [];
  const registerSessions = Math.ceil(size.plots / PLOTS_PER_SESSION);
  const changeSessions = Math.ceil((size.farChanges + size.nearChanges) / CHANGES_PER_SESSION);
  const rulePlan = plantRules(size, registerSessions + changeSessions);
  const rules: string[][] = Array.from({ length: size.rulesTaughtAgain + size.rulesTaughtOnce }, () => []);
  // Plot i is on site i mod 3, numbered within its site: every (site, number) once.
  const plots: Plot[] = Array.from({ length: size.plots }, (_, index) => ({
    site: SITES[index % SITES.length]!,
    number: Math.floor(index / SITES.length) + 1,
    crop: rng.pick(CROPS),
    turn: '',
  }));
  let day = Date.UTC(2025, 8, 2);
  let session = 0;
  const write = (lines: (turns: (speaker: string, text: string, fact?: string) => string) => void) => {
    session += 1;
    const first = rng.pick(GARDENERS);
    const other = rng.pick(GARDENERS.filter((name) => name !== first));
    const turns: { speaker: string; dia_id: string; text: string }[] = [];
    const add = (speaker: string, text: string, fact?: string) => {
      const id = `D${session}:${turns.length + 1}`;
      turns.push({ speaker, dia_id: id, text });
      if (fact !== undefined) {
        const key = `session_${session}_observation`;
        observation[key] ??= {};
        (observation[key][speaker] ??= []).push([fact, id]);
      }
      return id;
    };
    add(first, 'Morning! Got the register?');
    add(other, 'Right here, let us go through it.');
    lines((speaker, text, fact) => add(speaker === 'first' ? first : other, text, fact));
    // The site's rules this session teaches, after the register (turns of their own: the others keep their ids).
    for (const rule of rulePlan.get(session) ?? [])
      rules[rule.group]?.push(add(first, `A site rule, everyone: ${rule.text}`, rule.text));
    add(other, 'Same time next week.');
    record[`session_${session}_date_time`] = new Date(day + rng.int(8, 12) * 3_600_000).toISOString();
    record[`session_${session}`] = turns;
  };

  // The register, weekly: one plot a turn, the two gardeners taking turns.
  for (let start = 0; start < plots.length; start += PLOTS_PER_SESSION) {
    day += 7 * DAY;
    write((add) => {
      plots.slice(start, start + PLOTS_PER_SESSION).forEach((plot, index) => {
        const site = plot.site[0]!.toUpperCase() + plot.site.slice(1);
        const text = rng.pick([
          `${site} site, plot ${plot.number}: ${plot.crop}.`,
          `Plot ${plot.number} at the ${plot.site} site has ${plot.crop} this season.`,
          `Over at the ${plot.site} site, plot ${plot.number} is all ${plot.crop}.`,
        ]);
        plot.turn = add(index % 2 === 0 ? 'first' : 'other', text, plotFact(plot));
      });
    });
  }
  // Far back: among the plots stated before the last FAR_BACK_FACTS; near: among the last NEAR_PLOTS.
  const farPool = plots.slice(0, size.plots - FAR_BACK_FACTS);
  const far = Array.from({ length: size.farChanges }, () => rng.take(farPool));
  const nearPool = plots.slice(-NEAR_PLOTS);
  const near = Array.from({ length: size.nearChanges }, () => rng.take(nearPool));
  const unchanged = plots.filter((plot) => !far.includes(plot) && !near.includes(plot));

  // Months later, the changes: a few a session, every ten days or so, among small talk.
  day += 120 * DAY;
  const changes = [...far, ...near];
  for (let start = 0; start < changes.length; start += CHANGES_PER_SESSION) {
    day += rng.int(7, 12) * DAY;
    write((add) => {
      for (const plot of changes.slice(start, start + CHANGES_PER_SESSION)) {
        const older = plot.crop;
        plot.crop = rng.pick(CROPS.filter((crop) => crop !== older));
        const text = rng.pick([
          `Update for the register: plot ${plot.number} at the ${plot.site} site dug up the ${older} and put in ${plot.crop}.`,
          `Plot ${plot.number} on the ${plot.site} site switched to ${plot.crop}.`,
          `They replanted plot ${plot.number} at the ${plot.site} site, it is ${plot.crop} now.`,
        ]);
        const turn = add('first', text, plotFact(plot));
        updates.push([plot.turn, turn]);
        plot.turn = turn;
        qa.push({
          question: rng.pick([
            `What is growing on plot ${plot.number} of the ${plot.site} site now?`,
            `Which crop does the ${plot.site} site's plot ${plot.number} have these days?`,
          ]),
          answer: plot.crop,
          evidence: [turn],
          category: 'update',
        });
        if (rng.chance(0.5)) add('other', rng.pick(SMALL_TALK));
      }
    });
  }
  // Plots that never changed, asked about at the end: a fact stated months before among hundreds.
  for (let count = Math.max(4, Math.round(size.plots / 30)); count > 0; count -= 1) {
    const plot = rng.take(unchanged);
    qa.push({
      question: `Which crop did the register list for plot ${plot.number} at the ${plot.site} site?`,
      answer: plot.crop,
      evidence: [plot.turn],
      category: 'single-hop',
    });
  }
  return {
    sample_id: 'dreamd-garden-1',
    conversation: {
      ...Object.fromEntries(GARDENERS.map((name, i) => [`speaker_${String.fromCharCode(97 + i)}`, name])),
      ...record,
    },
    observation,
    qa,
    dreamd_updates: updates,
    dreamd_dates: {},
    dreamd_duplicates: [],
    dreamd_rules: rules,
    dreamd_instructions: [],
    dreamd_twins: [],
  };
}
