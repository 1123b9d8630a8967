import type { FieldPath } from "../locate.js";

// A field's path: read from a JSON pointer (ajv's instancePath), written as a message says it
// (`spec.secrets[0].value`).

export const formatField = (path: FieldPath): string =>
  path.reduce<string>(
    (out, seg) => (typeof seg === "number" ? `${out}[${seg}]` : out ? `${out}.${seg}` : seg),
    "",
  );

export const pointerToPath = (pointer: string): (string | number)[] =>
  pointer === ""
    ? []
    : pointer
        .slice(1)
        .split("/")
        .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
        .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
