// Edited manifests for test/manifest/cst-compose.test.ts: each seed manifest with one to three
// edits of the kinds a YAML reader gets wrong (quoting, indentation, flow or block, numbers, null
// and true spellings, empty values, comments, unicode, long strings, duplicate keys) and of the
// kinds the fast composer must leave to yaml (tabs, anchors, tags, directives, `?` keys, merge
// keys, character edits that break the text). The same texts every run (a seeded generator).

/** The bench's manifest shapes (bench/validate.bench.ts), and a few more plumb writes. */
const SEEDS = [
  `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: agent-1
  labels: {team: team-1}
spec:
  source: gitrepo
  source_config:
    integration_id: 20000000-0000-4000-8000-000000000001
    repo_url: https://github.com/acme/agent-1
    deployment_type: prod
    build_on_push: true
  source_revision_config:
    repo_ref: main
    graph_config_path: langgraph.json
  secrets:
    - name: OPENAI_API_KEY
      valueFrom: {env: OPENAI_API_KEY}
    - name: LOG_LEVEL
      value: info
  verify:
    assistant_id: agent
    input: {messages: [{role: user, content: ping}]}
`,
  `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: agent-2
spec:
  source: external_container
  source_config:
    listener_id: 10000000-0000-4000-8000-000000000001
    listener_config: {k8s_namespace: agents}
    resource_spec:
      min_scale: 1
      max_scale: 3
      cpu: 0.5
      memory_mb: 1024
      volumes: [{name: cache, emptyDir: {}}]
      volume_mounts: [{name: cache, mountPath: /cache}]
      sidecars:
        - name: metrics
          image: registry.example/metrics:1
          volumeMounts: [{name: cache, mountPath: /cache}]
  source_revision_config:
    image_uri: registry.example/agent-2:1.0.2
  secrets:
    - name: OPENAI_API_KEY
      valueFrom: {env: OPENAI_API_KEY}
`,
  `# an organization
apiVersion: plumb/v1
kind: OrganizationAccess
metadata:
  name: acme   # the org
spec:
  description: |
    Two lines
    of text.
  note: >-
    folded
    text

  allowed: ["a", 'b', c]
---
apiVersion: plumb/v1
kind: Environment
metadata: {name: prod}
spec:
  defaults:
    resource_spec: {cpu: 1, memory_mb: 2048}
`,
];

const VALUES = [
  "1_024",
  "0x1F",
  "0o7",
  "0o8",
  ".inf",
  "-.inf",
  "+.INF",
  "-.NaN",
  ".NaN",
  ".nan",
  "1e3",
  "1E+3",
  "-1.5e-3",
  "+12",
  "-0",
  "0.50",
  "1.",
  ".5",
  "007",
  "0b1",
  "12:30",
  "1e",
  "0x",
  "~",
  "null",
  "Null",
  "NULL",
  "nULL",
  "true",
  "True",
  "TRUE",
  "tRUE",
  "false",
  "yes",
  "no",
  "on",
  "off",
  "y",
  '""',
  "''",
  "'it''s'",
  '"tab\\there"',
  '"\\x41\\u00e9\\U0001F600"',
  '"bad \\q escape"',
  '"\\N\\_\\L\\P\\0"',
  '"\\uD800"',
  '"\\U00110000"',
  "é中文😀",
  "a: b",
  "a #b",
  "a#b",
  "- x",
  "[a, b]",
  "{a: 1}",
  "[a, [b, {c: d}], ]",
  "{a: }",
  "{a, b}",
  "[a: 1]",
  "[,]",
  "{}",
  "[]",
  "&x v",
  "*x",
  "!!str 5",
  "!foo x",
  "|\n      literal\n      text\n",
  ">-\n      folded\n\n      more\n",
  "|+\n      keep\n\n",
  "|2\n        indented\n",
  "|\n    under\n",
  "'multi\n      line'",
  '"multi\n      line"',
  "plain\n      continued",
  "x".repeat(1100),
  "@at",
  "`tick",
  "%pct",
  ", comma",
  "\u0085nel",
  "constructor",
  "__proto__",
  "<<",
];
const KEYS = [
  "kind",
  "name",
  "1",
  "'1'",
  "true",
  "~",
  "__proto__",
  "constructor",
  "<<",
  "? k",
  '"q"',
  "k".repeat(1030),
];
const COMMENTS = [" # c", "#c", "  #", " # é 😀"];
const CHARS = [
  ":",
  " ",
  "\n",
  "-",
  "{",
  "}",
  "[",
  "]",
  ",",
  "'",
  '"',
  "#",
  "&a ",
  "*a",
  "!!str ",
  "? ",
  "|",
  ">",
  "\t",
  "x",
  "---\n",
  "...\n",
  "%YAML 1.1\n---\n",
  "\r\n",
  "\ufeff",
  "\r",
  "\u2028",
  "\u2029",
];

type Random = (n: number) => number;
const pick = <T>(random: Random, list: readonly T[]): T => list[random(list.length)]!;

/** One edit of one line (or of the text, for character edits). */
function edit(text: string, random: Random): string {
  const lines = text.split("\n");
  const at = random(lines.length);
  const line = lines[at]!;
  const colon = line.indexOf(": ");
  const value = colon >= 0 ? line.slice(colon + 2) : "";
  switch (random(13)) {
    case 0: // requote a value
      if (colon >= 0)
        lines[at] =
          line.slice(0, colon + 2) +
          pick(random, [`'${value}'`, `"${value}"`, value.replace(/^["']|["']$/g, "")]);
      break;
    case 1: // indentation
      lines[at] = random(2) ? ` ${line}` : line.replace(/^ {1,2}/, "");
      break;
    case 2:
    case 3: // a new value
      if (colon >= 0) lines[at] = line.slice(0, colon + 2) + pick(random, VALUES);
      else lines[at] = `${line}${pick(random, ["", " x", ":", ": 1"])}`;
      break;
    case 4: // an empty value
      if (colon >= 0) lines[at] = line.slice(0, colon + 1) + pick(random, ["", " ", "  # empty"]);
      break;
    case 5: // a comment
      lines[at] = random(2) ? line + pick(random, COMMENTS) : `${" ".repeat(random(6))}# note\n${line}`;
      break;
    case 6: // a duplicate, or a new key
      lines.splice(
        at,
        0,
        random(2) ? line : `${/^ */.exec(line)![0]}${pick(random, KEYS)}: ${pick(random, VALUES)}`,
      );
      break;
    case 7: // block to flow: a nested mapping's first line
      if (colon >= 0 && value !== "") lines[at] = line.slice(0, colon + 2) + `{a: ${value}, "b": [1, '2']}`;
      break;
    case 8: // a document separator, a blank line
      lines.splice(at, 0, pick(random, ["---", "", "--- # doc", "...", "  "]));
      break;
    case 9: // Windows line ends
      return text.replace(/\n/g, "\r\n");
    default: {
      // a character edit anywhere
      const offset = random(text.length + 1);
      const kind = random(3);
      if (kind === 0) return text.slice(0, offset) + text.slice(offset + 1);
      if (kind === 1) return text.slice(0, offset) + pick(random, CHARS) + text.slice(offset);
      return text.slice(0, offset) + text.slice(offset, offset + 30) + text.slice(offset);
    }
  }
  return lines.join("\n");
}

/** `count` edited manifests from the seeds and `extraSeeds`, the same ones every run. */
export function editedManifests(count: number, extraSeeds: readonly string[] = [], seed = 28): string[] {
  let state = seed;
  const random: Random = (n) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return Math.floor((state / 0x80000000) * n);
  };
  const seeds = [...SEEDS, ...extraSeeds];
  return Array.from({ length: count }, () => {
    let text = pick(random, seeds);
    for (let edits = 1 + random(3); edits > 0; edits--) text = edit(text, random);
    return text;
  });
}
