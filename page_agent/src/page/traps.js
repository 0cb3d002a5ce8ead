// Registries (and the Prompt API's LanguageModel) that arrive after the agent started: seen at the moment they
// are installed, before their first registration can run (the 250 ms poll alone lets a polyfill and the page's tools slip in between two ticks).
//
// How the real packages install one (@mcp-b/webmcp-polyfill and @mcp-b/global 5.1.0, read in their dist/):
//   - the polyfill: Object.defineProperty(Document.prototype, "modelContext", {get}) and a deprecated
//     navigator getter (which warns once when read);
//   - @mcp-b/global: Object.defineProperty(document | navigator, "modelContext", {value: server}).
// No setter runs for a defineProperty, so an accessor trap alone would never see them: the agent wraps
// Object.defineProperty, Object.defineProperties and Reflect.defineProperty, and after a define of
// `modelContext` on one of the watched objects (the define itself untouched, its result returned as is) tells
// the interceptor synchronously. A page assigning `window.modelContext = registry` (a page-made registry) goes
// through an accessor trap on window, configurable so a later defineProperty still replaces it.
// document and navigator get no accessor of ours where they have no modelContext: `"modelContext" in navigator`
// is how pages detect WebMCP, and it must keep answering false there.

import { safely } from "../shared/util.js"

const KEY = "modelContext"
// The Prompt API's factories (prompt.js) installed late the same way: defined on window, not assigned to a
// setter of ours (`"LanguageModel" in window` is how pages detect the Prompt API: no accessor there).
const LATE = [KEY, "LanguageModel", "ai"]
const isLate = (key) => LATE.includes(key)

/**
 * Watch `g` (the window) for registries installed late. `onChange()` runs synchronously after each install.
 * Returns restore(): puts back every original still in place (a page's own later replacement is left alone).
 * @param {any} g
 * @param {() => void} onChange
 */
export function watchRegistries(g, onChange) {
  const restore = []
  const O = g.Object
  const R = g.Reflect
  if (!O || typeof O.defineProperty !== "function") return () => {}
  const define = O.defineProperty
  const protoOf = (ctor) => safely(() => (typeof ctor === "function" ? ctor.prototype : null), null)
  // Looked up at a define of a watched key, not at load: reading `Document`, `Navigator` or `navigator` makes the
  // engine build those interfaces (about 0.15 ms and 18 KB of a cold page's main thread and heap), which a page
  // that never touches them would not pay.
  const isWatched = (target) =>
    !!target && (target === g || target === safely(() => g.document, null) || target === safely(() => g.navigator, null) || target === protoOf(g.Document) || target === protoOf(g.Navigator))
  const tell = () => safely(onChange)

  /** Replace obj[name] with `fn` (same name and length), restored only while it is still ours. */
  const swap = (obj, name, fn) => {
    if (!obj || typeof obj[name] !== "function") return
    const own = Object.getOwnPropertyDescriptor(obj, name)
    const original = obj[name]
    try {
      if (fn.name !== original.name) define(fn, "name", { value: original.name, configurable: true })
      if (fn.length !== original.length) define(fn, "length", { value: original.length, configurable: true })
    } catch {
      // the name and length stay ours
    }
    try {
      define(obj, name, { value: fn, writable: true, configurable: true, enumerable: own ? own.enumerable : false })
    } catch {
      return
    }
    restore.push(() => {
      if (obj[name] !== fn) return
      if (own) define(obj, name, own)
    })
  }

  const defineProperty = function (target, key, descriptor) {
    const r = define(target, key, descriptor)
    if (isLate(key) && isWatched(target)) tell()
    return r
  }
  swap(O, "defineProperty", defineProperty)

  const defineAll = O.defineProperties
  if (typeof defineAll === "function") {
    // Named as the originals (and of their length), so swap() need not redefine either.
    swap(O, "defineProperties", function defineProperties(target, props) {
      const r = defineAll.call(O, target, props)
      if (safely(() => props !== null && typeof props === "object" && LATE.some((k) => Object.prototype.hasOwnProperty.call(props, k)), false) && isWatched(target)) tell()
      return r
    })
  }

  const reflectDefine = R && R.defineProperty
  if (typeof reflectDefine === "function") {
    swap(R, "defineProperty", function defineProperty(target, key, descriptor) {
      const r = reflectDefine.call(R, target, key, descriptor)
      if (r && isLate(key) && isWatched(target)) tell()
      return r
    })
  }

  // window.modelContext = registry: a setter that keeps the value and tells. Only where window has none yet.
  if (safely((() => !(KEY in g)), false)) {
    let value
    const trap = {
      get() {
        return value
      },
      set(v) {
        value = v
        tell()
      },
      configurable: true,
      enumerable: false,
    }
    try {
      define(g, KEY, trap)
      restore.push(() => {
        const d = Object.getOwnPropertyDescriptor(g, KEY)
        if (!d || d.get !== trap.get) return
        delete g[KEY]
        if (value !== undefined) g[KEY] = value // the page's own registry stays where it put it
      })
    } catch {
      /* a frozen window: the poll still looks */
    }
  }

  return () => {
    for (const f of restore.reverse()) safely(f)
    restore.length = 0
  }
}

/** Is `fn` one of the engine's own functions (a built-in getter), whose call runs no page code? */
export function isNativeFunction(fn) {
  if (typeof fn !== "function") return false
  const src = safely(() => Function.prototype.toString.call(fn), "")
  return /\{\s*\[native code\]\s*\}\s*$/.test(src)
}
