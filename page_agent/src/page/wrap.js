// The execute() wrapper: the only code on the call path. Two clock reads, a few pushes; the result goes
// back to the caller untouched (the same value; a promise comes back as a promise of the same value, see
// `carry`) and is measured later by the collector.

const ORIGINAL = new WeakMap() // wrapper -> original execute
// Report-tool descriptors (profilerTool) carry this registered symbol: listed in the ledger, never wrapped. A
// symbol, not a module-local set, so the /agent.mjs copy's descriptor is known to the classic script's agent.
const INTERNAL = Symbol.for("wmcp-top/internal-tool")

/** Mark a descriptor as the agent's own report tool: the interceptor lists it and never measures it. */
export const markInternal = (tool) => {
  Object.defineProperty(tool, INTERNAL, { value: true, enumerable: false })
  return tool
}

/** Is `tool` a descriptor made by profilerTool()? */
export const isInternal = (tool) => {
  try {
    return !!tool && typeof tool === "object" && tool[INTERNAL] === true
  } catch {
    return false
  }
}

/** Is `fn` one of our wrappers? */
export const isWrapper = (fn) => typeof fn === "function" && ORIGINAL.has(fn)

/** The page's own function behind one of our wrappers (or `fn` itself). */
export const originalOf = (fn) => (typeof fn === "function" && ORIGINAL.has(fn) ? ORIGINAL.get(fn) : fn)

/**
 * Wrap `original` so every call is measured by `collector` under `name`. Once the collector is stopped
 * (detach), the wrapper is a plain pass-through: a host that captured it keeps working.
 * @param {import("./collector.js").Collector} collector
 * @param {string} name
 * @param {Function} original
 * @param {string|((self: any) => string)} [profile]  how the host serialises results (measure.js PROFILES); a function
 *   when that depends on the caller (asked once per call, at entry, with the call's `this`)
 */
export function wrapExecute(collector, name, original, profile) {
  const c = collector
  const wrapped = function (input) {
    if (!c.active) return original.apply(this, arguments)
    let call = null
    try {
      call = c.enter(name, input, typeof profile === "function" ? profile(this) : profile)
    } catch {
      return original.apply(this, arguments)
    }
    const stack = c.stack
    if (call) stack.push(call)
    let ret
    try {
      ret = original.apply(this, arguments)
    } catch (err) {
      if (call) stack.pop()
      c.settle(call, false, err)
      throw err
    }
    if (call) stack.pop()
    if (ret !== null && (typeof ret === "object" || typeof ret === "function")) {
      let then
      try {
        then = ret.then
      } catch {
        then = undefined
      }
      if (typeof then === "function") {
        // A native promise is awaited as is (its `then` is the engine's own: reading it is invisible). Any
        // other thenable has its `then` read once (above) and called once (here): the host gets a native
        // promise of the same value, so the page's `then` never runs a second time for our sake.
        if (!isNativePromise(ret, then)) return settleThenable(c, call, ret, then)
        if (call) return carry(c, call, ret)
        then.call(
          ret,
          (v) => c.settle(call, true, v),
          (e) => c.settle(call, false, e),
        )
        return ret
      }
    }
    c.settle(call, true, ret)
    return ret
  }
  ORIGINAL.set(wrapped, original)
  try {
    Object.defineProperty(wrapped, "name", { value: original.name || name, configurable: true })
    Object.defineProperty(wrapped, "length", { value: original.length, configurable: true })
  } catch {
    /* cosmetic only */
  }
  return wrapped
}

/** A promise of the engine's own, with the engine's own `then` (a subclass or a patched `then` is not). */
function isNativePromise(ret, then) {
  try {
    return then === NATIVE_THEN && ret instanceof Promise
  } catch {
    return false
  }
}
export const NATIVE_THEN = Promise.prototype.then

/** A plain promise of the engine's own (no subclass, no own or patched `then`): watching it runs no page code. */
export function isPlainPromise(v) {
  try {
    return v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Promise.prototype && v.then === NATIVE_THEN
  } catch {
    return false
  }
}

/**
 * A thenable that is not a native promise: call the `then` already read, exactly once, and hand the host a
 * native promise that settles with the same value or reason (a value that is itself a thenable is adopted
 * by that promise exactly as the host's own `await` would have).
 */
function settleThenable(c, call, ret, then) {
  let done = false // a `then` may call back more than once: the first call counts, as for a promise
  return new Promise((resolve, reject) => {
    const finish = (ok, v) => {
      if (done) return
      done = true
      c.settle(call, ok, v)
      if (ok) resolve(v)
      else reject(v)
    }
    try {
      then.call(ret, (v) => finish(true, v), (e) => finish(false, e))
    } catch (e) {
      finish(false, e)
    }
  })
}

const defineProperty = Object.defineProperty // captured: a page replacing it later does not reach us

/**
 * A measured call that returned a promise: await it inside an async function named after the call
 * (`__wmcp_<session>_<seq>`) and hand the host that function's promise, which settles with the same value or
 * reason. Being the only one awaiting the tool's promise puts that name in V8's async stack trace of every
 * continuation of the tool's async code, so an `executeTool` called after an `await` inside the tool can
 * name its caller (Nesting.callerOf). No AsyncContext in Chromium 156: this is what the page can observe.
 * @param {import("./collector.js").Collector} c
 */
function carry(c, call, ret) {
  const run = async function () {
    let v
    try {
      v = await ret
    } catch (e) {
      c.settle(call, false, e)
      throw e
    }
    c.settle(call, true, v)
    return v
  }
  // V8 names an async frame by the function's own `name` data property: set on the one closure made here, it
  // costs a few µs less than a computed method name in a fresh object literal (about 15 µs a call, profiled).
  defineProperty(run, "name", { value: c.frameName(call.seq) })
  return run()
}
