// The built files are exactly the build's outputs: git ignores each of them (they are built when the package is,
// never committed), the sdist carries each (pyproject.toml's `artifacts`), and nothing hand-written is built (the
// extension's manifest, popup and pairing page exist once).
import { test } from "node:test"
import assert from "node:assert/strict"
import { execFileSync } from "node:child_process"
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "../build.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const built = Object.keys(build()).map((f) => `page_agent/${f}`).sort()

test("git ignores every file the build writes, and no hand-written one", () => {
  const ignored = readFileSync(join(root, ".gitignore"), "utf8")
    .split("\n")
    .filter((line) => line.startsWith("/page_agent/"))
    .map((line) => line.slice(1))
  const covers = (f) => ignored.some((p) => (p.endsWith("/") ? f.startsWith(p) : f === p))
  assert.deepEqual(built.filter((f) => !covers(f)), [])
  for (const f of ["manifest.json", "pair.html", "pair.js", "popup.html", "popup.js"]) assert.ok(!covers(`page_agent/extension/${f}`), f)
  assert.ok(!built.some((f) => /manifest\.json|popup|pair\./.test(f)), "the hand-written extension files are not built")
})

test("the sdist carries every file the build writes (pyproject.toml's artifacts)", () => {
  const toml = readFileSync(join(root, "pyproject.toml"), "utf8")
  const line = toml.split("\n").find((l) => l.startsWith("artifacts = "))
  const globs = JSON.parse(line.slice("artifacts = ".length))
  const carried = (f) => globs.some((g) => (g.endsWith("/*.js") ? dirname(f) === g.slice(0, -5) && f.endsWith(".js") : f === g))
  assert.deepEqual(built.filter((f) => !carried(f)), [])
})

test("a build rewrites only what changed, each file whole: what is current keeps its time, no partial file is left", () => {
  const run = () => execFileSync(process.execPath, [join(root, "page_agent", "build.mjs")], { cwd: root, encoding: "utf8" })
  run()
  const times = Object.fromEntries(built.map((f) => [f, statSync(join(root, f)).mtimeMs]))
  const stale = join(root, "page_agent/dist/open.js")
  const want = readFileSync(stale, "utf8")
  writeFileSync(stale, "stale")
  run()
  assert.equal(readFileSync(stale, "utf8"), want)
  assert.deepEqual(built.filter((f) => f !== "page_agent/dist/open.js" && statSync(join(root, f)).mtimeMs !== times[f]), [])
  assert.deepEqual(readdirSync(join(root, "page_agent")).filter((f) => f.startsWith(".build-")), [])
})
