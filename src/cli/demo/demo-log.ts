import { Writable } from "node:stream";
import { createColors } from "picocolors";

// The controller's JSON log lines, retold for someone watching the demo: one short sentence per event
// (what happened to which object), routine "still in sync" checks dimmed. Pure except the stream.

type Colors = ReturnType<typeof createColors>;
type Entry = Record<string, unknown>;

const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
const short = (id: unknown) => (typeof id === "string" ? id.slice(0, 8) : "");
const HIDDEN = new Set([
  "level",
  "time",
  "pid",
  "hostname",
  "msg",
  "name",
  "object",
  "v",
  "kind",
  "id",
  "commit",
]);

function sentence(entry: Entry, c: Colors): string {
  const who =
    typeof entry.kind === "string" && typeof entry.object === "string" ? `${entry.kind}/${entry.object}` : "";
  switch (entry.msg) {
    case "reconciled":
      // A drift check that found nothing, or a (first) look at a manifest live already matches.
      if (entry.result === "in-sync")
        return c.dim(
          entry.reason === "drift"
            ? `${who}: in sync with its manifest (drift check)`
            : `${who}: in sync with its manifest, nothing to send`,
        );
      return `${c.bold(who)}: ${text(entry.action)} ${c.green(text(entry.result))} → ${text(entry.sync)}, ${text(entry.health)}${
        entry.revision ? `, revision ${short(entry.revision)}` : ""
      } in ${(Number(entry.elapsed_ms) / 1000).toFixed(1)}s`;
    case "reconcile did not converge":
      return c.yellow(
        `${who}: did not converge (${text(entry.result)}${entry.error ? `: ${text(entry.error)}` : ""}); retried with backoff`,
      );
    case "manifests changed":
      if (entry.trigger === "start") return `found ${text(entry.changed)} objects: checking each once`;
      return `${c.cyan("change detected")} in ${text(entry.changed)} object(s): reconciling only those`;
    case "invalid manifest: not reconciled until fixed":
      return `${text(entry.file)}:${text(entry.line)}:${text(entry.column)}: ${text(entry.problem)}`;
    case "manifest now invalid: not reconciled":
      return c.yellow(
        `${text(entry.object)}: its manifest is invalid; left alone until fixed, the others go on`,
      );
    case "first reconcile finished":
      return c.green(
        `first check done: all ${text(entry.objects)} objects reconciled; now waiting for changes`,
      );
    default: {
      const rest = Object.entries(entry)
        .filter(([k, v]) => !HIDDEN.has(k) && v !== null && v !== undefined)
        .map(([k, v]) => `${k}=${text(v)}`)
        .join(" ");
      return `${String(entry.msg)}${who ? ` ${c.bold(who)}` : ""}${rest ? ` ${c.dim(rest)}` : ""}`;
    }
  }
}

/** Shown elsewhere in the demo's own words. */
const SILENT = new Set(["serving the status page at / and /livez /readyz /metrics /status"]);

/** One demo line for one controller log entry (null: not shown): time, then the sentence. */
export function formatDemoLogLine(entry: Entry, c: Colors): string | null {
  if (SILENT.has(String(entry.msg))) return null;
  const time = new Date(entry.time as number).toISOString().slice(11, 19);
  const level = entry.level as number;
  const line = sentence(entry, c);
  return `${c.dim(time)} ${level >= 50 ? c.red(line) : level >= 40 && entry.msg !== "reconcile did not converge" ? c.yellow(line) : line}`;
}

/** A stream for pino that prints formatDemoLogLine per JSON line (anything else as it is). */
export function demoLogStream(out: { write(text: string): unknown }, color: boolean): Writable {
  const c = createColors(color);
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        let entry: Entry | undefined;
        try {
          entry = JSON.parse(line) as Entry;
        } catch {
          entry = undefined;
        }
        const shown = entry ? formatDemoLogLine(entry, c) : line;
        if (shown !== null) out.write(`${shown}\n`);
      }
      done();
    },
  });
}
