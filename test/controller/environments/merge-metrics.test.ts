import { describe, expect, it } from "vitest";
import { mergeMetricsText } from "../../../src/controller/environments/merge-metrics.js";

describe("mergeMetricsText", () => {
  it("keeps each family's HELP and TYPE once and every registry's samples together under them", () => {
    const staging = [
      "# HELP plumb_leader 1 while leading",
      "# TYPE plumb_leader gauge",
      'plumb_leader{environment="staging"} 1',
      "",
      "# HELP plumb_api_up 1 when the API answers",
      "# TYPE plumb_api_up gauge",
      'plumb_api_up{environment="staging"} 1',
      "",
    ].join("\n");
    const prod = [
      "# HELP plumb_leader 1 while leading",
      "# TYPE plumb_leader gauge",
      'plumb_leader{environment="prod"} 0',
      "",
    ].join("\n");
    expect(mergeMetricsText([staging, prod]).split("\n")).toEqual([
      "# HELP plumb_leader 1 while leading",
      "# TYPE plumb_leader gauge",
      'plumb_leader{environment="staging"} 1',
      'plumb_leader{environment="prod"} 0',
      "# HELP plumb_api_up 1 when the API answers",
      "# TYPE plumb_api_up gauge",
      'plumb_api_up{environment="staging"} 1',
      "",
    ]);
  });

  it("answers nothing for no registries", () => {
    expect(mergeMetricsText([])).toBe("");
  });
});
