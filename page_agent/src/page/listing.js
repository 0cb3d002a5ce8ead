// The host's own list of its tools (getTools()), read once the rest of the agent is here (the registry hooks run
// at load without it, eager.js): tools registered before the agent (listed, counted, not measured), withdrawals
// the host made on its own, where the terminal's `invoke` can call a tool, and instrument() (retrofitting tools
// registered before the agent).

import { describeTool, scalars, toolName, weakRef, mcpServerOf, profileOf } from "./interceptor.js"
import { wrapExecute, isWrapper } from "./wrap.js"
import { safely } from "../shared/util.js"

/**
 * The descriptor a page registered, from the host's copy of it (getTools()): schema bytes are then the same
 * whichever route saw the tool. The host adds an empty `title` and every annotation it knows at false; those are
 * dropped, and an inputSchema listed as JSON text is read back as the object it was. Annotations the host dropped
 * cannot be recovered. relay_bridge.core.measure.registered_descriptor is the same rule (tests/vectors/schema.json).
 */
export function registeredShape(listed) {
  /** @type {Record<string, any>} */
  const out = {}
  for (const key of ["name", "title", "description", "inputSchema", "annotations"]) {
    let value = listed[key]
    if (value === undefined || value === null) continue
    if (key === "title" && value === "") continue
    if (key === "inputSchema" && typeof value === "string") {
      try {
        value = JSON.parse(value)
      } catch {
        // kept as the host listed it
      }
    }
    if (key === "annotations" && typeof value === "object") {
      const kept = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== false))
      if (!Object.keys(kept).length) continue
      value = kept
    }
    out[key] = value
  }
  return out
}

/**
 * A tool @mcp-b/global's server took before the agent arrived: the server keeps its own copy of the page's
 * function, out of reach, and runs it for an MCP client's tools/call without any event. Those calls are
 * not even counted: the status says so, with what works for such a page.
 */
function unseenPath(ic, name) {
  ic.unseen.add(name)
  if (ic.unseenReason) ic.c.extraReasons.delete(ic.unseenReason)
  ic.unseenReason = `${ic.unseen.size} tool(s) on @mcp-b/global's MCP server were registered before the agent: MCP-client calls to them (tools/call over postMessage) reach no wrapper and are measured at the transport only; load the agent before @mcp-b/global (first in <head>), or use the extension or \`wmcp-top open URL\``
  ic.c.extraReasons.add(ic.unseenReason)
  ic.c.statusChanged()
}

/** On toolchange: names the host no longer lists are unregistered; unknown names are flagged unwrapped. */
export function reconcile(ic, host) {
  if (typeof host.getTools !== "function" || !ic.c.active) return
  const genAtCall = ic.gen
  const epochAtCall = ic.epoch
  let r
  try {
    r = host.getTools()
  } catch {
    return
  }
  const apply = (list) =>
    safely(() => {
      if (!Array.isArray(list) || !ic.c.active) return
      const names = new Set()
      const entry = ic.hosts.get(host)
      if (ic.forms && ic.forms.host === host) ic.forms.sync(list)
      for (const t of list) {
        if (!t || typeof t.name !== "string" || !t.name || !ic.ownFrame(t)) continue
        names.add(t.name)
        if (ic.mirrors.get(t.name) === host) continue // our registration's copy on this host
        if (ic.forms && ic.forms.owns(t.name)) continue
        if (ic.live.has(t.name) || ic.pendingNames.has(t.name) || t.name === ic.c.reportToolName) continue
        if ((ic.changed.get(t.name) || 0) > epochAtCall) continue // the list predates our own news of it
        // Registered before the agent could wrap it: listed, not measured (instrument() retrofits).
        const name = toolName(t.name)
        ic.live.set(name, { host: weakRef(host), tool: null, wrapper: null, since: ++ic.gen })
        if (entry) entry.names.add(name)
        ic.c.registered({ name, ...describeTool(registeredShape(t)), annotationsKept: scalars(t.annotations) || {}, internal: false })
        ic.c.unwrappedTool(name)
        if (mcpServerOf(host)) unseenPath(ic, name)
      }
      if (entry) {
        for (const name of Array.from(entry.names)) {
          const live = ic.live.get(name)
          if (!names.has(name) && live && live.since <= genAtCall) ic.dropName(host, name)
        }
        entry.listed = true
      }
      ic.countActivations()
    })
  if (r && typeof r.then === "function") r.then(apply, () => {})
  else apply(r)
}

/**
 * Where a terminal `invoke` can call `name`: the browser's own executeTool (with the host's RegisteredTool
 * from getTools()) when the host has one, else the tool object the page registered (its wrapped execute).
 * Resolves to {via, call: (input) => Promise<any>, profile} or null when no host lists the tool.
 */
export async function invoker(ic, name) {
  const hosts = Array.from(ic.hosts.entries()).sort((a, b) => Number(b[1].location === "document") - Number(a[1].location === "document"))
  for (const [host] of hosts) {
    if (typeof host.executeTool !== "function" || typeof host.getTools !== "function") continue
    let list = null
    try {
      list = await host.getTools()
    } catch {
      list = null
    }
    const t = Array.isArray(list) ? list.find((x) => x && x.name === name && ic.ownFrame(x)) : null
    if (!t) continue
    // @mcp-b/global's server hands executeTool to the registry behind it: that one decides the input's form.
    const profile = profileOf(mcpServerOf(host) ? safely(() => host.native, null) || host : host)
    // The polyfill's executeTool takes the input as JSON text; Chromium's takes the object.
    return { via: "executeTool", text: true, call: (input) => host.executeTool(t, profile === "mcp-b" ? JSON.stringify(input ?? {}) : input ?? {}) }
  }
  const live = ic.live.get(name)
  if (live && live.tool && typeof live.tool.execute === "function") {
    const tool = live.tool
    const fn = live.wrapper || tool.execute
    return { via: "execute", text: false, profile: profileOf(live.host.deref()), call: (input) => fn.call(tool, input ?? {}, {}) }
  }
  return null
}

/**
 * Retrofit tools registered before the agent: a {name: tool} map, an array, or one tool. Wraps each
 * execute in place; returns how many were newly wrapped.
 */
export function instrument(ic, target) {
  if (!target || typeof target !== "object") return 0
  let list
  if (Array.isArray(target)) list = target.map((t) => [t && t.name, t])
  else if (typeof target.execute === "function") list = [[target.name, target]]
  else list = Object.keys(target).map((k) => [k, target[k]])
  let n = 0
  for (const [key, tool] of list) {
    if (!tool || typeof tool !== "object" || typeof tool.execute !== "function") continue
    const name = typeof tool.name === "string" && tool.name ? tool.name : String(key)
    if (isWrapper(tool.execute)) continue
    const original = tool.execute
    const wrapper = wrapExecute(ic.c, toolName(name), original)
    try {
      tool.execute = wrapper
    } catch {
      /* refused */
    }
    if (tool.execute !== wrapper) {
      ic.c.wrapFailed(name)
      continue
    }
    ic.wrapped.set(tool, { original, wrapper })
    n++
    const live = ic.live.get(name)
    if (live && !live.tool) live.tool = tool
    const rec = ic.c.registry.tools.get(name)
    ic.c.wrappedTool(name)
    if (!rec || !rec.registered) ic.c.registered({ name: toolName(name), ...describeTool({ ...tool, name }), annotationsKept: null, internal: false })
  }
  return n
}
