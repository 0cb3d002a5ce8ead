// The three tools every ecosystem page registers: a text answer, a throw (the polyfill turns it into an
// isError result), and a result with structuredContent. Exposed so the page itself can call them too.
export const TOOL_NAMES = ["echo", "boom", "stats"]

export function makeTools() {
  return [
    {
      name: "echo",
      description: "echo the input back",
      inputSchema: { type: "object", properties: { text: { type: "string" } } },
      execute: async (input) => ({ content: [{ type: "text", text: "echo:" + String(input && input.text) }] }),
    },
    {
      name: "boom",
      description: "always fails",
      inputSchema: { type: "object", properties: {} },
      execute: async () => {
        throw new Error("boom: this tool always fails on purpose")
      },
    },
    {
      name: "stats",
      description: "numbers with structured content",
      inputSchema: { type: "object", properties: { n: { type: "number" } } },
      execute: async (input) => {
        const n = Number(input && input.n) || 3
        const rows = Array.from({ length: n }, (_, i) => ({ i, square: i * i }))
        return { content: [{ type: "text", text: JSON.stringify(rows) }], structuredContent: { rows } }
      },
    },
  ]
}

/** Register the tools on `mc` (whatever document.modelContext is now); keeps the objects for page calls. */
export async function registerAll(mc) {
  const tools = makeTools()
  window.pageTools = tools
  // All three at once, as a page registering from one module does: every registerTool call is made before
  // this script ends, so an agent tag after it finds all three already taken by the registry.
  await Promise.all(tools.map((t) => mc.registerTool(t)))
  return TOOL_NAMES
}
