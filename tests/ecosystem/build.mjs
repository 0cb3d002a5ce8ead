// Build the ecosystem pages' scripts with esbuild from the pinned packages: node build.mjs <outdir>
import { build } from "esbuild"
import { fileURLToPath } from "node:url"
import path from "node:path"

const here = path.dirname(fileURLToPath(import.meta.url))
const out = process.argv[2]
if (!out) throw new Error("usage: node build.mjs <outdir>")
const entries = ["global", "polyfill", "page-tools", "client", "react-hooks", "react-usewebmcp", "react-output", "ts-sdk"]
await build({
  entryPoints: Object.fromEntries(entries.map((e) => [e, path.join(here, "src", e + (e.startsWith("react") ? ".jsx" : ".js"))])),
  outdir: out,
  bundle: true,
  format: "iife",
  target: "chrome120",
  define: { "process.env.NODE_ENV": '"production"' },
  minify: true, // less for each page to parse: the suite loads these bundles some 80 times
  logLevel: "error",
  absWorkingDir: here,
})
