import { describe, expect, it } from "vitest";
import { ApiError, withSettingHints } from "../../src/api/errors.js";

// A failure with no HTTP answer says what its system code means. Every one asked "is the server
// running?", which sent a user whose host name did not resolve to restart a server that was up.

const ORIGIN = "https://api.example.test:8443";
const failed = (detail: string) =>
  new ApiError({ code: "network", status: 0, method: "GET", path: "/v2/deployments", detail, url: ORIGIN });

describe("what a network failure says", () => {
  it.each([
    ["ENOTFOUND", "the host name api.example.test does not resolve: a typo"],
    ["EAI_AGAIN", "the host name api.example.test could not be resolved now: the DNS server did not answer"],
    ["ECONNREFUSED", `nothing accepts connections at ${ORIGIN}: the host refused the port`],
    ["ETIMEDOUT", `no connection to ${ORIGIN} could be opened in time: a firewall`],
    ["UND_ERR_CONNECT_TIMEOUT", `no connection to ${ORIGIN} could be opened in time`],
    ["ECONNRESET", `the connection to ${ORIGIN} was closed before an answer`],
    ["UND_ERR_SOCKET", `the connection to ${ORIGIN} was closed before an answer`],
    ["ERR_SSL_WRONG_VERSION_NUMBER", "does not speak TLS, an http:// server behind an https:// URL?"],
    ["CERT_HAS_EXPIRED", `the TLS certificate of ${ORIGIN} is not trusted: expired`],
    ["DEPTH_ZERO_SELF_SIGNED_CERT", "NODE_EXTRA_CA_CERTS"],
    ["ERR_TLS_CERT_ALTNAME_INVALID", "for another host name"],
    ["connection failed", `could not reach ${ORIGIN}`],
  ])("%s: %s", (code, says) => {
    const error = failed(code);
    expect(error.message).toContain(says);
    expect(error.message).not.toContain("is the server running");
    expect(error.message).toContain("PLUMB_API_URL");
    expect(error.fix).toBe(error.message.slice(error.message.indexOf(" (") + 2, -1));
  });

  it("a resolved URL from an Environment names that setting, in the message and the fix", () => {
    const error = withSettingHints(failed("ENOTFOUND"), {
      apiKey: "environment prod's spec.api_key ($PROD_API_KEY)",
      tenantId: "environment prod's spec.tenant_id",
      apiUrl: "environment prod's spec.api_url ($PROD_API_URL, environments/prod.yaml:6)",
    });
    const named = "check environment prod's spec.api_url ($PROD_API_URL, environments/prod.yaml:6)";
    expect(error.message).toContain(named);
    expect(error.fix).toContain(named);
    expect(error.message).not.toContain("PLUMB_API_URL");
  });
});
