#!/usr/bin/env node
// Build page_agent/dist/agent.js (one classic script, an IIFE), dist/open.js and the extension's three scripts
// (page_agent/extension/{agent,bridge,sw}.js) from the ES modules in src/, with no dependencies: each module
// becomes a function scope, its imports become reads of the modules before it. A module's id is its path in src/
// without `.js` (`page/collector`); imports are relative (`./wrap.js`, `../shared/util.js`). These five files are
// built, never committed (.gitignore): hatch_build.py runs this when a wheel, an editable wheel or an sdist is
// built, and ./scripts/check runs it. The extension's other files (manifest, popup, pairing page) are hand-written
// and live once, in page_agent/extension/.
// The relay serves the same file as an ES module at /agent.mjs (relay_bridge/relay/assets.py): it fills the
// `/*@WMCP_MODULE@*/` marker with a binding for the IIFE's result and appends the exports named on the
// `//@WMCP_EXPORTS@` line.
// Every build prints the gzip size of each script a page evaluates at load (gzip level 9, as the relay serves
// it); `--budget` exits 1 when one is over GZIP_BUDGET.
//
//   node page_agent/build.mjs            write dist/ and the extension's scripts
//   node page_agent/build.mjs --budget   the same, then fail past the size budget (./scripts/check)

import { readFileSync, writeFileSync, mkdirSync, readdirSync } from "node:fs"
import { gzipSync } from "node:zlib"
import { dirname, join, posix } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const SRC = join(here, "src")
const DIST = join(here, "dist")
const EXT = join(here, "extension")
// extension file -> entry module in src/
const EXT_ENTRIES = { "agent.js": "page/ext_main", "bridge.js": "isolated/bridge_main", "sw.js": "worker/sw_main" }
// The extension's hand-written files (page_agent/extension/), never touched by the build.
const HAND_WRITTEN = ["manifest.json", "pair.html", "pair.js", "popup.html", "popup.js"]
const PLACEHOLDER = "/*@WMCP_UPLINK@*/null"
const MODULE_MARKER = "/*@WMCP_MODULE@*/"
const EXPORTS_MARKER = "//@WMCP_EXPORTS@"
const ENTRY = "page/index"
// What every page (or frame) evaluates at load on each route, and the most its gzip may weigh: set just above
// the 2026-12-05 build with the transport observer (102,819 B for dist/agent.js). Issue 47's eager split aims at 14 KB; raise this only with
// a reason in the commit.
const LOAD_SCRIPTS = ["dist/agent.js", "dist/open.js", "extension/agent.js"]
export const GZIP_BUDGET = 103_500
const MAIN = "page/main"
const OPEN = "page/open_main"

const IMPORT_RE = /^import\s*\{([^}]*)\}\s*from\s*"(\.{1,2}\/[\w/.-]+)\.js"\s*;?\s*$/gm
const REEXPORT_RE = /^export\s*\{([^}]*)\}\s*from\s*"(\.{1,2}\/[\w/.-]+)\.js"\s*;?\s*$/gm

/** The id of the module `spec` names, imported from module `from` (both ids; a spec is relative). */
function resolve(from, spec) {
  const id = posix.normalize(posix.join(posix.dirname(from), spec))
  if (id.startsWith("..")) throw new Error(`${from}.js: ${spec}.js is outside src/`)
  return id
}
const NS_IMPORT_RE = /^import\s*\*\s*as\s+([A-Za-z_$][\w$]*)\s+from\s*"(\.{1,2}\/[\w/.-]+)\.js"\s*;?\s*$/gm
const EXPORT_LIST_RE = /^export\s*\{([^}]*)\}\s*;?\s*$/gm
const EXPORT_DECL_RE = /^export\s+(async\s+function\*?|function\*?|class|const|let)\s+([A-Za-z_$][\w$]*)/gm

function names(list) {
  return list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const m = s.split(/\s+as\s+/)
      return { from: m[0].trim(), to: (m[1] || m[0]).trim() }
    })
}

function load(name) {
  let text = readFileSync(join(SRC, `${name}.js`), "utf8")
  const deps = []
  const exported = []
  text = text.replace(IMPORT_RE, (_, list, spec) => {
    const dep = resolve(name, spec)
    deps.push(dep)
    return `const { ${names(list).map((n) => (n.from === n.to ? n.to : `${n.from}: ${n.to}`)).join(", ")} } = __m[${JSON.stringify(dep)}];`
  })
  text = text.replace(NS_IMPORT_RE, (_, ns, spec) => {
    const dep = resolve(name, spec)
    deps.push(dep)
    return `const ${ns} = __m[${JSON.stringify(dep)}];`
  })
  text = text.replace(REEXPORT_RE, (_, list, spec) => {
    const dep = resolve(name, spec)
    deps.push(dep)
    const ns = names(list)
    for (const n of ns) exported.push(n.to)
    return `const { ${ns.map((n) => (n.from === n.to ? n.to : `${n.from}: ${n.to}`)).join(", ")} } = __m[${JSON.stringify(dep)}];`
  })
  text = text.replace(EXPORT_LIST_RE, (_, list) => {
    for (const n of names(list)) exported.push(n.from === n.to ? n.to : `${n.to}: ${n.from}`)
    return ""
  })
  text = text.replace(EXPORT_DECL_RE, (_, kind, id) => {
    exported.push(id)
    return `${kind} ${id}`
  })
  if (/^(import|export)[\s{]/m.test(text)) throw new Error(`${name}.js: an import/export form the builder does not know`)
  return { name, text: text.trimEnd(), deps, exported }
}

function order(entry) {
  const seen = new Map()
  const out = []
  const visit = (name, path) => {
    if (seen.get(name) === "done") return
    if (seen.get(name) === "active") throw new Error(`import cycle: ${[...path, name].join(" -> ")}`)
    seen.set(name, "active")
    const mod = load(name)
    for (const d of mod.deps) visit(d, [...path, name])
    seen.set(name, "done")
    out.push(mod)
  }
  visit(entry, [])
  return out
}

function body(entry = MAIN) {
  const mods = order(entry)
  const parts = []
  for (const m of mods) {
    if (m.name === entry) continue
    parts.push(`// ---- ${m.name}.js ----\n__m[${JSON.stringify(m.name)}] = (function () {\n${m.text}\nreturn { ${m.exported.join(", ")} };\n})();`)
  }
  const main = mods.find((m) => m.name === entry)
  // An entry's own exports (page/main.js's start) join the module form's, after index.js's.
  const own = main.exported.length ? `\nreturn { ${main.exported.join(", ")} };` : ""
  parts.push(`// ---- ${entry}.js ----\n__m[${JSON.stringify(entry)}] = (function () {\n${main.text}${own}\n})();`)
  const index = mods.find((m) => m.name === ENTRY)
  return { code: parts.join("\n\n"), exported: [...(index ? index.exported : []), ...main.exported] }
}

// ASCII only: a page without a charset must not garble the agent's strings (the relay may serve it raw).
const ascii = (text) => text.replace(/[^\x00-\x7f]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** The extension's built scripts, by name relative to page_agent/extension/. */
function extension(version) {
  const manifest = JSON.parse(readFileSync(join(EXT, "manifest.json"), "utf8")) // a broken manifest fails the build, not the browser
  if (manifest.version !== version) throw new Error(`extension/manifest.json says version ${manifest.version}; package.json says ${version}`)
  const out = {}
  for (const [file, entry] of Object.entries(EXT_ENTRIES)) {
    const head = `// wmcp-top extension ${version}: ${file} built by page_agent/build.mjs from page_agent/src/${entry}.js. Do not edit.\n`
    out[file] = `${head}(function () {\n"use strict";\nconst __m = {};\n${ascii(body(entry).code)}\n})();\n`
  }
  return out
}

/** The `open` lane's agent: no relay address, no token; its socket is a binding to Python (src/transport/binding.js). */
function openAgent(version) {
  const head = `// wmcp-top page agent ${version}, the \`open\` lane's: built by page_agent/build.mjs from page_agent/src/page/open_main.js. Do not edit.\n`
  const text = `${head}(function () {\n"use strict";\nconst __m = {};\n${ascii(body(OPEN).code)}\n})();\n`
  if (/[^\x00-\x7f]/.test(text)) throw new Error("open.js: non-ASCII text survived the build")
  return text
}

export function build() {
  const version = JSON.parse(readFileSync(join(here, "package.json"), "utf8")).version
  const { code: raw, exported } = body()
  const code = ascii(raw)
  const head = `// wmcp-top page agent ${version}: built by page_agent/build.mjs from page_agent/src/. Do not edit.\n// MIT. No dependencies. Measures WebMCP tool calls; never keeps or sends inputs or results.\n`
  const names = exported.map((e) => e.split(":")[0].trim())
  const js =
    `${head}${MODULE_MARKER}(function () {\n"use strict";\nconst __m = {};\n${code}\nreturn Object.assign({}, __m[${JSON.stringify(ENTRY)}], __m[${JSON.stringify(MAIN)}]);\n})();\n` +
    `${EXPORTS_MARKER} ${names.join(",")}\n`
  for (const [file, text] of [["agent.js", js]]) {
    if (/[^\x00-\x7f]/.test(text)) throw new Error(`${file}: non-ASCII text survived the build`)
    const count = text.split(PLACEHOLDER).length - 1
    if (count !== 1) throw new Error(`${file}: the relay placeholder ${PLACEHOLDER} occurs ${count} times; it must occur exactly once`)
  }
  const out = { "dist/agent.js": js, "dist/open.js": openAgent(version) }
  for (const [file, text] of Object.entries(extension(version))) out[`extension/${file}`] = text
  return out
}

/** The gzip size of each script a page evaluates at load (`out` as build() returns it). */
export function loadSizes(out) {
  return Object.fromEntries(LOAD_SCRIPTS.map((f) => [f, gzipSync(out[f], { level: 9 }).length]))
}

function main() {
  let out
  try {
    out = build()
  } catch (e) {
    console.error(`page_agent build failed: ${e.message}`)
    process.exit(2)
  }
  // A script left in extension/ that neither the build makes nor the manifest names would ship stale.
  const known = new Set([...Object.keys(EXT_ENTRIES), ...HAND_WRITTEN])
  const stray = readdirSync(EXT).filter((f) => !known.has(f))
  if (stray.length) {
    console.error(`page_agent build failed: page_agent/extension/ holds ${stray.join(", ")}, neither built nor hand-written`)
    process.exit(2)
  }
  mkdirSync(DIST, { recursive: true })
  mkdirSync(EXT, { recursive: true })
  for (const [file, text] of Object.entries(out)) writeFileSync(join(here, file), text)
  console.log(`wrote ${Object.keys(out).map((f) => `page_agent/${f} (${out[f].length} bytes)`).join(", ")}`)
  const sizes = loadSizes(out)
  const over = Object.entries(sizes).filter(([, n]) => n > GZIP_BUDGET)
  console.log(`gzip at load: ${Object.entries(sizes).map(([f, n]) => `page_agent/${f} ${n} B`).join(", ")} (budget ${GZIP_BUDGET} B)`)
  if (process.argv.includes("--budget") && over.length) {
    console.error(`page_agent over its size budget: ${over.map(([f, n]) => `page_agent/${f} is ${n} B gzip`).join(", ")}, more than ${GZIP_BUDGET} B`)
    process.exit(1)
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main()

