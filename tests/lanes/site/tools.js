// Twelve WebMCP tools covering what the bench generator and the CDP lane must handle: ranges, enums, optionals,
// nested objects and arrays, string formats, one slow, one throwing, one mutating, one image, one empty string,
// one isError result, one echoing its input (for the no-bodies canary) and one with awkward JSON numbers.
(function () {
  "use strict";
  const fixture = (window.__fixture = { calls: {}, inputs: [], mutations: 0, registered: [], failed: [] });
  const count = (name, input) => {
    fixture.calls[name] = (fixture.calls[name] || 0) + 1;
    fixture.inputs.push([name, JSON.stringify(input)]);
  };
  const text = (t) => ({ content: [{ type: "text", text: t }] });
  // A 1x1 PNG, base64.
  const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
  const ro = { readOnlyHint: true };

  const tools = [
    {
      name: "search_products",
      description: "Search the catalogue.",
      inputSchema: {
        type: "object",
        properties: {
          query: { type: "string", minLength: 1, maxLength: 40 },
          limit: { type: "integer", minimum: 1, maximum: 50 },
          sort: { type: "string", enum: ["relevance", "price", "newest"] },
          inStock: { type: "boolean" },
        },
        required: ["query"],
      },
      annotations: ro,
      execute: async (input) => {
        const n = Math.min(Number(input.limit) || 5, 50);
        return { items: Array.from({ length: n }, (_, i) => ({ id: i, name: `${input.query} #${i}` })), sort: input.sort || "relevance" };
      },
    },
    {
      name: "get_price",
      description: "Price of an amount in a currency.",
      inputSchema: {
        type: "object",
        properties: {
          amount: { type: "number", minimum: 0, maximum: 1000 },
          currency: { type: "string", enum: ["EUR", "USD", "JPY"] },
          rounding: { type: "string", enum: ["up", "down"] },
        },
        required: ["amount", "currency"],
      },
      annotations: ro,
      execute: async ({ amount, currency }) => text(`${amount} ${currency}`),
    },
    {
      name: "describe_item",
      description: "Nested input: an item with dimensions and tags.",
      inputSchema: {
        type: "object",
        properties: {
          item: {
            type: "object",
            properties: {
              id: { type: "integer", minimum: 1, maximum: 9999 },
              tags: { type: "array", items: { type: "string", enum: ["red", "blue", "large"] }, minItems: 0, maxItems: 3 },
              dims: { type: "object", properties: { w: { type: "number", minimum: 0.5, maximum: 2 }, h: { type: "number", minimum: 0, maximum: 10 } }, required: ["w", "h"] },
            },
            required: ["id", "dims"],
          },
          verbose: { type: "boolean" },
        },
        required: ["item"],
      },
      annotations: ro,
      execute: async ({ item }) => ({ id: item.id, area: item.dims.w * item.dims.h, tags: item.tags || [] }),
    },
    {
      name: "list_orders",
      description: "String formats: a date, an email, a uri.",
      inputSchema: {
        type: "object",
        properties: {
          since: { type: "string", format: "date" },
          email: { type: "string", format: "email" },
          callback: { type: "string", format: "uri" },
          ids: { type: "array", items: { type: "integer", minimum: 1, maximum: 100 }, maxItems: 4 },
        },
      },
      annotations: ro,
      execute: async (input) => ({ orders: (input.ids || []).map((id) => ({ id, since: input.since || null })) }),
    },
    {
      name: "slow_report",
      description: "The slow one: about 60 ms.",
      inputSchema: { type: "object", properties: { detail: { type: "string", enum: ["short", "full"] } } },
      annotations: ro,
      // A test that needs a call still open (navigating away from it) holds it with window.__slowReportMs.
      execute: (input) => new Promise((resolve) => setTimeout(() => resolve(text(`report ${input.detail || "short"}`)), window.__slowReportMs || 60)),
    },
    {
      name: "flaky_lookup",
      description: "The throwing one.",
      inputSchema: { type: "object", properties: { key: { type: "string", maxLength: 8 } } },
      annotations: ro,
      execute: async () => {
        throw new Error("lookup failed: backend unavailable");
      },
    },
    {
      name: "update_cart",
      description: "The mutating one: adds to the cart.",
      inputSchema: { type: "object", properties: { sku: { type: "string", pattern: "^[A-Z]{3}-[0-9]{3}$" }, qty: { type: "integer", minimum: 1, maximum: 5 } }, required: ["sku", "qty"] },
      annotations: { readOnlyHint: false },
      execute: async ({ qty }) => {
        fixture.mutations += 1;
        return text(`added ${qty}`);
      },
    },
    {
      name: "render_chart",
      description: "Returns an image.",
      inputSchema: { type: "object", properties: { kind: { type: "string", enum: ["bar", "line"] } } },
      annotations: ro,
      execute: async () => ({ content: [{ type: "image", data: PNG, mimeType: "image/png" }, { type: "text", text: "chart" }] }),
    },
    {
      name: "ping_empty",
      description: "Returns an empty string (the host substitutes its own text).",
      inputSchema: { type: "object", properties: {} },
      annotations: ro,
      execute: async () => "",
    },
    {
      name: "unicode_numbers",
      description: "Non-ASCII text and awkward JSON numbers.",
      inputSchema: { type: "object", properties: { n: { type: "integer", minimum: 0, maximum: 3 } } },
      annotations: ro,
      execute: async ({ n }) => ({ content: [{ type: "text", text: "héllo ☃ 😀 \u2028 \n \u001f <\/script> \"q\"" }], tiny: 1e-7, huge: 1e21, big: 12345678901234567890, third: 1 / 3, n: n ?? 0 }),
    },
    {
      name: "soft_error",
      description: "Returns an isError result without throwing.",
      inputSchema: { type: "object", properties: { code: { type: "integer", minimum: 400, maximum: 599 } } },
      annotations: ro,
      execute: async ({ code }) => ({ isError: true, content: [{ type: "text", text: `status ${code ?? 500}` }] }),
    },
    {
      name: "echo_note",
      description: "Echoes its input note (the canary tool).",
      inputSchema: { type: "object", properties: { note: { type: "string", maxLength: 64 } }, required: ["note"] },
      annotations: ro,
      execute: async ({ note }) => ({ content: [{ type: "text", text: `you said: ${note}` }], note }),
    },
  ];

  const host = document.modelContext || navigator.modelContext;
  window.__fixtureReady = (async () => {
    if (!host || typeof host.registerTool !== "function") return false;
    for (const tool of tools) {
      const wrapped = Object.assign({}, tool, {
        execute: (input, client) => {
          count(tool.name, input);
          return tool.execute(input, client);
        },
      });
      try {
        await host.registerTool(wrapped);
        fixture.registered.push(tool.name);
      } catch (e) {
        fixture.failed.push([tool.name, String(e && e.name)]);
      }
    }
    return true;
  })();
})();
