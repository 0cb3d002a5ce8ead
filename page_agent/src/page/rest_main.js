// Entry of the rest of the agent (dist/agent-rest.js, the extension's rest.js, and the part of dist/agent.js and
// open.js compiled in behind the eager part): everything index.js composes, handed to eager.js, which calls
// compose() once it wants it (idle, the first call, the first use of the console API).
import { attachEarly, maybeAttach, attach, profilerTool, addNote } from "./index.js"
import { safely } from "../shared/util.js"

/** Compose the early agent `p` (eager.js): the whole agent with its buffer replayed, or the inert API (gate closed). */
export function compose(p) {
  if (!p.closed) return attachEarly(p)
  const api = maybeAttach(p.config)
  for (const hint of p.notes) addNote(api, hint)
  // The page may hold the object eager.js exposed: it becomes the inert API (or the agent's, when the gate opened).
  if (p.api && api && api !== p.api) safely(() => Object.defineProperties(p.api, Object.getOwnPropertyDescriptors(api)))
  p.done = true
  for (const f of p.waiting.splice(0)) safely(f)
  return p.api || api
}

export { maybeAttach, attach, profilerTool, addNote as note }
