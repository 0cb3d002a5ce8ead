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
      "no-unused-vars": ["error", { argsIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
  { ignores: ["dist/**", "extension/**", "node_modules/**"] },
]
