// The page's own tools, registered on whatever document.modelContext is when this script runs.
import { registerAll } from "./tools.js"
window.toolsReady = registerAll(document.modelContext)
