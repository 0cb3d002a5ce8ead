// @mcp-b/react-webmcp's hooks with `stats` declaring an outputSchema (the page also loads @mcp-b/global):
// its structuredContent reaches an MCP client as the server writes it.
import { useWebMCP } from "@mcp-b/react-webmcp"
import { mountWith } from "./react-app.jsx"
mountWith(useWebMCP, {
  stats: { type: "object", properties: { rows: { type: "array", items: { type: "object", properties: { i: { type: "number" }, square: { type: "number" } } } } } },
})
