// @ts-check
// Image facts: the format, pixel size and bytes of a result's largest image, and what the same pixels weigh
// re-encoded as JPEG (quality JPEG_QUALITY), as they are and scaled so the longer side is at most FIT_MAX_SIDE
// (the largest side a model takes without scaling it down itself). Measured by really re-encoding in the
// page (createImageBitmap, OffscreenCanvas.convertToBlob), never on the call path (facts.js runs it in an
// idle callback) and sampled (facts.js: one image per tool per IMAGE_EVERY_MS). The image never leaves.

export const JPEG_QUALITY = 0.8
export const FIT_MAX_SIDE = 1568
export const MAX_IMAGE_BASE64 = 16 * 1024 * 1024 // larger images are not re-encoded
export const MAX_PIXELS = 40_000_000

/** @typedef {{mime:string, width:number, height:number, bytes:number, jpegBytes:number, fitBytes:number, fitWidth:number, fitHeight:number}} ImageFacts */

/**
 * The largest image item ({type:"image", data: base64}) of an MCP envelope (an object, or its JSON text),
 * or null. @param {unknown} value @returns {string|null}
 */
export function largestImage(value) {
  let v = value
  if (typeof v === "string") {
    if (v.charCodeAt(0) !== 123 || !v.includes('"image"')) return null
    try {
      v = JSON.parse(v)
    } catch {
      return null
    }
  }
  if (v === null || typeof v !== "object" || !Array.isArray(/** @type {any} */ (v).content)) return null
  let best = null
  for (const item of /** @type {any} */ (v).content) {
    if (!item || typeof item !== "object" || item.type !== "image") continue
    const data = item.data
    if (typeof data === "string" && data.length && (best === null || data.length > best.length)) best = data
  }
  return best
}

/**
 * The format read from the bytes themselves (never the page's own mimeType text).
 * @param {Uint8Array} b @returns {string}
 */
export function sniffMime(b) {
  const at = (/** @type {number[]} */ sig, off = 0) => sig.every((x, i) => b[off + i] === x)
  if (at([0x89, 0x50, 0x4e, 0x47])) return "image/png"
  if (at([0xff, 0xd8, 0xff])) return "image/jpeg"
  if (at([0x47, 0x49, 0x46, 0x38])) return "image/gif"
  if (at([0x52, 0x49, 0x46, 0x46]) && at([0x57, 0x45, 0x42, 0x50], 8)) return "image/webp"
  if (at([0x42, 0x4d])) return "image/bmp"
  if (at([0x66, 0x74, 0x79, 0x70], 4) && (at([0x61, 0x76, 0x69, 0x66], 8) || at([0x61, 0x76, 0x69, 0x73], 8))) return "image/avif"
  return "image/unknown"
}

/** @param {string} data @returns {Uint8Array|null} */
function decodeBase64(data) {
  const U8 = /** @type {any} */ (Uint8Array)
  if (typeof U8.fromBase64 === "function") {
    try {
      return U8.fromBase64(data.replace(/\s+/g, ""))
    } catch {
      return null
    }
  }
  let bin
  try {
    bin = atob(data)
  } catch {
    return null
  }
  const out = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  return out
}

/** The fitted size: the longer side scaled to FIT_MAX_SIDE, rounded, each side at least 1. @param {number} w @param {number} h */
export function fitSize(w, h) {
  const side = Math.max(w, h)
  if (side <= FIT_MAX_SIDE) return { width: w, height: h }
  const k = FIT_MAX_SIDE / side
  return { width: Math.max(1, Math.round(w * k)), height: Math.max(1, Math.round(h * k)) }
}

/**
 * Re-encode one image and measure it. Resolves null where the page cannot (no OffscreenCanvas, an image the
 * browser does not decode, too large). `cost.ms` gets the main-thread time of our own steps.
 * @param {string} data  base64
 * @param {{g?: any, cost?: {ms:number, images:number}}} [o]
 * @returns {Promise<ImageFacts|null>}
 */
export async function measureImage(data, o = {}) {
  const g = o.g || globalThis
  const cost = o.cost || { ms: 0, images: 0 }
  if (typeof g.createImageBitmap !== "function" || typeof g.OffscreenCanvas !== "function" || typeof g.Blob !== "function") return null
  if (data.length > MAX_IMAGE_BASE64) return null
  const clock = () => (g.performance ? g.performance.now() : Date.now())
  let t = clock()
  const bytes = decodeBase64(data)
  if (!bytes) return null
  const mime = sniffMime(bytes)
  const blob = new g.Blob([bytes], mime === "image/unknown" ? {} : { type: mime })
  cost.ms += clock() - t
  let bitmap
  try {
    bitmap = await g.createImageBitmap(blob)
  } catch {
    return null
  }
  try {
    const width = bitmap.width
    const height = bitmap.height
    if (!width || !height || width * height > MAX_PIXELS) return null
    const fit = fitSize(width, height)
    t = clock()
    const full = encode(g, bitmap, width, height)
    cost.ms += clock() - t
    const jpeg = await full
    let fitBlob = jpeg
    if (fit.width !== width || fit.height !== height) {
      t = clock()
      const scaled = encode(g, bitmap, fit.width, fit.height)
      cost.ms += clock() - t
      fitBlob = await scaled
    }
    cost.images++
    return { mime, width, height, bytes: bytes.length, jpegBytes: jpeg.size, fitBytes: fitBlob.size, fitWidth: fit.width, fitHeight: fit.height }
  } finally {
    try {
      bitmap.close()
    } catch {
      /* already closed */
    }
  }
}

/**
 * Draw the bitmap at w x h and start its JPEG encoding.
 * @param {any} g @param {any} bitmap @param {number} w @param {number} h @returns {Promise<Blob>}
 */
function encode(g, bitmap, w, h) {
  const canvas = new g.OffscreenCanvas(w, h)
  const ctx = canvas.getContext("2d")
  ctx.drawImage(bitmap, 0, 0, w, h)
  return canvas.convertToBlob({ type: "image/jpeg", quality: JPEG_QUALITY })
}
