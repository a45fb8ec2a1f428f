/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), stricter than Prometheus itself:
 * every line is a `# HELP`, a `# TYPE` or a sample; no blank line; label pairs `name="value"` separated by a bare
 * comma; a family's HELP and TYPE come once, before its samples, and its samples are not split by another family.
 * Throws on the first line that breaks a rule, naming it.
 */
export function parsePrometheusStrictly(text: string): Map<string, { type: string; samples: string[] }> {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  const families = new Map<string, { type: string; samples: string[] }>();
  const name = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const label = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
  const value = '(?:[-+]?(?:[0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?)|[-+]?Inf|NaN)';
  const sample = new RegExp(`^(${name})(?:\\{(?:${label}(?:,${label})*)?\\})? ${value}(?: -?[0-9]+)?$`);
  let current: string | undefined;
  const closed = new Set<string>();
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((line, index) => {
    const where = `line ${index + 1}: ${JSON.stringify(line)}`;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta !== null) {
      const [, kind, family] = meta as unknown as [string, string, string, string];
      if (family !== current) {
        if (current !== undefined) closed.add(current);
        if (closed.has(family) || families.has(family))
          throw new Error(`family ${family} seen twice, ${where}`);
        current = family;
        families.set(family, { type: 'untyped', samples: [] });
      }
      const entry = families.get(family)!;
      if (entry.samples.length > 0) throw new Error(`${kind} after samples, ${where}`);
      if (kind === 'TYPE') {
        if (!/^(counter|gauge|histogram|summary|untyped)$/.test(meta[3]!))
          throw new Error(`bad type, ${where}`);
        entry.type = meta[3]!;
      }
      return;
    }
    const match = sample.exec(line);
    if (match === null) throw new Error(`not a sample, ${where}`);
    const metric = match[1]!;
    const family =
      current !== undefined && (metric === current || /_(bucket|sum|count|total|created)$/.test(metric))
        ? current
        : metric;
    if (family !== current || !families.has(family)) throw new Error(`sample outside its family, ${where}`);
    families.get(family)!.samples.push(line);
  });
  return families;
}
