import { describe, expect, it } from "vitest";
import {
  createWebhookGuard,
  signBody,
  signStandard,
  verifySignature,
} from "../../../src/controller/source/webhook.js";

const body = Buffer.from('{"ref":"refs/heads/main"}');

describe("webhook signatures", () => {
  it("accepts the GitHub-style signature of the exact body", () => {
    // Known vector: HMAC-SHA256("It's a Secret to Everybody", "Hello, World!") from GitHub's docs.
    expect(signBody("It's a Secret to Everybody", "Hello, World!")).toBe(
      "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
    );
    expect(verifySignature("s3cret", body, signBody("s3cret", body))).toBe(true);
    expect(
      verifySignature("s3cret", body, signBody("s3cret", body).toUpperCase().replace("SHA256", "sha256")),
    ).toBe(true);
  });

  it("rejects a wrong secret, a changed body, a missing or malformed header", () => {
    expect(verifySignature("s3cret", body, signBody("other", body))).toBe(false);
    expect(verifySignature("s3cret", Buffer.from("{}"), signBody("s3cret", body))).toBe(false);
    expect(verifySignature("s3cret", body, undefined)).toBe(false);
    expect(verifySignature("s3cret", body, "sha1=abc")).toBe(false);
    expect(verifySignature("s3cret", body, `sha256=${"0".repeat(63)}`)).toBe(false);
  });
});

describe("webhook deliveries: dated, and accepted once", () => {
  const secret = "hook-s3cret";
  const github = (delivery: string, payload = body) => ({
    "x-hub-signature-256": signBody(secret, payload),
    "x-github-delivery": delivery,
  });

  it("refuses a GitHub delivery seen before, by its id or by its signature under a new id", () => {
    const guard = createWebhookGuard();
    expect(guard(secret, github("d-1"), body)).toEqual({ ok: true });
    expect(guard(secret, github("d-1"), body)).toMatchObject({ ok: false, status: 409, reason: "replayed" });
    // The id header is not signed: a replay under a made-up id carries the same signed body.
    expect(guard(secret, github("made-up"), body)).toMatchObject({ status: 409, reason: "replayed" });
    const next = Buffer.from('{"ref":"refs/heads/main","after":"b"}');
    expect(guard(secret, github("d-2", next), next)).toEqual({ ok: true });
    // A GitLab delivery id seen before is refused too.
    const gitlab = { ...github("d-3", Buffer.from("{}")), "x-gitlab-event-uuid": "uuid-1" };
    expect(guard(secret, gitlab, Buffer.from("{}"))).toEqual({ ok: true });
    const again = { ...github("d-4", Buffer.from("[]")), "x-gitlab-event-uuid": "uuid-1" };
    expect(guard(secret, again, Buffer.from("[]"))).toMatchObject({ reason: "replayed" });
  });

  it("remembers a bounded number of deliveries (the oldest are forgotten)", () => {
    const guard = createWebhookGuard();
    const first = Buffer.from("first");
    expect(guard(secret, github("d-0", first), first).ok).toBe(true);
    for (let i = 1; i <= 10_000; i++) {
      const payload = Buffer.from(`delivery ${i}`);
      expect(guard(secret, github(`d-${i}`, payload), payload).ok).toBe(true);
    }
    expect(guard(secret, github("d-0", first), first).ok).toBe(true);
  });

  it("checks a Standard Webhooks (GitLab signing token) delivery and refuses one older than 5 minutes", () => {
    const now = Date.parse("2026-11-25T12:00:00Z");
    const guard = createWebhookGuard(() => now);
    const key = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`;
    const dated = (id: string, at: number, payload = body) => {
      const timestamp = String(Math.floor(at / 1000));
      return {
        "webhook-id": id,
        "webhook-timestamp": timestamp,
        "webhook-signature": `v1,bm90LXRoaXMtb25l ${signStandard(key, id, timestamp, payload)}`,
      };
    };
    expect(guard(key, dated("msg-1", now), body)).toEqual({ ok: true });
    expect(guard(key, dated("msg-1", now), body)).toMatchObject({ status: 409, reason: "replayed" });
    expect(guard(key, dated("msg-2", now - 5 * 60_000 - 1_000), body)).toMatchObject({
      status: 401,
      reason: "stale",
    });
    expect(guard(key, dated("msg-3", now + 6 * 60_000), body)).toMatchObject({ reason: "stale" });
    expect(guard(key, dated("msg-4", now - 4 * 60_000), body)).toEqual({ ok: true });
    // The id and the time are signed: changing either breaks the signature.
    const forged = {
      ...dated("msg-5", now - 10 * 60_000),
      "webhook-timestamp": String(Math.floor(now / 1000)),
    };
    expect(guard(key, forged, body)).toMatchObject({ status: 401, reason: "signature" });
    expect(guard("other", dated("msg-6", now), body)).toMatchObject({ reason: "signature" });
  });
});
