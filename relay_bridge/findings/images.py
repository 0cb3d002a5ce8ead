"""Rule `images.reencode`: image results that would weigh much less as a fitted JPEG.

Input: the page's image facts, per sampled call (at most one image per tool per 30 s, re-encoded in the page off
the call path): `bytes` (decoded), `fit_bytes` (JPEG at quality 0.8, scaled so the longer side is at most
1568 px), the pixel sizes before and after.

Formula, per tool over its n samples:
- saved bytes a call      b = mean(max(0, bytes - fit_bytes));
- tokens a call (the design's byte rule, what wmcp-top's estimator and the summary line count, and what
  Chromium's host ships: the result as JSON text)     t = ceil(b / 4);
- image calls seen        c = the tool's calls whose result carried an image (relay_bridge.findings.common);
- saving                  t x c tokens, b x c bytes.
The image-token rule of vision models is stated beside it, in the evidence, not ranked on: tokens =
ceil(width x height / 750) (Anthropic's published rule for images up to 1568 px on the long side), for the
original and the fitted size. A provider that downscales large images itself charges the fitted size either way;
the bytes are saved regardless.

Reported when b >= max(MIN_SAVED_BYTES, MIN_SAVED_SHARE x mean(bytes)). Each sample's bytes are the page's
claim, held to the span's measured `imageBytes`: no saving exceeds what the calls carried.
Assumptions: the samples stand for the tool's other image calls; a JPEG at q0.8 is acceptable for the image
(photos, renders; not line art that needs lossless edges: then the fitted size alone, as PNG, is the fix).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from relay_bridge.findings.common import mean, seen_calls, tools_by_name
from relay_bridge.findings.inputs import SessionInput, SpanInput
from relay_bridge.findings.model import Finding, Saving, tokens

RULE = "images.reencode"
QUALITY = 0.8
MAX_SIDE = 1568
PIXELS_PER_TOKEN = 750
MIN_SAVED_BYTES = 1024
MIN_SAVED_SHARE = 0.10
FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WebP", "image/gif": "GIF", "image/avif": "AVIF", "image/bmp": "BMP"}


def pixel_tokens(width: int, height: int) -> int:
    """The vision models' image-token rule: ceil(width x height / 750)."""
    return math.ceil(width * height / PIXELS_PER_TOKEN) if width > 0 and height > 0 else 0


def find(s: SessionInput, by_tool: Mapping[str, list[SpanInput]]) -> list[Finding]:
    if not s.facts:  # the page sent none (yet): nothing to read
        return []
    out = []
    tools = tools_by_name(s)
    for name, ring in by_tool.items():
        pairs = [(span, img) for span in ring if (f := s.facts.get(span.seq)) is not None and (img := f.image) is not None]
        if not pairs:
            continue
        samples = [img for _, img in pairs]
        # The page's claim, held to what the span carried: never more saved than the image's own text (base64,
        # which is longer than the decoded bytes) on that call.
        saved = mean([min(max(0, i.bytes - i.fit_bytes), span.imageBytes) for span, i in pairs])
        size = mean([min(max(0, i.bytes), span.imageBytes) for span, i in pairs])
        if saved < max(MIN_SAVED_BYTES, MIN_SAVED_SHARE * size):
            continue
        calls = max(len(samples), seen_calls(tools.get(name), ring, lambda sp: sp.imageBytes > 0))
        per_call = tokens(saved)
        big = max(samples, key=lambda i: i.bytes)
        kind = FORMATS.get(big.mime.lower(), "an image") if isinstance(big.mime, str) else "an image"
        fitted = (big.fit_width, big.fit_height) != (big.width, big.height)
        do = (
            f"return it as JPEG (quality {QUALITY})"
            + (f" at most {MAX_SIDE} px on the long side" if fitted else "")
            + f", not {kind} {big.width}x{big.height}"
        )
        evidence: dict[str, int | float] = {
            "samples": len(samples),
            "imageCalls": calls,
            "width": big.width,
            "height": big.height,
            "bytes": round(size),
            "jpegBytes": round(mean([i.jpeg_bytes for i in samples])),
            "fitBytes": round(mean([i.fit_bytes for i in samples])),
            "fitWidth": big.fit_width,
            "fitHeight": big.fit_height,
            "byteTokens": tokens(size),
            "fitByteTokens": tokens(mean([i.fit_bytes for i in samples])),
            "pixelTokens": pixel_tokens(big.width, big.height),
            "fitPixelTokens": pixel_tokens(big.fit_width, big.fit_height),
        }
        out.append(Finding(RULE, s.id, (name,), evidence, do, Saving(per_call * calls, "calls", per_call, calls, bytes=round(saved * calls))))
    return out
