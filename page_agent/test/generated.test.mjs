// The generated files are exactly the build's outputs, each said to be generated in .gitattributes, and
// nothing hand-written is built (the extension's manifest, popup and pairing page exist once).
import { test } from "node:test"
import assert from "node:assert/strict"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "../build.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

test("every file the build writes is marked linguist-generated, and only those", () => {
  const built = Object.keys(build()).map((f) => `page_agent/${f}`).sort()
  const marked = readFileSync(join(root, ".gitattributes"), "utf8")
    .split("\n")
    .filter((line) => /\blinguist-generated=true\b/.test(line))
    .map((line) => line.split(/\s+/)[0])
    .sort()
  assert.deepEqual(marked, built)
  assert.ok(!built.some((f) => /manifest\.json|popup|pair\./.test(f)), "the hand-written extension files are not built")
})
