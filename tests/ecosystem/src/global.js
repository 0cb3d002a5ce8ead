// @mcp-b/global as a page loads it: installs the polyfill (where there is no native WebMCP) and its MCP server.
import "@mcp-b/global"
