// The agent side: @modelcontextprotocol/sdk's Client over @mcp-b/transports (the tab, or a child frame).
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { TabClientTransport, IframeParentTransport } from "@mcp-b/transports"

let client = null

/** Connect once (to this tab's server, or to the server in `#frame` when `frame` is true). */
async function connect(frame) {
  if (client) return client
  const transport = frame
    ? new IframeParentTransport({ iframe: document.getElementById("frame"), targetOrigin: new URL(document.getElementById("frame").src).origin })
    : new TabClientTransport({ targetOrigin: location.origin })
  const c = new Client({ name: "ecosystem-test", version: "1.0.0" })
  await c.connect(transport)
  client = c
  return c
}

/** tools/call each of `calls` ([name, args]) in order; what the client received, as JSON text per call. */
window.mcpCalls = async (calls, frame = false) => {
  const c = await connect(frame)
  const out = []
  for (const [name, args] of calls) {
    try {
      const r = await c.callTool({ name, arguments: args })
      out.push({ ok: true, text: JSON.stringify(r) })
    } catch (e) {
      out.push({ ok: false, text: String(e && e.message) })
    }
  }
  return out
}
window.mcpList = async (frame = false) => (await (await connect(frame)).listTools()).tools.map((t) => t.name)
