// What an MCP client receives for tools/call from @mcp-b/global's server: the CallToolResult that
// BrowserMcpServer (@mcp-b/webmcp-ts-sdk 5.1.0) hands @modelcontextprotocol/server 2.0.0, which the transport
// delivers as the JSON-RPC `result`. Read in those packages' dist/:
//   returned value with a `content` array     -> itself (normalizeToolResponse passes it through)
//   any other value v                          -> {content:[{type:"text", text}], structuredContent?, isError:false}
//       text: v when a string, else JSON.stringify(v) ?? String(v) (String(v) when that throws);
//       structuredContent: v when it is plain JSON (finite numbers, plain objects, no cycle)
//   a throw e (McpServer.createToolError)     -> {content:[{type:"text", text: e.message (an Error) or String(e)}], isError:true}
// Pure: builds the envelope to be measured and dropped (measure.js); nothing here keeps a body.

const isPlain = (v) => v !== null && typeof v === "object" && !Array.isArray(v)

function isJsonValue(v, seen) {
  if (v === null || typeof v === "string" || typeof v === "boolean") return true
  if (typeof v === "number") return Number.isFinite(v)
  if (typeof v !== "object" || seen.has(v)) return false
  seen.add(v)
  try {
    let items = null
    if (Array.isArray(v)) items = v
    else {
      const proto = Object.getPrototypeOf(v)
      if (proto === Object.prototype || proto === null) items = Object.values(v)
    }
    return items !== null && items.every((x) => isJsonValue(x, seen))
  } catch {
    return false
  } finally {
    seen.delete(v)
  }
}

function textOf(v) {
  if (typeof v === "string") return v
  try {
    return JSON.stringify(v) ?? String(v)
  } catch {
    return String(v)
  }
}

/** The CallToolResult an MCP client receives for a tool that returned `value`. */
export function mcpResult(value) {
  if (isPlain(value) && Array.isArray(value.content)) return value
  const out = { content: [{ type: "text", text: textOf(value) }] }
  if (isJsonValue(value, new WeakSet())) out.structuredContent = value
  out.isError = false
  return out
}

/** The CallToolResult an MCP client receives for a tool that threw `err`. */
export function mcpErrorResult(err) {
  let text
  try {
    text = err instanceof Error ? err.message : String(err)
  } catch {
    text = ""
  }
  return { content: [{ type: "text", text }], isError: true }
}
