// Injected by `wmcp-top bench` through page.evaluate: calls one tool with each input, timed in the page.
// Calls go through the browser's own executeTool when it exists (so the host's serialisation is inside the
// measurement), else through the registry's tool.execute(). Only sizes, types and times leave the page: the
// result is measured here and dropped.
async ([name, inputs, errorPolicy]) => {
  const mc = document.modelContext || navigator.modelContext || window.modelContext;
  if (!mc) return { error: "no modelContext in this page" };
  const tools = typeof mc.getTools === "function" ? await mc.getTools() : [];
  const tool = tools.find((t) => t && t.name === name);
  if (!tool) return { error: `tool ${name} is not registered` };
  const viaHost = typeof mc.executeTool === "function";
  const enc = new TextEncoder();
  const bytes = (s) => enc.encode(s).length;
  const facts = (value) => {
    let text;
    let resultType = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
    if (typeof value === "string") text = value === "" && !viaHost ? "Operation succeeded" : value;
    else if (value === undefined) text = "undefined";
    else {
      try { text = JSON.stringify(value); } catch (e) { return { resultBytes: 0, resultType: "unserializable", serializable: false, contentTypes: {}, imageBytes: 0, isError: false, envelope: false }; }
    }
    let parsed = typeof value === "object" ? value : null;
    if (parsed === null && typeof text === "string" && text[0] === "{") { try { parsed = JSON.parse(text); } catch (e) { parsed = null; } }
    const contentTypes = {};
    let imageBytes = 0;
    const envelope = !!(parsed && Array.isArray(parsed.content));
    if (envelope) {
      for (const item of parsed.content) {
        if (!item || typeof item.type !== "string") continue;
        const kind = item.type.slice(0, 32);
        contentTypes[kind] = (contentTypes[kind] || 0) + 1;
        if (kind === "image" && typeof item.data === "string") imageBytes += item.data.length;
      }
    } else if (typeof value === "string") contentTypes.text = 1;
    return { resultBytes: bytes(text), resultType, serializable: true, contentTypes, imageBytes, isError: !!(parsed && parsed.isError === true), envelope };
  };
  const out = [];
  for (const input of inputs) {
    const inputBytes = bytes(JSON.stringify(input));
    const t0 = performance.now();
    let value, thrown = null;
    try {
      value = viaHost ? await mc.executeTool(tool, input) : await tool.execute(input);
    } catch (e) {
      thrown = e;
    }
    const t1 = performance.now();
    let row;
    if (thrown) {
      const ename = String((thrown && thrown.name) || "Error").slice(0, 64);
      const msg = String((thrown && thrown.message) || "");
      const error = errorPolicy === "none" ? null : errorPolicy === "name" || !msg ? ename : msg.slice(0, 200);
      row = { resultBytes: 0, resultType: "error", serializable: true, contentTypes: {}, imageBytes: 0, isError: true, error, errorType: ename, envelope: false };
    } else {
      row = facts(value);
      row.error = row.isError ? (errorPolicy === "none" ? null : "isError") : null;
    }
    value = undefined;
    row.invokedAt = t0;
    row.settledAt = t1;
    row.inputBytes = inputBytes;
    out.push(row);
  }
  return { viaHost, rows: out };
}
