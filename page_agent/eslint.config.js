// eslint for the page agent: the recommended rules, the browser's and node's globals (src runs in pages,
// the extension's worlds and node's tests), and `chrome` where the extension's worlds read it.
import js from "@eslint/js"
import globals from "globals"

export default [
  js.configs.recommended,
  {
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: { ...globals.browser, ...globals.serviceworker, ...globals.node, chrome: "readonly" },
    },
    rules: {
      // `catch {}` and `catch (_) {}` are how the agent swallows a page's broken getters on purpose.
      "no-empty": ["error", { allowEmptyCatch: true }],
      // Control characters are matched on purpose: page text is made inert and bundles are checked for NULs.
      "no-control-regex": "off",
      // `const { type, session, ...rest } = frame` is how a frame's envelope is taken off: the siblings are meant.
      "no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true }],
    },
  },
  // The worlds (docs/architecture.md): only the page's world knows the page's code; transport, the extension's
  // isolated world and its service worker import transport and shared only; shared imports nothing.
  ...[
    ["src/transport/**", ["../page/*", "../isolated/*", "../worker/*"]],
    ["src/isolated/**", ["../page/*", "../worker/*", "../shared/*"]],
    ["src/worker/**", ["../page/*", "../isolated/*"]],
    ["src/shared/**", ["../page/*", "../transport/*", "../isolated/*", "../worker/*"]],
  ].map(([files, group]) => ({
    files: [files],
    rules: { "no-restricted-imports": ["error", { patterns: [{ group, message: "this world does not import that one (docs/architecture.md)" }] }] },
  })),
  { ignores: ["dist/**", "extension/**", "node_modules/**"] },
]
