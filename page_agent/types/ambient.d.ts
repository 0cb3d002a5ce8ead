// Names the agent reads only where they exist, declared for `tsc --checkJs` (nothing here is shipped).
// The extension's worlds have `chrome`; node (the agent's own tests) has `process`. Both are feature-tested
// before use, so their shapes are left open.
declare const chrome: any
declare const process: any
// V8's: how many frames a stack keeps (the agent reads its own depth with it).
interface ErrorConstructor {
  stackTraceLimit?: number
}
interface Window {
  __WMCP_CONFIG__?: Record<string, unknown>
}
