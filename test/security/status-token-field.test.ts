import { describe, expect, it } from "vitest";
import { PAGE_HTML } from "../../src/status-page/page-html.js";

// The status page's token field (docs/security.md, "The status page's token field"). With
// autocomplete="current-password" a password manager takes the bearer token for this site's
// login password: it offers to save it (into a vault synced to other devices) and fills in a
// password it holds for the host. Extensions match by host and ignore the port, so on localhost or
// a port-forward that is the password of whatever else runs there (a database console, Grafana),
// sent to the controller as a Bearer token.

const tokenInput = (): Record<string, string> => {
  const tag = /<input id="token"[^>]*>/.exec(PAGE_HTML)?.[0];
  expect(tag, "the login form's token field").toBeDefined();
  const attributes: Record<string, string> = {};
  for (const match of tag!.matchAll(/\s([\w-]+)(?:="([^"]*)")?/g)) attributes[match[1]!] = match[2] ?? "";
  return attributes;
};

describe("the status page's token field", () => {
  it("is not a site password: no autofill, not saved, ignored by password managers", () => {
    const input = tokenInput();
    expect(input.type).toBe("password"); // masked on a shared screen, never spell-checked
    expect(input.autocomplete).toBe("off");
    // The attributes 1Password, LastPass, Bitwarden and Dashlane read to leave a field alone.
    for (const hint of ["data-1p-ignore", "data-lpignore", "data-bwignore", "data-form-type"])
      expect(input, hint).toHaveProperty(hint);
    expect(input["data-lpignore"]).toBe("true");
    expect(input["data-form-type"]).toBe("other");
  });

  it("is the only field of its form: no user name for a manager to pair it with", () => {
    const form = /<form id="login"[\s\S]*?<\/form>/.exec(PAGE_HTML)?.[0] ?? "";
    expect(form.match(/<input\b/g)).toHaveLength(1);
    expect(form).not.toMatch(/autocomplete="(?:current|new)-password|autocomplete="username"/);
  });
});
