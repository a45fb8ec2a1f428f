/**
 * The floors of src/ and of the worker entry points in the top-level workers/, lowest first. A file may import files of its own folder and of any lower floor; never
 * a higher floor, never another folder of its own floor. ARCHITECTURE.md explains what lives on each.
 */
export const FLOORS: readonly (readonly string[])[] = [
  ['src/errors.ts', 'src/util'],
  ['src/config'],
  ['src/core'],
  ['src/transcripts', 'src/model', 'src/search'],
  ['src/digest', 'src/memory', 'src/discovery'],
  ['src/space'],
  ['src/cost', 'src/screen'],
  ['src/consolidation', 'src/agent'],
  ['src/daemon'],
  ['src/dreamd.ts'],
  ['workers/main.ts', 'src/agent-kit.ts'],
  ['src/cli', 'src/index.ts'],
];

export interface ImportEdge {
  readonly from: string;
  readonly to: string;
}

export interface RuleBreak extends ImportEdge {
  readonly why: string;
}

/** The floor and folder (or file) of a repository path under src/ or workers/, or undefined when none is listed. */
export function floorOf(path: string): { floor: number; unit: string } | undefined {
  for (const [floor, units] of FLOORS.entries()) {
    for (const unit of units) {
      if (path === unit || path.startsWith(`${unit}/`)) return { floor, unit };
    }
  }
  return undefined;
}

export function findRuleBreaks(edges: readonly ImportEdge[]): RuleBreak[] {
  const breaks: RuleBreak[] = [];
  for (const edge of edges) {
    if (!edge.to.startsWith('src/') && !edge.to.startsWith('workers/')) {
      breaks.push({ ...edge, why: 'src/ and workers/ import only src/ and workers/' });
      continue;
    }
    const from = floorOf(edge.from);
    const to = floorOf(edge.to);
    if (from === undefined || to === undefined) {
      breaks.push({ ...edge, why: 'a path with no floor: add its folder to FLOORS' });
    } else if (from.unit === to.unit) {
      continue;
    } else if (to.floor > from.floor) {
      breaks.push({
        ...edge,
        why: `upward: ${from.unit} (floor ${from.floor}) → ${to.unit} (floor ${to.floor})`,
      });
    } else if (to.floor === from.floor) {
      breaks.push({ ...edge, why: `sideways on floor ${from.floor}: ${from.unit} → ${to.unit}` });
    }
  }
  return breaks;
}
