import { createHmac, timingSafeEqual } from "node:crypto";

/** The `X-Hub-Signature-256` value for a body: `sha256=` + hex HMAC-SHA256 with the shared secret. */
export const signBody = (secret: string, body: Uint8Array | string): string =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

/** Constant-time check of a webhook signature; false for a missing or malformed header. */
export function verifySignature(secret: string, body: Uint8Array, header: string | undefined): boolean {
  if (!header || !/^sha256=[0-9a-f]{64}$/i.test(header)) return false;
  const expected = Buffer.from(signBody(secret, body), "utf8");
  const given = Buffer.from(header.toLowerCase(), "utf8");
  return expected.length === given.length && timingSafeEqual(expected, given);
}
