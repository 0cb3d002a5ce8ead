// usewebmcp's hook (the page also loads the strict @mcp-b/webmcp-polyfill).
import { useWebMCP } from "usewebmcp"
import { mountWith } from "./react-app.jsx"
mountWith(useWebMCP)
