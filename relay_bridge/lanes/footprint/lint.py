"""Descriptor lint for footprint: the one rule set (relay_bridge.core.lint: every rule, its severity and source)
over each tool, and the declarative-form checks over a form tool's controls, as report rows.

Unlike validation (inputs.py), a finding never refuses the input: it is shown next to the bytes. A row is
{code, severity, source, pointer, message}: the pointer is RFC 6901 into the tool definition, the message our
reason followed by the page's text that matched (the report carries the descriptions anyway).
"""

from __future__ import annotations

from typing import Any

from relay_bridge.core.lint import RULES, Hit, lint_descriptor
from relay_bridge.core.lint.redefinition import Change, said


def row(hit: Hit) -> dict[str, str]:
    message = f"{hit.reason}: {hit.quote!r}" if hit.quote else hit.reason
    return {"code": hit.code, "severity": hit.severity, "source": hit.rule.source, "pointer": hit.pointer, "message": message}


def lint_tool(tool: dict[str, Any]) -> list[dict[str, str]]:
    """Findings for one validated tool definition, in a fixed order."""
    return [row(h) for h in lint_descriptor(tool)]


def rug_pull(changes: tuple[Change, ...]) -> dict[str, str]:
    """The row of a tool whose definition changed since its first registration in the session."""
    rule = RULES["rug-pull"]
    at = "/" + changes[0].field if changes[0].field != "other" else ""
    return {
        "code": rule.code,
        "severity": rule.severity,
        "source": rule.source,
        "pointer": at,
        "message": f"changed since first registered: {said(changes)}",
    }


def _form_row(code: str, at: str, message: str) -> dict[str, str]:
    rule = RULES[code]
    return {"code": code, "severity": rule.severity, "source": rule.source, "pointer": at, "message": message}


def lint_form(form: dict[str, Any]) -> list[dict[str, str]]:
    """Findings for a declarative (form) tool's controls, as the page agent reports them (`form.fields`: element,
    param, described, labeled, required). Pointers name the field: /form/fields/<i>."""
    out: list[dict[str, str]] = []
    fields = form.get("fields") if isinstance(form, dict) else None
    for i, field in enumerate(fields if isinstance(fields, list) else []):
        if not isinstance(field, dict):
            continue
        at = f"/form/fields/{i}"
        element = str(field.get("element") or "a control")[:128]
        param = field.get("param")
        if not param:
            if field.get("required"):
                why = (
                    f"{element} is required but has no name: it is no parameter, so an agent cannot fill it and the browser refuses every submission"
                )
                out.append(_form_row("required-without-name", at, why))
            continue
        if not field.get("described"):
            out.append(
                _form_row(
                    "missing-param-description", at, f"parameter {param!r} ({element}) has no toolparamdescription: the model sees only its name"
                )
            )
        if not field.get("labeled"):
            why = f"{element} has no label (<label>, aria-label or title): the user confirming the call cannot tell what it is"
            out.append(_form_row("unlabeled-input", at, why))
    return out
