// @mcp-b/webmcp-ts-sdk as a page uses it directly: its BrowserMcpServer over @mcp-b/transports (the tab's
// TabServerTransport, or IframeChildTransport in a frame), mirroring each tool onto document.modelContext (the
// browser's, or the polyfill's). The server keeps and runs its own reference to each tool's function.
import { BrowserMcpServer } from "@mcp-b/webmcp-ts-sdk"
import { TabServerTransport, IframeChildTransport } from "@mcp-b/transports"
import { makeTools, TOOL_NAMES } from "./tools.js"

const server = new BrowserMcpServer({ name: "ts-sdk-page", version: "1.0.0" }, { native: document.modelContext })
const framed = window.parent !== window
// A frame serves whichever parent embeds it (the tests put one on another origin); the tab only itself.
const transport = framed ? new IframeChildTransport({ allowedOrigins: ["*"] }) : new TabServerTransport({ allowedOrigins: [location.origin] })
window.pageTools = makeTools()
window.toolsReady = (async () => {
  for (const t of window.pageTools) server.registerTool(t)
  await server.connect(transport)
  return TOOL_NAMES
})()
