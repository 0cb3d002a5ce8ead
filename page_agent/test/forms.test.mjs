// Declarative (form) tools, piece by piece: what a form's answer weighs, the lint facts of its controls (no
// values), and the values as filled (for inputBytes). The whole flow runs in Chromium: tests/browser/test_forms.py.
import { test } from "node:test"
import assert from "node:assert/strict"
import { resultFacts, resultText } from "../src/page/measure.js"
import { formFacts, filledValues, elementLabel } from "../src/page/forms.js"

test("a form's answer: \"\" stays empty, an array of strings is validation messages (an error)", () => {
  assert.equal(resultFacts("", "form").resultBytes, 0)
  assert.equal(resultFacts("", "form").substituted, false)
  assert.equal(resultText("", "form"), "")
  assert.equal(resultFacts("", "chromium").resultBytes, "Operation succeeded".length)
  const v = resultFacts(["Name is required", "Date é passed"], "form")
  assert.equal(v.isError, true)
  assert.equal(v.validation, 2)
  assert.equal(v.resultBytes, Buffer.byteLength(JSON.stringify(["Name is required", "Date é passed"])))
  assert.equal(resultFacts([1, "a"], "form").isError, false, "only an array of strings is validation")
  assert.equal(resultFacts([], "form").isError, false)
  assert.equal(resultFacts({ booked: true }, "form").resultBytes, '{"booked":true}'.length)
  assert.equal(resultFacts(["x"], "mcp-b-form").isError, true)
})

/** A control as the DOM shows it, enough for the lint facts. */
function control(tag, attrs, extra = {}) {
  return {
    tagName: tag,
    type: attrs.type || (tag === "INPUT" ? "text" : tag.toLowerCase()),
    id: attrs.id || "",
    required: "required" in attrs,
    labels: extra.labels || [],
    value: extra.value ?? "",
    checked: !!extra.checked,
    getAttribute: (k) => (k in attrs ? attrs[k] : null),
  }
}

function form(controls, attrs = {}) {
  const named = new Map(controls.filter((c) => c.getAttribute("name")).map((c) => [c.getAttribute("name"), c]))
  return {
    elements: Object.assign([...controls], { namedItem: (n) => named.get(n) || null }),
    hasAttribute: (k) => k in attrs,
    getAttribute: (k) => (k in attrs ? attrs[k] : null),
  }
}

test("the lint facts of a form's controls name elements, never values", () => {
  const f = form(
    [
      control("INPUT", { name: "guests", type: "number", id: "g", toolparamdescription: "Party size", required: "" }, { labels: [{}], value: "SECRET-1" }),
      control("INPUT", { name: "note" }, { value: "SECRET-2" }),
      control("INPUT", { required: "" }),
      control("BUTTON", { type: "submit" }),
      control("INPUT", { name: "token", type: "hidden" }, { value: "SECRET-3" }),
    ],
    { toolautosubmit: "" },
  )
  const facts = formFacts(f, { type: "object", properties: { guests: { type: "number" }, note: { type: "string" } } })
  assert.equal(facts.autosubmit, true)
  assert.deepEqual(
    facts.fields.map((x) => [x.param, x.element, x.inSchema, x.described, x.labeled, x.required]),
    [
      ["guests", "input[type=number][name=guests]#g", true, true, true, true],
      ["note", "input[type=text][name=note]", true, false, false, false],
      [null, "input[type=text]", false, false, false, true],
      ["token", "input[type=hidden][name=token]", false, false, true, false],
    ],
  )
  assert.ok(!JSON.stringify(facts).includes("SECRET"))
  assert.equal(elementLabel(control("SELECT", { name: "area" })), "select[name=area]")
})

test("the values as filled are typed by the schema (for inputBytes), empty fields left out", () => {
  const f = form([control("INPUT", { name: "guests", type: "number" }, { value: "3" }), control("INPUT", { name: "name" }, { value: "Ann" }), control("INPUT", { name: "note" })])
  const schema = { type: "object", properties: { guests: { type: "number" }, name: { type: "string" }, note: { type: "string" } } }
  assert.deepEqual(filledValues(f, schema), { guests: 3, name: "Ann" })
})
