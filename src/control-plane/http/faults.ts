import { UsageError } from "../../errors.js";

type FaultKind = "500" | "503" | "429" | "reset" | "lost-response" | "echo";
const KINDS: readonly FaultKind[] = ["500", "503", "429", "reset", "lost-response", "echo"];

/**
 * Share of requests failing each way, plus an optional latency range applied to every request.
 * `methods`: only requests of these methods draw (the others are served as without faults);
 * `max`: at most this many faults in all, then every request is served.
 */
export type FaultSpec = {
  rates: Array<{ kind: FaultKind; share: number }>;
  latency?: { minMs: number; maxMs: number };
  methods?: string[];
  max?: number;
};

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/**
 * Parses `500=0.05,503=0.05,429=0.05,reset=0.02,lost-response=0.02,echo=0.1,latency=10-200`, with
 * optionally `methods=PATCH/POST` and `max=N`.
 */
export function parseFaultSpec(text: string): FaultSpec {
  const spec: FaultSpec = { rates: [] };
  for (const part of text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name = "", value = ""] = part.split("=", 2).map((p) => p.trim());
    if (name === "latency") {
      const match = /^(\d+)(?:-(\d+))?$/.exec(value);
      if (!match)
        throw new UsageError(`--faults: latency must be MS or MIN-MAX in milliseconds, got "${value}"`);
      const minMs = Number(match[1]);
      const maxMs = Number(match[2] ?? match[1]);
      if (maxMs < minMs) throw new UsageError(`--faults: latency ${value} has its maximum below its minimum`);
      spec.latency = { minMs, maxMs };
      continue;
    }
    if (name === "methods") {
      const methods = value.split("/").map((m) => m.trim().toUpperCase());
      const unknown = methods.find((m) => !METHODS.includes(m));
      if (unknown !== undefined)
        throw new UsageError(`--faults: methods takes ${METHODS.join("/")}, got "${unknown}"`);
      spec.methods = methods;
      continue;
    }
    if (name === "max") {
      if (!/^\d+$/.test(value)) throw new UsageError(`--faults: max must be a whole number, got "${value}"`);
      spec.max = Number(value);
      continue;
    }
    if (!(KINDS as readonly string[]).includes(name)) {
      throw new UsageError(
        `--faults: unknown fault "${name}"; use ${KINDS.join(", ")}, latency, methods or max`,
      );
    }
    const share = Number(value);
    if (value === "" || !Number.isFinite(share) || share < 0 || share > 1) {
      throw new UsageError(`--faults: ${name} needs a share between 0 and 1, got "${value}"`);
    }
    spec.rates.push({ kind: name as FaultKind, share });
  }
  const total = spec.rates.reduce((sum, r) => sum + r.share, 0);
  if (total > 1) throw new UsageError(`--faults: the shares add up to ${total}, more than 1`);
  return spec;
}

/** mulberry32: a small seeded PRNG, so `--fault-seed` makes a run reproducible. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type FaultDecision = { kind: FaultKind | undefined; latencyMs: number };

/** Draws the fault (if any) and latency of one request; no fault once `spec.max` were drawn. */
export function createFaultPicker(spec: FaultSpec, seed: number): () => FaultDecision {
  const random = seededRandom(seed);
  let drawn = 0;
  return () => {
    const draw = random();
    let cumulative = 0;
    let kind: FaultKind | undefined;
    for (const rate of spec.rates) {
      cumulative += rate.share;
      if (draw < cumulative) {
        kind = spec.max === undefined || drawn < spec.max ? rate.kind : undefined;
        if (kind) drawn += 1;
        break;
      }
    }
    const latency = spec.latency;
    const latencyMs = latency
      ? latency.minMs + Math.floor(random() * (latency.maxMs - latency.minMs + 1))
      : 0;
    return { kind, latencyMs };
  };
}

/** An answer of the echo fault: what a careless server (or proxy) says when it refuses a body. */
export type EchoAnswer = {
  status: 400 | 422;
  contentType: "application/json" | "text/plain";
  payload: string;
};

/**
 * The echo fault refuses a request that has a body and quotes the body in its answer, in every form
 * a server may use: as received, JSON-escaped, URL-encoded, base64, and cut short. The `n`th echo
 * answers in turn a 400 `{"detail": string}`, a 422 issue list (with FastAPI's `input`: the body
 * itself) and a plain-text 400 (a proxy's page). Nothing is applied.
 */
export function echoAnswer(body: unknown, n: number): EchoAnswer {
  const raw = JSON.stringify(body);
  const forms = [
    `bad request: ${raw}`,
    `json: ${JSON.stringify(raw)}`,
    `url: ${encodeURIComponent(raw)}`,
    `base64: ${Buffer.from(raw).toString("base64")}`,
    `cut: ${strings(body)
      .map((value) => value.slice(0, Math.max(8, Math.ceil(value.length / 2))))
      .join(" ")}`,
  ].join(" | ");
  const style = n % 3;
  if (style === 0)
    return { status: 400, contentType: "application/json", payload: JSON.stringify({ detail: forms }) };
  if (style === 1) {
    const detail = [{ loc: ["body", raw], msg: forms, type: "value_error", input: body }];
    return { status: 422, contentType: "application/json", payload: JSON.stringify({ detail }) };
  }
  return { status: 400, contentType: "text/plain", payload: `Bad Request\n${forms}` };
}

/** Every string in a JSON value. */
function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(strings);
  return [];
}
