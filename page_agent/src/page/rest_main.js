// Entry of the rest of the agent (dist/agent-rest.js, the extension's rest.js, and the part of dist/agent.js and
// open.js compiled in behind the eager part): everything index.js composes, handed to eager.js, which calls
// compose() once it wants it (idle, the first call, the first use of the console API).
import { attachEarly, maybeAttach, attach, profilerTool, addNote } from "./index.js"

/** Compose the early agent `p` (eager.js): the whole agent with its buffer replayed, or the inert API (gate closed). */
export function compose(p) {
  if (!p.closed) return attachEarly(p)
  const api = maybeAttach(p.config)
  for (const hint of p.notes) addNote(api, hint)
  p.done = true
  return api
}

export { maybeAttach, attach, profilerTool, addNote as note }
