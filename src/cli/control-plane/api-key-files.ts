import { readFileSync } from "node:fs";
import { UsageError } from "../../errors.js";
import { type ApiKeyGrant, DEFAULT_TENANT_ID } from "../../control-plane/options.js";

// The keys `plumb control-plane` accepts: from --api-key (visible to `ps` and shell history, so
// warned about) or from --api-key-file FILE (repeatable), one `KEY[=TENANT[,TENANT...]]` per line.

/** A granted key and where it came from, as the start-up lines name it (never the key itself). */
export type KeySource = { grant: ApiKeyGrant; from: string };

/** `KEY` (the default tenant) or `KEY=TENANT[,TENANT...]`; `where` names it in the error. */
function parseGrant(text: string, where: string): ApiKeyGrant {
  const [key = "", tenants] = text.split("=", 2).map((part) => part.trim());
  if (!key) throw new UsageError(`${where} needs KEY or KEY=TENANT_ID[,TENANT_ID...]`);
  return {
    key,
    tenants: tenants
      ? tenants
          .split(",")
          .map((t) => t.trim())
          .filter(Boolean)
      : [DEFAULT_TENANT_ID],
  };
}

/** One grant per line of `path`; blank lines and `#` comments skipped. Errors name the line, never a key. */
function readKeyFile(path: string, readFile: (path: string) => string): KeySource[] {
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    const code = (error as { code?: string }).code ?? "unreadable";
    throw new UsageError(`cannot read --api-key-file ${path} (${code}); give a file of KEY[=TENANT] lines`);
  }
  const sources = text.split(/\r?\n/).flatMap((line, i) => {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return [];
    const from = `--api-key-file ${path} line ${i + 1}`;
    return [{ grant: parseGrant(trimmed, from), from }];
  });
  if (sources.length === 0)
    throw new UsageError(`--api-key-file ${path} holds no key; write one KEY[=TENANT] per line`);
  return sources;
}

/** The keys of --api-key flags, then of each --api-key-file, in order. */
export function readKeySources(
  flags: { apiKey?: string[] | undefined; apiKeyFile?: string[] | undefined },
  readFile: (path: string) => string = (path) => readFileSync(path, "utf8"),
): KeySource[] {
  return [
    ...(flags.apiKey ?? []).map((text, i) => ({
      grant: parseGrant(text, "--api-key"),
      from: `--api-key #${i + 1}`,
    })),
    ...(flags.apiKeyFile ?? []).flatMap((path) => readKeyFile(path, readFile)),
  ];
}

/** The warning for keys given as flag values, or null when there are none but the development key. */
export function commandLineKeyWarning(
  keys: readonly string[] | undefined,
  developmentKey: string,
): string | null {
  if (!keys?.some((text) => !text.startsWith(`${developmentKey}=`) && text !== developmentKey)) return null;
  return "--api-key puts keys on the command line, where ps, /proc and shell history show them; put them in a file, one KEY[=TENANT] per line, and pass --api-key-file FILE";
}
