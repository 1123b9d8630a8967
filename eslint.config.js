// @ts-check
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import tseslint from "typescript-eslint";
import { isTopLevelFile, layers, restrictedImportsOf } from "./layers.js";

export default defineConfig(
  {
    ignores: [
      "dist/",
      "node_modules/",
      "coverage/",
      // npm run mutation's sandboxes and reports (kept out of git)
      ".stryker-tmp/",
      "reports/",
      "eslint.config.js",
      "examples/",
      ".plumb/",
      "test/conformance/oss/",
      "layers.js",
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/require-await": "off",
      "no-console": "off",
    },
  },
  {
    // Issue 28: no function of src/ over 80 lines (tests and benches may read as long scripts).
    files: ["src/**/*.ts"],
    rules: { "max-lines-per-function": ["error", { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/unbound-method": "off",
    },
  },
  {
    // Plain-JS helpers (loaders for spawned test processes) are outside the TypeScript project.
    files: ["**/*.mjs"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: "readonly", URL: "readonly" } },
  },
  {
    // The status page's browser script: type-checked by tsconfig.page.json, not the Node project.
    files: ["src/status-page/browser/**/*.js"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      globals: Object.fromEntries(
        ["document", "window", "location", "fetch", "sessionStorage", "setTimeout", "clearTimeout"]
          .concat(["URLSearchParams", "TextDecoderStream", "Node", "HTMLElement"])
          .map((name) => [name, "readonly"]),
      ),
    },
  },
  // The allowed import directions between the folders of src/ (layers.js).
  ...Object.keys(layers).map((layer) => ({
    files: [isTopLevelFile(layer) ? `src/${layer}.ts` : `src/${layer}/**/*.ts`],
    rules: { "no-restricted-imports": ["error", { patterns: restrictedImportsOf(layer) }] },
  })),
);
