// Declarative (form) tools: `<form toolname tooldescription>` is a tool too. The host lists it in getTools()
// with a schema it generates from the form; executeTool fills the form and fires `submit` with
// `agentInvoked === true`; the page answers with SubmitEvent.respondWith(value | promise). Measured here:
//
//   registration  a form the host lists, reported with the host's generated descriptor (kind "form") and, per
//                 control, which element it is and what the descriptor lint needs (described, labeled, ...)
//   a call        from the agent-invoked `submit` (it precedes `toolactivated` in Chromium 156) to the settling
//                 of what respondWith was given; a form without `toolautosubmit` is filled at `toolactivated`
//                 and then waits for the user's submit: that wait is its own state (a `start` marked waiting)
//                 and is kept apart as `waitedMs`, not tool time
//   refusals      a `toolactivated` for an autosubmit form with no submit after it: the host refused the input
//                 (a value outside the form's constraints) before any page code ran: an error span
//   navigation    a submission nobody prevented leaves the document: outcome "navigated", written at once
//   removal       the form leaves the DOM while its call runs: the host cancels it, and so do we
//
// Values are read only to count bytes (inputBytes) and dropped; the page's answer is measured by the collector.

import { describeTool, toolName } from "./interceptor.js"
import { safely, cap, listenWhile } from "../shared/util.js"

const MAX_FIELDS = 64
const FIELD_TAGS = new Set(["INPUT", "SELECT", "TEXTAREA"])
const NOT_PARAMS = new Set(["submit", "button", "reset", "image"])
const WATCHED = ["toolname", "tooldescription", "toolautosubmit", "toolparamdescription", "name", "required"]

/** A short, value-free name for a control: `input[type=number][name=guests]#g`. */
export function elementLabel(el) {
  const tag = String(el.tagName || "").toLowerCase() || "element"
  let s = tag
  const type = safely(() => el.getAttribute("type"), null)
  if (tag === "input") s += `[type=${cap(type || "text", 24)}]`
  const name = safely(() => el.getAttribute("name"), null)
  if (name) s += `[name=${cap(name, 48)}]`
  const id = safely(() => el.id, "")
  if (id) s += `#${cap(id, 48)}`
  return cap(s, 128)
}

function isLabeled(el) {
  if (safely(() => el.labels && el.labels.length > 0, false)) return true
  const aria = (k) => safely(() => (el.getAttribute(k) || "").trim() !== "", false)
  return aria("aria-label") || aria("aria-labelledby") || aria("title")
}

/**
 * The lint facts of a form tool, one entry per control (radio groups once): which parameter it feeds (its
 * name, null when it has none and so feeds nothing), its element, and whether it is described, labeled,
 * required. No values.
 */
export function formFacts(form, schema) {
  const props = schema && typeof schema === "object" && schema.properties && typeof schema.properties === "object" ? schema.properties : {}
  const fields = []
  const seen = new Set()
  const els = safely(() => Array.from(form.elements), [])
  for (const el of els) {
    if (fields.length >= MAX_FIELDS) break
    if (!el || !FIELD_TAGS.has(el.tagName)) continue
    const type = String(safely(() => el.type, "") || "").toLowerCase()
    if (NOT_PARAMS.has(type)) continue
    const name = String(safely(() => el.getAttribute("name"), "") || "").trim()
    if (name && seen.has(name)) continue
    if (name) seen.add(name)
    fields.push({
      param: name ? cap(name, 128) : null,
      element: elementLabel(el),
      type: cap(type || String(el.tagName).toLowerCase(), 32),
      inSchema: !!name && Object.prototype.hasOwnProperty.call(props, name),
      described: safely(() => (el.getAttribute("toolparamdescription") || "").trim() !== "", false),
      labeled: type === "hidden" ? true : isLabeled(el),
      required: !!safely(() => el.required, false),
    })
  }
  return {
    autosubmit: safely(() => form.hasAttribute("toolautosubmit"), false),
    navigates: formNavigates(form),
    fields,
  }
}

function formNavigates(form) {
  return safely(() => String(form.getAttribute("method") || "get").toLowerCase() !== "dialog", true)
}

/** The form's values as the host filled them, typed by the generated schema (for inputBytes only). */
export function filledValues(form, schema) {
  const props = schema && schema.properties && typeof schema.properties === "object" ? schema.properties : {}
  const out = {}
  for (const name of Object.keys(props)) {
    const el = safely(() => form.elements.namedItem(name), null)
    if (!el) continue
    const spec = props[name] || {}
    let v
    if (typeof el.length === "number" && !el.tagName) {
      // a RadioNodeList (radio group or checkboxes sharing a name)
      const boxes = Array.from(el)
      v = boxes.every((b) => b.type === "checkbox") ? boxes.filter((b) => b.checked).map((b) => b.value) : el.value
    } else if (el.type === "checkbox") v = !!el.checked
    else if (el.tagName === "SELECT" && el.multiple) v = Array.from(el.selectedOptions, (o) => o.value)
    else v = el.value
    if (typeof v === "string" && v === "") continue
    if (spec.type === "number" && typeof v === "string") {
      const n = Number(v)
      v = Number.isFinite(n) ? n : v
    }
    out[name] = v
  }
  return out
}

export class FormTools {
  /**
   * @param {import("./collector.js").Collector} collector
   * @param {object} o
   * @param {object} o.global  the window
   * @param {(fn: Function) => void} o.schedule  a macrotask: runs after the current event's dispatch
   * @param {(entry: object) => void} [o.onNavigated]  a call left the document: deliver now
   */
  constructor(collector, { global: g, schedule, onNavigated }) {
    this.c = collector
    this.g = g
    this.schedule = schedule
    this.onNavigated = onNavigated || (() => {})
    /** name -> {form, rec, schema} of the form tools the host lists */
    this.tools = new Map()
    /** open calls: entry {name, call, form, responded, done, activated, waiting} */
    this.open = new Set()
    /** submit events of our calls -> entry (respondWith finds its call here) */
    this.byEvent = new WeakMap()
    /** name -> an entry submitted (or activated) in this task, not yet paired with its other half */
    this.unpaired = new Map()
    /** name -> an entry filled for a non-autosubmit form, waiting for the user's submit */
    this.waiting = new Map()
    this.invalidSeen = false
    this.restores = []
    this.host = null
    this.patchedRespond = false
    this.observer = null
    /** the `toolactivated` listeners, on the host and the window (listenActivations) */
    this.activations = []
    this.syncQueued = false
    this.resync = null
    /** names a host registered through registerTool (a polyfill's forms): the interceptor measures those */
    /** @type {(name: string) => boolean} set by the registry: is this tool already wrapped? */
    this.wrapped = (_name) => false
  }

  get doc() {
    return safely(() => this.g.document, null)
  }

  /** The form that declares `name`, or null. */
  formOf(name) {
    const forms = safely(() => this.doc && this.doc.forms, null)
    if (!forms) return null
    for (const f of Array.from(forms)) if (safely(() => f.getAttribute("toolname"), null) === name) return f
    return null
  }

  /** The lint facts of `form` (for a polyfill's form registered through registerTool). */
  factsOf(form, schema) {
    return formFacts(form, schema)
  }

  /** Is `name` a declarative tool (so not one "registered before the agent")? */
  owns(name) {
    return this.tools.has(name) || this.formOf(name) !== null
  }

  /** The document's host was found: listen for submissions, activations, and form changes. */
  attach(host, resync) {
    if (this.host) return
    this.host = host
    this.resync = resync
    const g = this.g
    const on = (target, type, fn, capture) => {
      if (!target || typeof target.addEventListener !== "function") return
      safely(() => {
        target.addEventListener(type, fn, capture)
        this.restores.push(() => target.removeEventListener(type, fn, capture))
      })
    }
    on(g, "submit", (e) => safely(() => this.onSubmit(e)), true)
    on(g, "invalid", () => {
      this.invalidSeen = true
    }, true)
    // Heard only while a form tool is listed (listenActivations): Chromium fires toolactivated for every call.
    // The polyfill fires it on window; Chromium on document.modelContext.
    const onActivated = (e) => safely(() => this.onActivated(e))
    this.activations = [host, host !== g ? g : null].filter(Boolean).map((t) => listenWhile(t, "toolactivated", onActivated))
    this.restores.push(() => this.activations.forEach((l) => l.want(false)))
    this.patchRespond()
    const MO = safely(() => g.MutationObserver, null)
    const doc = this.doc
    if (typeof MO === "function" && doc) {
      safely(() => {
        const obs = new MO(() => safely(() => this.domChanged()))
        obs.observe(doc, { subtree: true, childList: true, attributes: true, attributeFilter: WATCHED })
        this.observer = obs
      })
    }
  }

  /** Wrap SubmitEvent.prototype.respondWith (never define it: a polyfill checks for it before adding its own). */
  patchRespond() {
    if (this.patchedRespond) return
    const proto = safely(() => this.g.SubmitEvent && this.g.SubmitEvent.prototype, null)
    if (!proto) return
    const own = Object.getOwnPropertyDescriptor(proto, "respondWith")
    const original = own && typeof own.value === "function" ? own.value : null
    if (!original) return
    const self = this
    const patched = function respondWith(value) {
      const ret = original.apply(this, arguments)
      safely(() => self.responded(this, value))
      return ret
    }
    try {
      Object.defineProperty(proto, "respondWith", { ...own, value: patched })
    } catch {
      return
    }
    this.patchedRespond = true
    this.restores.push(() => {
      if (proto.respondWith === patched) Object.defineProperty(proto, "respondWith", own)
    })
  }

  domChanged() {
    this.cancelRemoved()
    if (this.syncQueued || !this.resync) return
    this.syncQueued = true
    this.schedule(() => {
      this.syncQueued = false
      safely(() => this.resync())
    })
  }

  /**
   * The host's current list (from the interceptor's reconcile): register the forms it lists, withdraw the
   * ones it stopped listing. Returns nothing; reports through the collector.
   */
  sync(list) {
    this.patchRespond()
    const listed = new Set()
    for (const t of list) {
      if (!t || typeof t.name !== "string" || !t.name) continue
      const form = this.formOf(t.name)
      if (!form || this.wrapped(t.name)) continue
      const name = toolName(t.name)
      listed.add(name)
      const desc = describeTool({ name: t.name, title: t.title || undefined, description: t.description, inputSchema: t.inputSchema })
      const facts = formFacts(form, t.inputSchema)
      const prev = this.tools.get(name)
      const factsText = JSON.stringify(facts)
      if (prev && prev.form === form && prev.rec.descriptor === desc.descriptor && prev.factsText === factsText) continue
      const rec = { name, ...desc, annotationsKept: null, internal: false, kind: "form", form: facts }
      this.tools.set(name, { form, rec, schema: t.inputSchema, factsText })
      this.c.registered(rec)
    }
    for (const name of Array.from(this.tools.keys())) {
      if (listed.has(name)) continue
      this.tools.delete(name)
      this.c.unregistered(name)
    }
    this.listenActivations()
    this.cancelRemoved()
  }

  // ---- calls ---------------------------------------------------------------------------------------------

  onSubmit(e) {
    if (!e || e.agentInvoked !== true || !this.c.active) return
    const form = e.target
    const name = safely(() => form.getAttribute("toolname"), null)
    const tool = name && this.tools.get(name)
    if (!tool) return
    const t = this.c.clock()
    let entry = this.waiting.get(name)
    if (entry && entry.form === form) {
      this.waiting.delete(name)
      entry.waiting = false
      if (entry.call) this.c.resumed(entry.call, t)
    } else {
      entry = this.unpaired.get(name)
      if (entry && !entry.submitted) this.unpaired.delete(name)
      else {
        entry = this.newEntry(name, form, false)
        this.unpaired.set(name, entry)
        this.schedule(() => this.unpaired.get(name) === entry && this.unpaired.delete(name))
      }
    }
    entry.submitted = true
    entry.event = e
    if (entry.call) entry.call.input = safely(() => filledValues(form, tool.schema), undefined)
    this.byEvent.set(e, entry)
    this.schedule(() => safely(() => this.afterDispatch(entry)))
  }

  newEntry(name, form, waiting) {
    const call = this.c.enter(name, undefined, "form", waiting ? { waiting: true } : undefined)
    const entry = { name, call, form, responded: false, done: false, submitted: false, waiting, event: null }
    this.open.add(entry)
    return entry
  }

  /** `toolactivated` tells a form tool's call from a refusal: listened for only while there is a form tool. */
  listenActivations() {
    const wanted = this.tools.size > 0
    for (const l of this.activations) l.want(wanted)
  }

  onActivated(e) {
    const name = e && typeof e.toolName === "string" ? e.toolName : ""
    if (!this.c.active || !this.tools.has(name)) return
    const paired = this.unpaired.get(name)
    if (paired && paired.submitted) {
      this.unpaired.delete(name) // its submit came first, in this task
      return
    }
    const form = this.formOf(name)
    if (!form) return
    if (!safely(() => form.hasAttribute("toolautosubmit"), false)) {
      const prev = this.waiting.get(name)
      if (prev) this.finish(prev, false, { name: "AbortError", message: "superseded by another call before the user submitted" })
      this.waiting.set(name, this.newEntry(name, form, true))
      return
    }
    // Activated, no submit: the host refused the input, unless a submit follows in this task.
    const entry = this.newEntry(name, form, false)
    const invalid = this.invalidSeen
    this.unpaired.set(name, entry)
    this.schedule(() =>
      safely(() => {
        this.invalidSeen = false
        if (entry.submitted) return
        if (this.unpaired.get(name) === entry) this.unpaired.delete(name)
        const why = invalid || this.invalidSeen ? "Form validation failed" : "a value outside the form's constraints"
        if (entry.call) {
          entry.call.refused = true // a fact for the diagnosis (facts.js): refused by the browser
          entry.call.outcome = "refused" // on the span: a call without page time (stats keep it out of durations)
        }
        this.finish(entry, false, { name: "UnknownError", message: `refused by the browser before the page ran: ${why}` })
      }),
    )
  }

  responded(event, value) {
    const entry = this.byEvent.get(event)
    if (!entry || entry.responded || entry.done) return
    entry.responded = true
    let then = null
    if (value !== null && (typeof value === "object" || typeof value === "function")) then = safely(() => value.then, null)
    if (typeof then === "function") {
      try {
        then.call(
          value,
          (v) => this.finish(entry, true, v),
          (err) => this.finish(entry, false, err),
        )
      } catch (err) {
        this.finish(entry, false, err)
      }
    } else this.finish(entry, true, value)
  }

  /** Right after the submit's dispatch: answered, prevented without an answer, or leaving the document. */
  afterDispatch(entry) {
    if (entry.done || entry.responded) return
    const e = entry.event
    if (e && e.defaultPrevented) {
      this.finish(entry, false, { name: "UnknownError", message: "the page called preventDefault() on the submit without respondWith()" })
      return
    }
    this.navigated(entry)
  }

  navigated(entry) {
    if (entry.done) return
    if (entry.call) entry.call.outcome = "navigated"
    this.finish(entry, true, null)
    safely(() => this.onNavigated(entry))
  }

  /** The document is going away: every submitted call still open left with it. */
  pagehide() {
    let any = false
    for (const entry of Array.from(this.open)) {
      if (!entry.submitted || entry.responded) continue
      this.navigated(entry)
      any = true
    }
    return any
  }

  cancelRemoved() {
    for (const entry of Array.from(this.open)) {
      if (entry.done || safely(() => entry.form.isConnected, true)) continue
      this.finish(entry, false, { name: "AbortError", message: "the form was removed while the call ran" })
    }
  }

  finish(entry, ok, value) {
    if (entry.done) return
    if (entry.waiting && entry.call) this.c.resumed(entry.call, this.c.clock()) // the wait was never tool time
    entry.waiting = false
    entry.done = true
    entry.event = null
    this.open.delete(entry)
    if (this.waiting.get(entry.name) === entry) this.waiting.delete(entry.name)
    this.c.settle(entry.call, ok, value)
  }

  restore() {
    if (this.observer) safely(() => this.observer.disconnect())
    this.observer = null
    for (const f of this.restores.reverse()) safely(f)
    this.restores = []
    this.host = null
  }
}
