// @mcp-b/react-webmcp's hooks (the page also loads @mcp-b/global).
import { useWebMCP } from "@mcp-b/react-webmcp"
import { mountWith } from "./react-app.jsx"
mountWith(useWebMCP)
