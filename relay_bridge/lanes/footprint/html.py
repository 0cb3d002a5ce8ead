"""One self-contained HTML page for a footprint report: a treemap of servers by bytes, ranked tool rows with
where their bytes go, a search box that filters the rows, repeated-definition pairs and lint findings.

Safety, because descriptors are attacker-controlled text: every input value goes through `esc` (HTML-escaped,
quotes included, hidden and bidirectional characters shown as visible markers, lone surrogates replaced); input
never becomes a URL, a tag, an attribute name, a style or script text. The page loads nothing: inline CSS and
one inline script, and a Content-Security-Policy that allows only that script (by hash) and no fetch, image,
font or frame at all, so even a mistake here could not run injected script or reach the network.
Deterministic: the same report gives the same bytes (no clock, no random ids).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from typing import Any

from relay_bridge.core.breakdown import PARTS
from relay_bridge.lanes.footprint.text import PART_LABELS, plural, repeated_line, where_bytes_go
from relay_bridge.lanes.footprint.treemap import squarify

_HIDDEN = re.compile(
    "[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u00ad\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")
PART_COLORS = {
    "description": "#5b8def",
    "propertyNames": "#49b6a6",
    "propertyDescriptions": "#9b7be0",
    "types": "#7fb35a",
    "constraints": "#d98cc0",
    "enums": "#e0a43c",
    "definitions": "#e06a5b",
    "structure": "#c7ccd1",
    "other": "#8a939c",
}

CSS = """
:root{color-scheme:light dark;--bg:#fbfbfa;--fg:#1d2125;--muted:#5f6b76;--line:#d9dde1;--card:#fff}
@media (prefers-color-scheme:dark){:root{--bg:#15181b;--fg:#e4e7ea;--muted:#9aa5b0;--line:#2c3238;--card:#1c2024}}
*{box-sizing:border-box}
body{margin:0;padding:24px;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.muted{color:var(--muted)}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:10px 14px;min-width:150px}
.card b{display:block;font-size:18px}
#treemap{position:relative;width:100%;height:340px;border:1px solid var(--line);border-radius:6px;overflow:hidden;background:var(--card)}
.cell{position:absolute;overflow:hidden;border:1px solid var(--bg);padding:4px 6px;color:#111;font-size:12px;cursor:pointer}
.cell span{display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
table{border-collapse:collapse;width:100%;background:var(--card)}
th,td{border-bottom:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
th{font-weight:600;position:sticky;top:0;background:var(--card)}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr[hidden]{display:none}
.bar{display:flex;height:12px;width:180px;border-radius:2px;overflow:hidden;background:var(--line)}
.bar i{display:block;height:100%}
.legend i{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px;border-radius:2px}
input[type=search]{font:inherit;padding:6px 10px;width:min(480px,100%);border:1px solid var(--line);border-radius:6px;background:var(--card);color:var(--fg)}
.v{unicode-bidi:isolate;overflow-wrap:anywhere}
.hid{background:#e06a5b;color:#fff;border-radius:2px;padding:0 2px;font-size:11px}
.sev-high{color:#d33;font-weight:bold}.sev-error{color:#d33}.sev-suspicious{color:#c26a00}.sev-warning{color:var(--muted)}
.warn{border-left:4px solid #c26a00;padding:4px 10px;background:var(--card)}
code{font-size:12px}
details summary{cursor:pointer}
pre.schema{margin:4px 0;max-height:320px;overflow:auto;font-size:12px;white-space:pre-wrap}
p.desc{margin:4px 0}
#server-filter{font:inherit;padding:4px 10px;border:1px solid var(--line);border-radius:12px;background:var(--card);color:var(--fg);cursor:pointer}
"""

SCRIPT = """
(function () {
  "use strict";
  var box = document.getElementById("search");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#tools tbody tr"));
  var count = document.getElementById("count");
  var chip = document.getElementById("server-filter");
  var server = null;
  function apply() {
    var terms = box.value.toLowerCase().split(/\\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (row) {
      var hay = row.getAttribute("data-search") || "";
      var ok = (server === null || row.getAttribute("data-server") === server) &&
        terms.every(function (t) { return hay.indexOf(t) !== -1; });
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " tools shown";
    chip.hidden = server === null;
    chip.textContent = server === null ? "" : "server: " + server + " \u00d7";
  }
  box.addEventListener("input", apply);
  chip.addEventListener("click", function () { server = null; apply(); });
  Array.prototype.forEach.call(document.querySelectorAll("#treemap .cell"), function (cell) {
    cell.addEventListener("click", function () {
      var name = cell.getAttribute("data-server");
      server = server === name ? null : name;
      apply();
    });
  });
  apply();
})();
"""


def esc(value: Any) -> str:
    """Input text as safe HTML: escaped, hidden characters made visible, lone surrogates replaced."""
    text = _SURROGATE.sub("\ufffd", str(value))
    parts = []
    last = 0
    for m in _HIDDEN.finditer(text):
        parts.append(html.escape(text[last : m.start()], quote=True))
        parts.append(f'<span class="hid" title="hidden character">U+{ord(m.group()):04X}</span>')
        last = m.end()
    parts.append(html.escape(text[last:], quote=True))
    return "".join(parts)


def attr(value: Any) -> str:
    """Input text for an attribute value (always double-quoted by the caller): escaped, no markup."""
    return html.escape(_SURROGATE.sub("\ufffd", str(value)), quote=True)


def _pct(v: float) -> str:
    return f"{v:.3f}".rstrip("0").rstrip(".") + "%"


def _hue(i: int) -> str:
    return f"hsl({(i * 137.508) % 360:.1f},55%,72%)"


def _bar(parts: dict[str, int], total: int) -> str:
    if not total:
        return '<div class="bar"></div>'
    spans = "".join(
        f'<i style="width:{_pct(100 * parts[p] / total)};background:{PART_COLORS[p]}" title="{PART_LABELS[p]} {parts[p]} B"></i>'
        for p in PARTS
        if parts[p]
    )
    return f'<div class="bar">{spans}</div>'


def _treemap(servers: list[dict[str, Any]]) -> str:
    ranked = sorted(range(len(servers)), key=lambda i: (-servers[i]["bytes"], i))
    cells = squarify([servers[i]["bytes"] for i in ranked])
    out = []
    for cell in cells:
        idx = ranked[cell.index]
        s = servers[idx]
        out.append(
            f'<div class="cell" data-server="{attr(s["name"])}" title="{attr(s["name"])}: {s["bytes"]} bytes, '
            f'{s["tools"]} tools" style="left:{_pct(cell.x)};top:{_pct(cell.y)};width:{_pct(cell.w)};'
            f'height:{_pct(cell.h)};background:{_hue(idx)}"><span class="v">{esc(s["name"])}</span>'
            f"<span>{s['bytes']} B · {_pct(100 * s['share'])}</span></div>"
        )
    return "".join(out)


def _definition(t: dict[str, Any]) -> str:
    """The tool's description and inputSchema, folded away until asked for (a `<details>`, no script)."""
    desc = t["description"]
    body = f'<p class="v desc">{esc(desc)}</p>' if desc else '<p class="muted">no description</p>'
    schema = t["inputSchema"]
    body += (
        f'<pre class="v schema">{esc(json.dumps(schema, indent=1, ensure_ascii=False))}</pre>'
        if schema is not None
        else '<p class="muted">no inputSchema</p>'
    )
    return f'<details><summary><b class="v">{esc(t["name"])}</b></summary>{body}</details>'


def _tool_rows(report: dict[str, Any]) -> str:
    out = []
    for t in report["tools"]:
        hay = " ".join((t["server"], t["name"], t["description"] or "")).lower()
        out.append(
            f'<tr data-server="{attr(t["server"])}" data-search="{attr(hay)}"><td class="n">{t["rank"]}</td><td class="v">{esc(t["server"])}</td>'
            f'<td>{_definition(t)}</td><td class="n">{t["bytes"]}</td><td class="n">~{t["roughTokens"]}</td>'
            f'<td class="n">{_pct(100 * t["share"])}</td><td>{_bar(t["breakdown"], t["bytes"])}<small class="muted">{where_bytes_go(t["breakdown"], t["bytes"])}</small></td>'
            f'<td class="n">{t["findings"] or ""}</td></tr>'
        )
    return "".join(out)


def _pairs(report: dict[str, Any]) -> str:
    pairs = report["pairs"]
    head = f"<p>{esc(repeated_line(pairs))}.</p>"
    if pairs["truncated"]:
        head += f'<p class="warn">Only {pairs["kept"]} of {pairs["found"]} pairs are listed (truncated; {pairs["notKept"]} not kept).</p>'
    sim = report["similarity"]
    if not sim["complete"]:
        head += (
            f'<p class="warn">The similarity scan is incomplete: its budget of {sim["budget"]} word-membership '
            f"operations ran out with {sim['notExamined']} of {sim['eligiblePairs']} eligible pairs not examined.</p>"
        )
    if not pairs["items"]:
        return head
    rows = "".join(
        f'<tr><td class="v">{esc(p["a"]["server"])} / {esc(p["a"]["tool"])}</td><td class="v">{esc(p["b"]["server"])} / '
        f"{esc(p['b']['tool'])}</td><td>{', '.join(esc(label) for label in p['labels'])}</td>"
        f'<td class="n">{"" if p["jaccard"] is None else p["jaccard"]}</td></tr>'
        for p in pairs["items"]
    )
    return head + f'<table id="pairs"><thead><tr><th>tool</th><th>tool</th><th>labels</th><th>Jaccard</th></tr></thead><tbody>{rows}</tbody></table>'


def _lint(report: dict[str, Any]) -> str:
    if not report["lint"]:
        return "<p>No findings.</p>"
    rows = "".join(
        f'<tr><td class="sev-{attr(f["severity"])}">{esc(f["severity"])}</td><td>{esc(f["code"])}</td>'
        f'<td class="v">{esc(f["server"])} / {esc(f["tool"])}</td><td><code class="v">{esc(f["pointer"])}</code></td>'
        f'<td class="v">{esc(f["message"])}</td><td>{esc(f["source"])}</td></tr>'
        for f in report["lint"]
    )
    head = "<thead><tr><th>severity</th><th>rule</th><th>tool</th><th>where</th><th>finding</th><th>source</th></tr></thead>"
    return f'<table id="lint">{head}<tbody>{rows}</tbody></table>'


def render_html(report: dict[str, Any]) -> str:
    """The page: everything comes from the report (descriptions and schemas included)."""
    s = report["summary"]
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
    csp = (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src 'none'; "
        "font-src 'none'; connect-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'"
    )
    legend = "".join(f'<i style="background:{PART_COLORS[p]}"></i>{PART_LABELS[p]} {s["breakdown"][p]} B' for p in PARTS)
    sev = s["findingsBySeverity"]
    notes = "".join(f'<li class="v">{esc(n)}</li>' for n in report["notes"])
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>wmcp-top footprint</title>
<style>{CSS}</style>
</head>
<body>
<h1>wmcp-top footprint</h1>
<p class="muted v">{esc(report["source"]["label"])} · canonical tool definition bytes (UTF-8, keys sorted)</p>
<div class="cards">
<div class="card"><b>{s["servers"]}</b>servers</div>
<div class="card"><b>{s["tools"]}</b>tool definitions</div>
<div class="card"><b>{s["catalogBytes"]}</b>canonical catalog bytes</div>
<div class="card"><b>{s["definitionBytes"]}</b>sum of definitions (envelope +{s["envelopeBytes"]})</div>
<div class="card"><b>~{s["roughTokens"]}</b>rough tokens, {esc(s["tokenFormula"])}</div>
<div class="card"><b>{report["pairs"]["found"]}</b>repeated-definition pairs</div>
<div class="card"><b>{sum(sev.values())}</b>lint findings ({sev["high"]} high, {plural(sev["error"], "error", "errors")}, {plural(sev["warning"], "warning", "warnings")}, {sev["suspicious"]} suspicious)</div>
</div>
<h2>Servers by bytes</h2>
<div id="treemap" role="img" aria-label="treemap of servers by canonical bytes">{_treemap(report["servers"])}</div>
<p class="muted">Area is the sum of a server's canonical tool definition bytes. Click a server to show only its tools (again, or the button by the search box, to show all). Click a tool to see its description and inputSchema.</p>
<h2>Tools, largest first</h2>
<p><input id="search" type="search" placeholder="filter tools by server, name or description" autocomplete="off"> <button id="server-filter" type="button" hidden></button> <span id="count" class="muted"></span></p>
<p class="legend muted">where the bytes go:{legend}</p>
<table id="tools"><thead><tr><th>#</th><th>server</th><th>tool</th><th>bytes</th><th>rough tokens</th><th>share</th><th>where the bytes go</th><th>findings</th></tr></thead>
<tbody>{_tool_rows(report)}</tbody></table>
<h2>Repeated definitions</h2>
{_pairs(report)}
<h2>Lint</h2>
{_lint(report)}
{f"<h2>Notes</h2><ul>{notes}</ul>" if notes else ""}
<p class="muted">Tokens are a rough estimate, {esc(s["tokenFormula"])} of the canonical catalog bytes: not a tokenizer count
and not what a client really puts in context. Lint rules for hidden characters and model-directed text are heuristics.</p>
<script>{SCRIPT}</script>
</body>
</html>
"""
