import { isRecord, reportDuplicateNames, type Raw, type Report } from "./rule-helpers.js";

// Rules of spec.verify the schema cannot express: something to ask (input or cases), the smoke
// question's expect_contains only with its input, unique case names, and patterns that compile.

export function checkVerify(spec: Raw, report: Report): void {
  const verify = spec.verify;
  if (!isRecord(verify)) return;
  const hasInput = verify.input !== undefined;
  // Indexed as written (a malformed entry keeps its place: the schema reports it).
  const cases = (Array.isArray(verify.cases) ? verify.cases : []).map((c: unknown) => (isRecord(c) ? c : {}));
  if (!hasInput && verify.cases === undefined)
    report(
      "error",
      "verify-nothing-to-ask",
      ["spec", "verify"],
      "verify needs input (a smoke question) or cases (the agent's checks)",
    );
  if (!hasInput && verify.expect_contains !== undefined)
    report(
      "error",
      "field-not-applicable",
      ["spec", "verify", "expect_contains"],
      "expect_contains applies to the smoke question: give input too, or move it into a case",
    );
  const named = cases.map((c, i) => ({ name: c.name, path: ["spec", "verify", "cases", i] }));
  reportDuplicateNames(report, "duplicate-case", "verify case", named);
  named.forEach(({ name, path }) => {
    if (hasInput && name === "smoke")
      report(
        "error",
        "duplicate-case",
        [...path, "name"],
        "the name smoke is the smoke question's (verify.input); rename this case",
        "value",
      );
  });
  cases.forEach((c, i) => {
    if (typeof c.expect_regex !== "string") return;
    try {
      new RegExp(c.expect_regex);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      report(
        "error",
        "invalid-regex",
        ["spec", "verify", "cases", i, "expect_regex"],
        `expect_regex is not a JavaScript regular expression: ${why}`,
        "value",
      );
    }
  });
}
