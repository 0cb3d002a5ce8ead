// The report tool's descriptor (get_perf_report): made by profilerTool() and registerReportTool(), which the
// eager part of the agent offers before the console API's own module has loaded.

export const REPORT_VIEWS = {
  summary: "the session, the split, a line a tool; under 1 KB",
  tools: "summary and every tool's row",
  spans: "tools and the newest spans (limit, tool and since filter them)",
}

/** The report tool's descriptor (profilerTool() and registerReportTool() both use it). */
export function reportToolDescriptor(execute, { name = "get_perf_report", title = "Performance report" } = {}) {
  return {
    name,
    title,
    description:
      "This page's WebMCP performance, measured by wmcp-top: execute() time per tool, result bytes and estimated tokens, " +
      "and the host + model gaps between calls. Views: " +
      Object.entries(REPORT_VIEWS)
        .map(([k, v]) => `${k} (${v})`)
        .join("; ") +
      ". Ask for summary first.",
    inputSchema: {
      type: "object",
      properties: {
        view: { type: "string", enum: Object.keys(REPORT_VIEWS), default: "summary", description: "how much to return" },
        tool: { type: "string", description: "only this tool" },
        limit: { type: "integer", minimum: 1, maximum: 500, default: 50, description: "spans view: the newest N spans" },
        since: { type: "integer", minimum: 0, description: "spans view: only spans with a higher seq" },
      },
      additionalProperties: false,
    },
    annotations: { title, readOnlyHint: true },
    execute,
  }
}
