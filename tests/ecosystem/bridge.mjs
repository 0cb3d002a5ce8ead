// chrome-devtools-mcp (pinned in package.json) as a coding agent reaches a page's tools: the official MCP SDK
// client over stdio, the server launching Chromium with the WebMCP DevTools domain, `execute_webmcp_tool` on a
// page that runs the agent. Prints JSON: what the MCP client received per call, and the agent's spans.
//   node bridge.mjs <agent.js> <chromium>
import http from "node:http"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const [agentPath, chromium] = process.argv.slice(2)
const agent = fs.readFileSync(agentPath, "utf8")
// Two result shapes: many short fields (`rows`) and fewer long strings (`items`).
const page = `<!doctype html><meta charset=utf-8><title>bridge</title><script src="/agent.js"></script><script>
const rows = Array.from({ length: 1400 }, (_, i) => ({ id: i, name: "row " + i, tags: ["alpha", "beta", "gamma"], score: i * 1.5, ok: i % 2 === 0 }))
const items = Array.from({ length: 1300 }, (_, i) => ({ id: i, text: "lorem ipsum dolor sit amet ".repeat(3) + i }))
for (const [name, value] of [["rows", { rows }], ["items", { items }]])
  document.modelContext.registerTool({ name, description: "a large object", inputSchema: { type: "object", properties: {} }, execute: async () => value })
</script><body>bridge`
const server = http
  .createServer((req, res) => {
    const js = req.url.startsWith("/agent.js")
    res.writeHead(200, { "content-type": js ? "text/javascript" : "text/html; charset=utf-8" })
    res.end(js ? agent : page)
  })
  .listen(0, "127.0.0.1")
await new Promise((r) => server.once("listening", r))
const url = `http://127.0.0.1:${server.address().port}/?perf=1`
const flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync",
  "--enable-features=WebMCPTesting,WebMCP,DevToolsWebMCPSupport", "--enable-experimental-web-platform-features"]
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [path.join(here, "node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"), "--headless", "--isolated", "--executablePath", chromium,
    "--categoryExperimentalWebmcp", "--no-usage-statistics", ...flags.map((f) => `--chromeArg=${f}`)],
  stderr: "ignore",
})
const client = new Client({ name: "wmcp-top-bridge-test", version: "1.0.0" })
try {
  await client.connect(transport)
  const text = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("")
  const pageId = Number(/(\d+):/.exec(text(await client.callTool({ name: "list_pages", arguments: {} })))[1])
  await client.callTool({ name: "navigate_page", arguments: { pageId, type: "url", url } })
  const calls = []
  for (const toolName of ["rows", "items"]) {
    const r = await client.callTool({ name: "execute_webmcp_tool", arguments: { pageId, toolName, input: "{}" } })
    calls.push({ tool: toolName, text: text(r), items: (r.content || []).length, isError: r.isError === true })
  }
  const js = "() => __webmcpPerf.spans().map((s) => ({ tool: s.tool, resultBytes: s.resultBytes, isError: s.isError }))"
  const shown = text(await client.callTool({ name: "evaluate_script", arguments: { pageId, function: js } }))
  const spans = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(shown)[1])
  process.stdout.write(JSON.stringify({ calls, spans }))
} finally {
  await client.close()
  server.close()
}
