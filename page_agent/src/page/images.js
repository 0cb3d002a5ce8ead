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

/**
 * Decode one image and re-encode it: the work itself. The fitted size scales the longer side to maxSide
 * (FIT_MAX_SIDE), each side rounded to the nearest pixel and at least 1. Self-contained (it runs in a worker from its own source
 * text): it reads only its parameters and the globals of `g`. Resolves {facts, syncMs} (facts null where the
 * browser cannot decode it or it is too large); syncMs is the time of its own synchronous steps.
 * @param {string} data  base64
 * @param {{quality:number, maxSide:number, maxPixels:number, mime:string}} o  `mime` as sniffMime read it
 * @param {any} g
 * @returns {Promise<{facts: ImageFacts|null, syncMs: number}>}
 */
export async function reencode(data, o, g) {
  const clock = () => g.performance.now()
  let syncMs = 0
  let t = clock()
  let bytes = null
  try {
    if (typeof g.Uint8Array.fromBase64 === "function") bytes = g.Uint8Array.fromBase64(data.replace(/\s+/g, ""))
    else {
      const bin = g.atob(data)
      bytes = new g.Uint8Array(bin.length)
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i)
    }
  } catch {
    bytes = null
  }
  if (!bytes) return { facts: null, syncMs: clock() - t }
  const blob = new g.Blob([bytes], o.mime === "image/unknown" ? {} : { type: o.mime })
  syncMs += clock() - t
  let bitmap
  try {
    bitmap = await g.createImageBitmap(blob)
  } catch {
    return { facts: null, syncMs }
  }
  const encode = (/** @type {number} */ w, /** @type {number} */ h) => {
    const canvas = new g.OffscreenCanvas(w, h)
    canvas.getContext("2d").drawImage(bitmap, 0, 0, w, h)
    return canvas.convertToBlob({ type: "image/jpeg", quality: o.quality })
  }
  try {
    const width = bitmap.width
    const height = bitmap.height
    if (!width || !height || width * height > o.maxPixels) return { facts: null, syncMs }
    const side = Math.max(width, height)
    const k = side > o.maxSide ? o.maxSide / side : 1
    const fitWidth = k === 1 ? width : Math.max(1, Math.round(width * k))
    const fitHeight = k === 1 ? height : Math.max(1, Math.round(height * k))
    t = clock()
    const full = encode(width, height)
    syncMs += clock() - t
    const jpeg = await full
    let fit = jpeg
    if (k !== 1) {
      t = clock()
      const scaled = encode(fitWidth, fitHeight)
      syncMs += clock() - t
      fit = await scaled
    }
    return { facts: { mime: o.mime, width, height, bytes: bytes.length, jpegBytes: jpeg.size, fitBytes: fit.size, fitWidth, fitHeight }, syncMs }
  } finally {
    try {
      bitmap.close()
    } catch {
      /* already closed */
    }
  }
}

// The worker's whole program: reencode, and a message loop. Made once, from reencode's own source.
const WORKER_SOURCE = `"use strict";const reencode = ${reencode.toString().replace(/^async function reencode/, "async function")};
onmessage = (e) => { const m = e.data; reencode(m.data, m.o, self).then((r) => postMessage({ id: m.id, r }), () => postMessage({ id: m.id, r: { facts: null, syncMs: 0 } })) }`
const WORKER_TIMEOUT_MS = 20_000

/** @type {WeakMap<object, {broken: boolean}>} per global: the worker could not be made (CSP, Trusted Types, no Worker) */
const workerState = new WeakMap()

/**
 * Run `reencode` in a worker (a Blob URL): the decoding and both encodings leave the page's main thread, which
 * only copies the base64 text into the message. Null where the page allows no such worker.
 * @param {any} g @param {string} data @param {object} o
 * @returns {Promise<{facts: ImageFacts|null, syncMs: number}>|null}
 */
function inWorker(g, data, o) {
  const state = workerState.get(g) || { broken: false }
  workerState.set(g, state)
  if (state.broken || typeof g.Worker !== "function" || !g.URL || typeof g.URL.createObjectURL !== "function") return null
  let worker
  let url = null
  try {
    url = g.URL.createObjectURL(new g.Blob([WORKER_SOURCE], { type: "text/javascript" }))
    worker = new g.Worker(url)
  } catch {
    state.broken = true
    return null
  } finally {
    if (url) {
      try {
        g.URL.revokeObjectURL(url)
      } catch {
        /* nothing to free */
      }
    }
  }
  return new Promise((resolve) => {
    let done = false
    const finish = (/** @type {{facts: ImageFacts|null, syncMs: number}|null} */ r) => {
      if (done) return
      done = true
      g.clearTimeout(timer)
      try {
        worker.terminate()
      } catch {
        /* gone */
      }
      resolve(r)
    }
    const timer = g.setTimeout(() => finish({ facts: null, syncMs: 0 }), WORKER_TIMEOUT_MS)
    worker.onmessage = (/** @type {MessageEvent} */ e) => finish(e.data && e.data.r ? e.data.r : { facts: null, syncMs: 0 })
    // A worker the page's policy refused fails here, before any answer: this page gets the in-page path from now.
    worker.onerror = (/** @type {Event} */ e) => {
      try {
        e.preventDefault()
      } catch {
        /* not cancelable */
      }
      state.broken = true
      finish(null)
    }
    try {
      worker.postMessage({ id: 1, data, o })
    } catch {
      state.broken = true
      finish(null)
    }
  })
}

/**
 * Re-encode one image and measure it: in a worker where the page allows one, else on the main thread (still in
 * an idle callback). Resolves null where the browser cannot. `cost.ms` gets the main thread's share of the time
 * of our own synchronous steps (in a worker: none of the decoding or encoding).
 * @param {string} data  base64
 * @param {{g?: any, cost?: {ms:number, images:number, inPage?: number}, worker?: boolean}} [o]
 * @returns {Promise<ImageFacts|null>}
 */
export async function measureImage(data, o = {}) {
  const g = o.g || globalThis
  const cost = o.cost || { ms: 0, images: 0 }
  if (typeof g.createImageBitmap !== "function" || typeof g.OffscreenCanvas !== "function" || typeof g.Blob !== "function") return null
  if (data.length > MAX_IMAGE_BASE64) return null
  const t = g.performance.now()
  // The format from the first bytes only (a dozen base64 characters), never the page's own mimeType text.
  let head = null
  try {
    const bin = g.atob(data.slice(0, 16).replace(/[^A-Za-z0-9+/]/g, ""))
    head = new Uint8Array(bin.length)
    for (let i = 0; i < bin.length; i++) head[i] = bin.charCodeAt(i)
  } catch {
    head = null
  }
  if (!head) return null
  const opts = { quality: JPEG_QUALITY, maxSide: FIT_MAX_SIDE, maxPixels: MAX_PIXELS, mime: sniffMime(head) }
  const pending = o.worker === false ? null : inWorker(g, data, opts)
  cost.ms += g.performance.now() - t
  let r = pending ? await pending : null
  if (r === null) {
    r = await reencode(data, opts, g)
    cost.ms += r.syncMs
    cost.inPage = (cost.inPage || 0) + 1
  }
  if (r.facts) cost.images++
  return r.facts
}
