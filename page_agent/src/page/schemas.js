// A registered tool's own inputSchema, for the diagnosis facts' schema check (facts.js): parsed from the registry
// ledger's descriptor text once per text, a bounded cache.

import { safely } from "../shared/util.js"

const MAX_SCHEMAS = 1024

export class Schemas {
  /** @param {{tools: Map<string, any>}} registry  the registry ledger (ledger.js) */
  constructor(registry) {
    this.registry = registry
    /** @type {Map<string, {text: string, schema: unknown}>} */
    this.parsed = new Map()
  }

  /** The inputSchema of a page's tool while registered, or undefined (internal, withdrawn, unknown, unparsable). */
  of(tool) {
    const rec = this.registry.tools.get(tool)
    const text = rec && rec.registered && !rec.internal ? rec.descriptor : null
    if (typeof text !== "string") return undefined
    let hit = this.parsed.get(tool)
    if (!hit || hit.text !== text) {
      const d = safely(() => JSON.parse(text), null)
      hit = { text, schema: d && typeof d === "object" ? d.inputSchema : undefined }
      this.parsed.set(tool, hit)
      if (this.parsed.size > MAX_SCHEMAS) this.parsed.delete(this.parsed.keys().next().value)
    }
    return hit.schema
  }
}
