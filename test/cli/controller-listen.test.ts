import { describe, expect, it } from "vitest";
import { allowedHostName, type Flags, listenSettings } from "../../src/cli/controller/controller-settings.js";
import { PlumbError } from "../../src/errors.js";

// The controller's HTTP side is safe by default: without a status token it serves loopback only.

const flags = (extra: Partial<Flags>): Flags =>
  ({ listen: "127.0.0.1:9400", allowedHost: [], ...extra }) as Flags;

const refusal = (run: () => unknown): PlumbError => {
  try {
    run();
  } catch (error) {
    return error as PlumbError;
  }
  throw new Error("expected a refusal");
};

describe("controller --listen", () => {
  it("refuses a non-loopback address without a status token, saying how to fix it", () => {
    for (const listen of [
      "0.0.0.0:9400",
      ":9400",
      "9400",
      "10.0.0.5:9400",
      "[::]:9400",
      "plumb.internal:9400",
    ]) {
      const error = refusal(() => listenSettings(flags({ listen }), undefined));
      expect(error).toBeInstanceOf(PlumbError);
      expect(error.code, listen).toBe("status-unprotected");
      expect(error.exitCode).toBe(64);
      expect(error.message).toContain("PLUMB_STATUS_TOKEN");
      expect(error.message).toContain("--insecure-status");
    }
  });

  it("serves loopback without a token, any address with one, and any with --insecure-status", () => {
    for (const listen of ["127.0.0.1:9400", "localhost:0", "[::1]:9400"])
      expect(listenSettings(flags({ listen }), undefined).port).toBeGreaterThanOrEqual(0);
    expect(listenSettings(flags({ listen: "0.0.0.0:9400" }), "token")).toMatchObject({
      host: "0.0.0.0",
      port: 9400,
    });
    expect(listenSettings(flags({ listen: "0.0.0.0:9400", insecureStatus: true }), undefined).host).toBe(
      "0.0.0.0",
    );
  });

  it("answers the --allowed-host names and the --public-url host", () => {
    const listen = listenSettings(
      flags({ allowedHost: ["plumb.internal"], publicUrl: "https://Status.Example.com:8443/plumb" }),
      undefined,
    );
    expect(listen.allowedHosts).toEqual(["plumb.internal", "status.example.com"]);
    expect(allowedHostName("plumb.internal:9400", ["a"])).toEqual(["a", "plumb.internal:9400"]);
    for (const bad of ["https://plumb.internal", "plumb.internal/x", ""])
      expect(() => allowedHostName(bad)).toThrow(/--allowed-host expects a host name/);
  });
});
