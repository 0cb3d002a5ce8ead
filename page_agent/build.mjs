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

import { readFileSync, writeFileSync, mkdirSync, readdirSync, renameSync } from "node:fs"
import { gzipSync } from "node:zlib"
import { createHash } from "node:crypto"
import { dirname, join, posix } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const SRC = join(here, "src")
const DIST = join(here, "dist")
const EXT = join(here, "extension")
// extension file -> entry module in src/
const EXT_ENTRIES = { "agent.js": "page/ext_main", "bridge.js": "isolated/bridge_main", "sw.js": "worker/sw_main" }
// The eager part of the agent (page/eager.js and what it imports) runs at load; the rest (page/rest_main.js and
// what it imports beyond the eager part) is one more script: compiled into dist/agent.js and open.js behind the
// eager part, and on its own as dist/agent-rest.js (the relay's /agent-rest.js) and extension/rest.js.
const EAGER = "page/eager"
const REST = "page/rest_main"
const REST_PLACEHOLDER = "/*@WMCP_REST@*/ null"
const MODULES_PLACEHOLDER = "/*@WMCP_MODULES@*/ null"
const REST_HASH_PLACEHOLDER = '/*@WMCP_REST_HASH@*/ ""'
// The script tag's loader of the rest (the only module that names its URL, and so its hash).
const REST_SCRIPT = "page/rest_script"
// The extension's hand-written files (page_agent/extension/), never touched by the build.
const HAND_WRITTEN = ["manifest.json", "pair.html", "pair.js", "popup.html", "popup.js"]
const EXT_REST = "rest.js"
const PLACEHOLDER = "/*@WMCP_UPLINK@*/null"
const MODULE_MARKER = "/*@WMCP_MODULE@*/"
const EXPORTS_MARKER = "//@WMCP_EXPORTS@"
const ENTRY = "page/index"
// What every page (or frame) evaluates at load on each route that fetches the rest (the relay's /agent.js, the
// extension's document_start script), and the most its gzip may weigh: issue 47's 14 KB (webmcp-profiler's whole
// IIFE is 14,362 B). dist/agent.js and open.js carry the rest compiled in behind the same eager part (evaluated
// only when composed); their size is printed. 14 KiB: the eager part carries the MCP-B transports' early buffer
// (early.js watchTransport), without which a tools/call made before the rest arrives goes unmeasured. Raise this
// only with a reason in the commit.
const LOAD_SCRIPTS = ["dist/agent-eager.js", "extension/agent.js"]
export const GZIP_BUDGET = 14_336
const MAIN = "page/main"
// What the eager part runs at load, compiled with the script. Chromium compiles a script on the thread that
// streams it from the network, but a function inside it only the first time it runs, on the page's main thread:
// about half of what the eager part cost the main thread at load. The file-wide hint (`//# allFunctionsCalledOnLoad`)
// moved all of it off, for about 50 KB of a page's heap: it compiles every function, also the call path and the rarer
// registries no page runs at load. Instead the build writes the functions named here in V8's eager-compile form,
// a function in parentheses (its "PIFE" heuristic: compiled with the script that holds it): a top-level
// function `f` becomes `const f=(function (...){...})` at the top of its module (where a declaration is hoisted
// to), a function constant `const f = (...) => ...` (at any depth) keeps its place in parentheses, a class's method
// moves beside the class onto its prototype (non-enumerable, as a method is), and a class's constructor calls its
// body, moved to the module's top as `const newC=(function (...){...})`. Found with Chromium's precise coverage of a cold load
// of tests/bench/test_load_cost.py's page (docs/observer-cost.md, "At load"); a name that is no longer in its
// module fails the build. What is not named compiles the first time it runs, as before.
export const AT_LOAD = {
  "page/wrap": ["wrapExecute", "isInternal", "isWrapper"],
  "page/fingerprint": ["fnv1a32", "descriptorFingerprint"],
  "shared/util": ["utf8Length", "cap", "safely", "read", "tryDefine", "listenWhile", "want", "stamp"],
  "page/traps": ["watchRegistries", "isLate", "swap", "defineProperty"],
  "page/interceptor": [
    "describeTool", "scalars", "toolName", "profileOf", "weakRef", "mcpServerOf", "ok",
    "HostTable.constructor", "HostTable.has", "HostTable.get", "HostTable.set", "HostTable.entries", "HostTable.values",
    "Interceptor.constructor", "Interceptor.start", "Interceptor.hasDocumentHost", "Interceptor.sweep", "Interceptor.patch", "Interceptor.countActivations", "Interceptor.prepare",
    "Interceptor.record", "Interceptor.asForm", "Interceptor.registerTool", "Interceptor.pend", "Interceptor.accepted", "Interceptor.reconcile", "Interceptor.profileFor",
  ],
  "page/early": ["listen", "EarlyLog.constructor", "EarlyLog.keep", "EarlyLog.watchTransport"],
  "page/gate": ["queryParam", "decode", "gate", "searchOf"],
  "page/eager": ["restFrom", "whenIdle", "untilLoaded", "isWindow", "attach", "maybeAttach", "watchLateConfig", "facade"],
  "page/route": ["terminalRoute"],
  "page/rest_script": ["restLoader"],
  "shared/token": ["validToken", "takeTagToken"],
}

/** Module `name`'s text (imports and exports already rewritten) with its AT_LOAD functions in eager-compile form. */
export function compileEarly(name, text, wanted = AT_LOAD[name] || []) {
  if (!wanted.length) return text
  let lines = text.split("\n")
  const top = []
  const fail = (what) => {
    throw new Error(`${name}.js: ${what} (build.mjs AT_LOAD)`)
  }
  // Functions (top-level declarations) and function constants (at any depth, the name used once in the module);
  // the sources' formatting: a body closes on its own `}` line, at the indentation of its head.
  const isDecl = (fn) => (l) => l.startsWith(`function ${fn}(`) || l.startsWith(`async function ${fn}(`)
  const names = wanted.filter((w) => !w.includes("."))
  // Constants first, in place (one may sit inside a declaration that moves next).
  for (const fn of names.filter((fn) => !lines.some(isDecl(fn)))) {
    const heads = lines.flatMap((l, i) => (new RegExp(`^ *const ${fn} = (\\(.*=>|function ?\\()`).test(l) ? [i] : []))
    if (heads.length !== 1) fail(heads.length ? `${heads.length} constants named ${fn}` : `no function or function constant ${fn}`)
    const at = heads[0]
    const indent = lines[at].length - lines[at].trimStart().length
    const value = lines[at].slice(indent + `const ${fn} = `.length)
    if (lines[at].endsWith("{")) {
      const end = lines.indexOf(`${" ".repeat(indent)}}`, at)
      if (end < 0) fail(`${fn} has no closing } line`)
      lines[at] = `${" ".repeat(indent)}const ${fn} = (${value}`
      lines[end] += ")"
    } else if (!/[([,]$|=>$/.test(lines[at])) lines[at] = `${" ".repeat(indent)}const ${fn} = (${value})`
    else fail(`${fn}: a one-line constant, or a head ending its line with {`)
  }
  for (const fn of names.filter((fn) => lines.some(isDecl(fn)))) {
    const decl = lines.findIndex(isDecl(fn))
    if (!lines[decl].endsWith("{")) fail(`function ${fn}'s head must end its line with {`)
    const end = lines.indexOf("}", decl)
    if (end < 0) fail(`function ${fn} has no closing } line`)
    const body = lines.slice(decl, end + 1)
    // Anonymous in parentheses: the constant names it (f.name, stack frames), and the bytes stay under budget.
    body[0] = `const ${fn} = (${body[0].replace(`function ${fn}(`, "function (")}`
    body[body.length - 1] = "})"
    top.push(...body)
    lines.splice(decl, end + 1 - decl)
  }
  // Methods, by class: each out of its class and onto its prototype, right after the class.
  const byClass = new Map()
  for (const w of wanted.filter((w) => w.includes("."))) {
    const [cls, method] = w.split(".")
    if (!byClass.has(cls)) byClass.set(cls, [])
    byClass.get(cls).push(method)
  }
  for (const [cls, methods] of byClass) {
    const start = lines.findIndex((l) => l === `class ${cls} {`)
    if (start < 0) fail(`no class ${cls} (its head on a line of its own)`)
    const entries = []
    for (const method of methods) {
      const end = lines.indexOf("}", start)
      if (method === "constructor") {
        // A constructor stays (a class needs one): its body becomes a function it calls, compiled with the script.
        const head = lines.findIndex((l, i) => i > start && i < end && l.startsWith("  constructor("))
        if (head < 0 || !lines[head].endsWith(" {")) fail(`no constructor in class ${cls} with its head ending its line with {`)
        const close = lines.indexOf("  }", head)
        const body = lines.slice(head + 1, close)
        if (body.some((l) => /\bsuper\b|\bnew\.target\b/.test(l))) fail(`${cls}'s constructor reads super or new.target: it must stay whole`)
        top.push(`const new${cls} = (function ${lines[head].slice(2 + "constructor".length)}`, ...body, "})")
        lines.splice(head, close + 1 - head, "  constructor() {", `    new${cls}.apply(this, arguments)`, "  }")
        continue
      }
      const head = lines.findIndex((l, i) => i > start && i < end && l.startsWith(`  ${method}(`))
      if (head < 0) fail(`no method ${cls}.${method}`)
      if (!lines[head].endsWith(" {")) fail(`${cls}.${method}'s head must end its line with {`)
      const close = lines.indexOf("  }", head)
      const body = lines.slice(head + 1, close)
      if (body.some((l) => /\bsuper\b/.test(l))) fail(`${cls}.${method} reads super: it must stay a method`)
      entries.push(`${method}: (function ${lines[head].slice(2 + method.length)}`, ...body, "}),")
      lines.splice(head, close + 1 - head)
    }
    const end = lines.indexOf("}", start)
    lines.splice(end + 1, 0, `for (const [k, value] of Object.entries({`, ...entries, `})) Object.defineProperty(${cls}.prototype, k, { value, writable: true, configurable: true })`)
  }
  return [...top, ...lines].join("\n")
}
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
  return { name, text: strip(compileEarly(name, text)).trimEnd(), deps, exported }
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

/**
 * One module as the bundle evaluates it: into the module table, once (a rest joining an eager part skips what it
 * has). A statement of its own, its function not the value of an assignment: V8 names every anonymous function
 * inside after the assignment's target too (`__m.page/eager.api.<computed>`), a chain of strings kept for each,
 * about 2 KB of a page's heap at load.
 */
function moduleText(m, joining = false) {
  const id = JSON.stringify(m.name)
  return `${joining ? `if(!__m[${id}])` : ""}(function(){\n${m.text}\n__m[${id}]={${m.exported.join(",")}}})();`
}

/** The ids of the eager part's modules (every entry that runs in a page carries them). */
function eagerIds() {
  return new Set(order(EAGER).map((m) => m.name))
}

/** The rest's modules: rest_main.js and what it imports that the eager part does not carry. */
function restModules() {
  const eager = eagerIds()
  return order(REST).filter((m) => !eager.has(m.name))
}

/** The rest as a function of the eager part's module table, returning rest_main.js's exports. */
function restFunction() {
  const parts = restModules().map((m) => moduleText(m, true))
  return `function (__m) {\n${parts.join("\n\n")}\nreturn __m[${JSON.stringify(REST)}];\n}`
}

/** The rest on its own (dist/agent-rest.js, extension/rest.js): it hands itself to the eager part (eager.js `receive`). */
function restScript(version) {
  const head = `// wmcp-top page agent ${version}, the rest (page/eager.js loads it): built by page_agent/build.mjs from page_agent/src/. Do not edit.\n`
  return `${head}(function () {\n"use strict";\nconst hand = globalThis[Symbol.for("wmcp-top/rest")];\nif (typeof hand === "function") hand(${ascii(restFunction())});\n})();\n`
}

/**
 * The modules of `entry` (the entry's own exports joined to its function's result). `inline`: the rest compiled in
 * (`__restOnce` composes it into the table); else only the eager part, the rest fetched or handed over. `hash`: the
 * rest script's content hash, for the URL the eager part asks for.
 */
function body(entry, { inline, hash }) {
  const mods = order(entry)
  const parts = []
  for (const m of mods) {
    if (m.name === entry) continue
    let text = m.text
    const placeholders =
      m.name === EAGER ? [[REST_PLACEHOLDER, inline ? "__restOnce" : "null"], [MODULES_PLACEHOLDER, "__m"]] : m.name === REST_SCRIPT ? [[REST_HASH_PLACEHOLDER, JSON.stringify(hash)]] : []
    for (const [ph, value] of placeholders) {
      if (text.split(ph).length !== 2) throw new Error(`${m.name}.js: the placeholder ${ph} must occur exactly once`)
      text = text.replace(ph, value)
    }
    parts.push(moduleText({ ...m, text }))
  }
  const main = mods.find((m) => m.name === entry)
  parts.push(moduleText(main))
  const pre = inline ? `const __rest = ${restFunction()};\nlet __restDone = null;\nconst __restOnce = () => __restDone || (__restDone = __rest(__m));\n` : ""
  return { code: pre + parts.join("\n\n"), exported: main.exported }
}

// Comments and indentation go (the sources keep them; the scripts a page parses need not): a scanner that knows
// JavaScript's strings, template literals (their text and their `${}`), regular expression literals and comments,
// and copies every other character, dropping blanks no token needs. A line break stays where it may end a
// statement (no statement is joined to the next): it goes only after `{ ( [ , ;` and before `}`, where no
// automatic semicolon depends on it. A template's or a string's text is copied as it is, and a comment that starts
// `/*@` is a build marker and stays. The JS tests run the built scripts (dist.test.mjs), and the browser suites run
// nothing else.
const JOINS = new Set(["{", "(", "[", ",", ";", "\n"])
const REGEX_AFTER = new Set(["", "(", ",", "=", ":", "[", "!", "&", "|", "?", "{", "}", ";", "+", "-", "*", "%", "<", ">", "~", "^"])
const REGEX_KEYWORDS = /(?:^|[^\w$])(?:return|typeof|case|do|else|in|of|new|delete|void|throw|instanceof|yield|await)$/

/** Must the characters `a` and `b`, with blanks between them, keep one? (Two words, `+ +`, `- -`, `1 .x`, and any `/`.) */
const needsSpace = (a, b) => (/[\w$]/.test(a) && /[\w$]/.test(b)) || (a === b && (a === "+" || a === "-")) || a === "/" || b === "/" || (b === "." && /\d/.test(a))

export function strip(src) {
  let out = ""
  let i = 0
  const n = src.length
  const braces = [] // for each open `${` of a template: the code's brace depth when it opened
  let depth = 0
  let last = "" // the last significant character written (not whitespace)
  const put = (text) => {
    out += text
    const t = text.trimEnd()
    if (t) last = t[t.length - 1]
  }
  const template = () => {
    // i is just past a backtick or a `}` closing a substitution: copy the text up to the end or the next `${`
    let j = i
    for (;;) {
      if (j >= n) throw new Error("unterminated template literal")
      const c = src[j]
      if (c === "\\") j += 2
      else if (c === "`") {
        put(src.slice(i, j + 1))
        i = j + 1
        return
      } else if (c === "$" && src[j + 1] === "{") {
        put(src.slice(i, j + 2))
        i = j + 2
        braces.push(depth)
        return
      } else j++
    }
  }
  while (i < n) {
    const c = src[i]
    if (c === "\n") {
      i++
      while (i < n && (src[i] === " " || src[i] === "\t")) i++
      if (!JOINS.has(out[out.length - 1] ?? "\n") && src[i] !== "}") out += "\n"
    } else if (c === " " || c === "\t" || c === "\r") {
      let j = i
      while (j < n && (src[j] === " " || src[j] === "\t" || src[j] === "\r")) j++
      if (j < n && src[j] !== "\n" && out && !out.endsWith("\n") && needsSpace(out[out.length - 1], src[j])) out += " "
      i = j
    } else if (c === '"' || c === "'") {
      let j = i + 1
      while (src[j] !== c) {
        if (j >= n || src[j] === "\n") throw new Error("unterminated string literal")
        j += src[j] === "\\" ? 2 : 1
      }
      put(src.slice(i, j + 1))
      i = j + 1
    } else if (c === "`") {
      put("`")
      i++
      template()
    } else if (c === "{") {
      depth++
      put(c)
      i++
    } else if (c === "}") {
      if (braces.length && braces[braces.length - 1] === depth) {
        braces.pop()
        put("}")
        i++
        template()
      } else {
        depth--
        put(c)
        i++
      }
    } else if (c === "/" && src[i + 1] === "/") {
      while (i < n && src[i] !== "\n") i++
      out = out.replace(/ $/, "")
    } else if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2)
      if (end < 0) throw new Error("unterminated comment")
      if (src[i + 2] === "@") put(src.slice(i, end + 2))
      else if (src.slice(i, end).includes("\n") && !out.endsWith("\n")) out += "\n"
      i = end + 2
    } else if (c === "/" && (REGEX_AFTER.has(last) || REGEX_KEYWORDS.test(out.trimEnd()))) {
      let j = i + 1
      let cls = false
      while (cls || src[j] !== "/") {
        if (j >= n || src[j] === "\n") throw new Error("unterminated regular expression literal")
        if (src[j] === "\\") j++
        else if (src[j] === "[") cls = true
        else if (src[j] === "]") cls = false
        j++
      }
      j++
      while (j < n && /[a-z]/.test(src[j])) j++
      put(src.slice(i, j))
      i = j
    } else {
      let j = i + 1
      if (/[\w$]/.test(c)) while (j < n && /[\w$]/.test(src[j])) j++
      put(src.slice(i, j))
      i = j
    }
  }
  return out.replace(/^\n+/, "")
}

// ASCII only: a page without a charset must not garble the agent's strings (the relay may serve it raw).
const ascii = (text) => text.replace(/[^\x00-\x7f]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** The content hash the relay gives a script it serves as is (8 hex of SHA-256, relay_bridge/relay/assets.py). */
const digest = (text) => createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex").slice(0, 8)

/** The extension's built scripts, by name relative to page_agent/extension/. */
function extension(version, rest, hash) {
  const manifest = JSON.parse(readFileSync(join(EXT, "manifest.json"), "utf8")) // a broken manifest fails the build, not the browser
  if (manifest.version !== version) throw new Error(`extension/manifest.json says version ${manifest.version}; package.json says ${version}`)
  const out = {}
  for (const [file, entry] of Object.entries(EXT_ENTRIES)) {
    const head = `// wmcp-top extension ${version}: ${file} built by page_agent/build.mjs from page_agent/src/${entry}.js. Do not edit.\n`
    out[file] = `${head}(function () {\n"use strict";\nconst __m = {};\n${ascii(body(entry, { inline: false, hash }).code)}\n})();\n`
  }
  out[EXT_REST] = rest
  return out
}

/** The `open` lane's agent: no relay address, no token; its socket is a binding to Python (src/transport/binding.js). */
function openAgent(version, hash) {
  const head = `// wmcp-top page agent ${version}, the \`open\` lane's: built by page_agent/build.mjs from page_agent/src/page/open_main.js. Do not edit.\n`
  const text = `${head}(function () {\n"use strict";\nconst __m = {};\n${ascii(body(OPEN, { inline: true, hash }).code)}\n})();\n`
  if (/[^\x00-\x7f]/.test(text)) throw new Error("open.js: non-ASCII text survived the build")
  return text
}

export function build() {
  const version = JSON.parse(readFileSync(join(here, "package.json"), "utf8")).version
  const rest = restScript(version)
  const hash = digest(rest)
  const names = [...load(ENTRY).exported, ...load(MAIN).exported].map((e) => e.split(":")[0].trim())
  // dist/agent.js's result (the module form's exports): read through getters, so the classic script composes
  // nothing for them; the module's `export const {...}` reads them, and so compiles the rest in at import.
  const getters = names.map((n) => {
    const from = load(MAIN).exported.some((e) => e.split(":")[0].trim() === n) ? `__m[${JSON.stringify(MAIN)}]` : `(__restOnce(), __m[${JSON.stringify(ENTRY)}])`
    return `${JSON.stringify(n)}: { get: () => ${from}[${JSON.stringify(n)}], enumerable: true }`
  })
  const classic = (inline) => {
    const head = inline
      ? `// wmcp-top page agent ${version}: built by page_agent/build.mjs from page_agent/src/. Do not edit.\n// MIT. No dependencies. Measures WebMCP tool calls; never keeps or sends inputs or results.\n`
      : `// wmcp-top page agent ${version}, eager part. MIT.\n`
    const code = ascii(body(MAIN, { inline, hash }).code)
    if (!inline) return `${head}(function () {\n"use strict";\nconst __m = {};\n${code}\n})();\n`
    return `${head}${MODULE_MARKER}(function () {\n"use strict";\nconst __m = {};\n${code}\nreturn Object.defineProperties({}, {\n${getters.join(",\n")}\n});\n})();\n${EXPORTS_MARKER} ${names.join(",")}\n`
  }
  const js = classic(true)
  const eager = classic(false)
  for (const [file, text] of [["agent.js", js], ["agent-eager.js", eager]]) {
    if (/[^\x00-\x7f]/.test(text)) throw new Error(`${file}: non-ASCII text survived the build`)
    const count = text.split(PLACEHOLDER).length - 1
    if (count !== 1) throw new Error(`${file}: the relay placeholder ${PLACEHOLDER} occurs ${count} times; it must occur exactly once`)
  }
  if (rest.includes(PLACEHOLDER)) throw new Error("agent-rest.js: the relay placeholder belongs to the eager part")
  const out = { "dist/agent.js": js, "dist/agent-eager.js": eager, "dist/agent-rest.js": rest, "dist/open.js": openAgent(version, hash) }
  for (const [file, text] of Object.entries(extension(version, rest, hash))) out[`extension/${file}`] = text
  return out
}

/**
 * Writes page_agent/`file` unless it holds `text` already, through a file renamed over it: a build beside a
 * reader (the relay serving the agent, a wheel packing the folder, another build) never shows it half written.
 * @param {string} file
 * @param {string} text
 */
function put(file, text) {
  const path = join(here, file)
  try {
    if (readFileSync(path, "utf8") === text) return
  } catch {
    // not built yet
  }
  const tmp = join(here, `.build-${process.pid}-${file.replace("/", "-")}`) // outside the folders the wheel packs
  writeFileSync(tmp, text)
  renameSync(tmp, path)
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
  const known = new Set([...Object.keys(EXT_ENTRIES), EXT_REST, ...HAND_WRITTEN])
  const stray = readdirSync(EXT).filter((f) => !known.has(f))
  if (stray.length) {
    console.error(`page_agent build failed: page_agent/extension/ holds ${stray.join(", ")}, neither built nor hand-written`)
    process.exit(2)
  }
  mkdirSync(DIST, { recursive: true })
  mkdirSync(EXT, { recursive: true })
  for (const [file, text] of Object.entries(out)) put(file, text)
  console.log(`wrote ${Object.keys(out).map((f) => `page_agent/${f} (${out[f].length} bytes)`).join(", ")}`)
  const sizes = loadSizes(out)
  const over = Object.entries(sizes).filter(([, n]) => n > GZIP_BUDGET)
  console.log(`gzip at load: ${Object.entries(sizes).map(([f, n]) => `page_agent/${f} ${n} B`).join(", ")} (budget ${GZIP_BUDGET} B)`)
  const later = ["dist/agent-rest.js", "dist/agent.js", "dist/open.js"].map((f) => `page_agent/${f} ${gzipSync(out[f], { level: 9 }).length} B`)
  console.log(`gzip of the rest and of the scripts with it compiled in: ${later.join(", ")}`)
  if (process.argv.includes("--budget") && over.length) {
    console.error(`page_agent over its size budget: ${over.map(([f, n]) => `page_agent/${f} is ${n} B gzip`).join(", ")}, more than ${GZIP_BUDGET} B`)
    process.exit(1)
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main()

