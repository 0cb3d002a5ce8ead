// The strict @mcp-b/webmcp-polyfill alone: document.modelContext where the browser has none.
import { initializeWebMCPPolyfill } from "@mcp-b/webmcp-polyfill"
initializeWebMCPPolyfill()
