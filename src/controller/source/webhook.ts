import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { LRUCache } from "lru-cache";

// POST /hooks/git: who may ask for a fetch, and only once per delivery. Two signatures are accepted:
// - GitHub's: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>` (others send it too);
// - Standard Webhooks' (GitLab's signing tokens): `webhook-signature: v1,<base64 HMAC-SHA256 of
//   "<webhook-id>.<webhook-timestamp>.<body>">`, dated by the sender: older than 5 minutes (or
//   as far in the future) is refused. A `whsec_` secret is the base64 of the key, as that spec says.
// A delivery is accepted once: its ids (`X-GitHub-Delivery`, `X-Gitlab-Event-UUID`, `webhook-id`)
// and its signature are remembered, the last 10,000 of them (bounded memory). GitHub signs the
// body only, not the id header: the signature is what ties a replay to the delivery it copies.

export type WebhookVerdict =
  { ok: true } | { ok: false; status: 401 | 409; reason: "signature" | "stale" | "replayed"; detail: string };

const MAX_AGE_MS = 5 * 60_000;
const REMEMBERED = 10_000;
const ID_HEADERS = ["x-github-delivery", "x-gitlab-event-uuid", "webhook-id"] as const;

/** The `X-Hub-Signature-256` value for a body: `sha256=` + hex HMAC-SHA256 with the shared secret. */
export const signBody = (secret: string, body: Uint8Array | string): string =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

/** Standard Webhooks' key: the bytes behind `whsec_<base64>`, else the secret's own bytes. */
const standardKey = (secret: string): Buffer =>
  secret.startsWith("whsec_") ? Buffer.from(secret.slice(6), "base64") : Buffer.from(secret, "utf8");

/** The `webhook-signature` value of a Standard Webhooks delivery (`v1,<base64>`). */
export const signStandard = (secret: string, id: string, timestamp: string, body: Uint8Array | string) =>
  `v1,${createHmac("sha256", standardKey(secret)).update(`${id}.${timestamp}.`).update(body).digest("base64")}`;

const sameText = (a: string, b: string) => {
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
};

/** Constant-time check of a webhook signature; false for a missing or malformed header. */
export function verifySignature(secret: string, body: Uint8Array, header: string | undefined): boolean {
  if (!header || !/^sha256=[0-9a-f]{64}$/i.test(header)) return false;
  return sameText(signBody(secret, body), header.toLowerCase());
}

const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * The signature a delivery's headers call for, computed as its body arrives: each chunk goes into
 * the HMAC and is let go, so a body costs no memory while it is read (a body kept whole until its
 * end let 400 unsigned 1 MiB uploads, never finished, hold 400 MB: a 256 MiB pod killed).
 */
export type WebhookDigest = {
  update(chunk: Uint8Array): void;
  /** in the header's form */ signature(): string;
};

/** The digest for a delivery with these headers (Standard Webhooks' when it has `webhook-signature`). */
export function webhookDigest(secret: string, headers: IncomingHttpHeaders): WebhookDigest {
  const standard = one(headers["webhook-signature"]) !== undefined;
  const hmac = standard
    ? createHmac("sha256", standardKey(secret)).update(
        `${one(headers["webhook-id"]) ?? ""}.${one(headers["webhook-timestamp"]) ?? ""}.`,
      )
    : createHmac("sha256", secret);
  return {
    update: (chunk) => void hmac.update(chunk),
    signature: () => (standard ? `v1,${hmac.digest("base64")}` : `sha256=${hmac.digest("hex")}`),
  };
}

/** False when no signature header could match: such a delivery is refused before its body is read. */
export function mayBeSigned(headers: IncomingHttpHeaders): boolean {
  return (
    one(headers["webhook-signature"]) !== undefined ||
    /^sha256=[0-9a-f]{64}$/i.test(one(headers["x-hub-signature-256"]) ?? "")
  );
}

/** A guard for one server: checks each delivery's signature and age, and refuses one seen before. */
export function createWebhookGuard(now: () => number = Date.now) {
  const seen = new LRUCache<string, true>({ max: REMEMBERED });
  return (secret: string, headers: IncomingHttpHeaders, body: Uint8Array | WebhookDigest): WebhookVerdict => {
    let digest = body as WebhookDigest;
    if (body instanceof Uint8Array) (digest = webhookDigest(secret, headers)).update(body);
    const standard = one(headers["webhook-signature"]);
    let signature: string;
    if (standard) {
      const id = one(headers["webhook-id"]) ?? "";
      const timestamp = one(headers["webhook-timestamp"]) ?? "";
      const expected = digest.signature();
      // The header lists one or more space-separated signatures (key rotation): any may match.
      if (!id || !/^\d{1,12}$/.test(timestamp) || !standard.split(" ").some((s) => sameText(s, expected)))
        return { ok: false, status: 401, reason: "signature", detail: "invalid signature" };
      if (Math.abs(now() - Number(timestamp) * 1000) > MAX_AGE_MS)
        return {
          ok: false,
          status: 401,
          reason: "stale",
          detail: "signature dated more than 5 minutes from now: a replay, or the sender's clock is off",
        };
      signature = expected;
    } else {
      const header = one(headers["x-hub-signature-256"]);
      if (
        !header ||
        !/^sha256=[0-9a-f]{64}$/i.test(header) ||
        !sameText(digest.signature(), header.toLowerCase())
      )
        return { ok: false, status: 401, reason: "signature", detail: "invalid signature" };
      signature = header.toLowerCase();
    }
    const keys = [
      `sig:${signature}`,
      ...ID_HEADERS.map((name) => one(headers[name]))
        .filter(Boolean)
        .map((id) => `id:${id}`),
    ];
    if (keys.some((key) => seen.has(key)))
      return { ok: false, status: 409, reason: "replayed", detail: "delivery already received" };
    for (const key of keys) seen.set(key, true);
    return { ok: true };
  };
}
