// What plumb says of a YAML error or warning: `yaml`'s own words without the file's text that some
// of them quote (the token it could not place, an unknown tag, an escape, a block scalar header).
// That text can be a secret's value: a password written unquoted as `value: !Passw0rd` is a tag to
// YAML, and "Unresolved tag: !Passw0rd" printed it on the CI log; a stray line of a token file
// came back as `Unexpected scalar token in YAML stream: "basic c2Vj…"`. The position
// (file:line:col) says where; the file says what. The templates are those of `yaml` 3.0.0-2, pinned
// exactly (docs/manifests.md "Speed"); test/manifest/yaml-message.test.ts puts a marker at every
// place a message could quote and fails if any message shows it.

const QUOTING: readonly (readonly [RegExp, string])[] = [
  // The parser's error tokens: `${message}: ${JSON.stringify(source)}`.
  [/^(.*?): ".*"$/s, "$1"],
  [/^Not a YAML token: .*$/s, "Not a YAML token"],
  [/^Block scalar header includes extra characters: .*$/s, "Block scalar header includes extra characters"],
  [/^Invalid escape sequence .*$/s, "Invalid escape sequence"],
  [
    /^(Unresolved|Could not resolve) tag: .*$/s,
    "Unresolved tag (a value that starts with ! is a YAML tag: quote the value)",
  ],
  [/^Not a valid tag: .*$/s, "Not a valid tag (a value that starts with ! is a YAML tag: quote the value)"],
  [/^Verbatim tags aren't resolved, so .* is invalid\.$/s, "Verbatim tags aren't resolved"],
  [/^The .* tag has no suffix$/s, "A tag has no suffix"],
  [/^Unresolved plain scalar .*$/s, "Unresolved plain scalar"],
  [/^.* used for (\w+) collection, but expects (\w+)$/s, "A tag of $2 values is used for a $1 collection"],
  [/^Unknown directive .*$/s, "Unknown directive"],
  [/^Unsupported YAML version .*$/s, "Unsupported YAML version"],
];

/** `yaml`'s message, its first line, with any text of the file it quotes taken out. */
export function yamlMessage(message: string): string {
  const first = message.split("\n")[0]?.trim() ?? message;
  for (const [pattern, replacement] of QUOTING)
    if (pattern.test(first)) return first.replace(pattern, replacement);
  return first;
}
