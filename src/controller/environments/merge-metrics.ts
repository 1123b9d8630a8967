// Pure: several registries' Prometheus text as one exposition. Each metric family's HELP and TYPE
// once, then every registry's samples of it (the environments' registries label theirs with
// `environment`): the text format wants a family's lines together and each family once.

export function mergeMetricsText(texts: readonly string[]): string {
  const families = new Map<string, { head: string[]; samples: string[] }>();
  for (const text of texts) {
    let current: { head: string[]; samples: string[] } | undefined;
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      const meta = /^# (HELP|TYPE) (\S+)/.exec(line);
      if (meta) {
        const name = meta[2]!;
        let family = families.get(name);
        if (!family) families.set(name, (family = { head: [], samples: [] }));
        if (!family.head.some((h) => h.startsWith(`# ${meta[1]} `))) family.head.push(line);
        current = family;
      } else if (current && !line.startsWith("#")) current.samples.push(line);
    }
  }
  const out: string[] = [];
  for (const { head, samples } of families.values()) out.push(...head, ...samples);
  return out.length > 0 ? `${out.join("\n")}\n` : "";
}
