// The three tools as React components with the useWebMCP hook (the hook given by the entry that imports this).
import React from "react"
import { createRoot } from "react-dom/client"
import { makeTools } from "./tools.js"

// `outputs`: tools that declare an outputSchema and return their structured value itself (the hook wraps it).
export function mountWith(useWebMCP, outputs = {}) {
  const Tool = ({ tool }) => {
    const out = outputs[tool.name]
    const execute = out ? async (input) => (await tool.execute(input)).structuredContent : tool.execute
    useWebMCP({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema, ...(out && { outputSchema: out }), execute })
    return <li>{tool.name}</li>
  }
  const App = () => (
    <ul>
      {makeTools().map((t) => (
        <Tool key={t.name} tool={t} />
      ))}
    </ul>
  )
  const el = document.createElement("div")
  document.documentElement.appendChild(el) // the scripts run in <head>: no body yet
  let root = null
  window.mountTools = () => {
    root = createRoot(el)
    root.render(<App />)
  }
  window.unmountTools = () => {
    root.unmount()
    root = null
  }
  window.mountTools()
}
