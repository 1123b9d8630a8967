import { describe, expect, it } from "vitest";
import { formatChangeError, formatChangeErrors } from "../../../src/diff/plan/change-error.js";

describe("formatChangeError", () => {
  it("names the field once when the message already starts with it", () => {
    const error = { field: "source_config.repo_url", message: "source_config.repo_url cannot change" };
    expect(formatChangeError(error)).toBe("source_config.repo_url cannot change");
    expect(formatChangeError({ field: "secrets", message: "secrets: too many" })).toBe("secrets: too many");
  });

  it("prefixes the field otherwise, and leaves field-less messages alone", () => {
    expect(formatChangeError({ field: "secrets", message: "secret values unknown" })).toBe(
      "secrets: secret values unknown",
    );
    // A longer field that merely shares a prefix is not the same field.
    expect(formatChangeError({ field: "source_config.repo", message: "source_config.repo_url x" })).toBe(
      "source_config.repo: source_config.repo_url x",
    );
    expect(formatChangeError({ field: "", message: "could not be read" })).toBe("could not be read");
    expect(
      formatChangeErrors([
        { field: "a", message: "x" },
        { field: "", message: "y" },
      ]),
    ).toBe("a: x; y");
  });
});
