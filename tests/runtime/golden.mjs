// The golden compaction (J-5), shared by every runtime test: Node (ESM, CJS), Deno,
// workerd, Chromium and the esbuild bundle all import this file (or inline it) and must
// produce the same bytes. Uses only what every runtime has: JSON, TextEncoder, crypto.subtle.

/** Options of the golden compactor: a small window so the 32-message transcript compacts. */
export const GOLDEN_OPTIONS = { format: 'openai-chat', profile: 'default', contextWindow: 8000 }

/**
 * A deterministic, synchronous summarize hook: the text depends only on the request.
 * @param {{ kind: string, messages: { role: string, content: string }[], maxOutputTokens: number }} req
 */
export function goldenSummarize(req) {
  const chars = req.messages.reduce((n, m) => n + m.content.length, 0)
  const roles = req.messages.map((m) => m.role[0]).join('')
  return `Golden ${req.kind}: ${req.messages.length} messages (${roles}), ${chars} characters; budget ${req.maxOutputTokens} tokens. The zero-total invoice bug is in the handler; a 422 with the field name is requested.`
}

/** Lower-case hex SHA-256 of a string's UTF-8 bytes. */
export async function sha256Hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('')
}

/**
 * Compact `transcript` with the golden options and hook; returns the result's
 * `JSON.stringify` text, its byte length and SHA-256.
 * @param {{ ContextCompactor: any }} api an initialised module of this package
 */
export async function runGolden(api, transcript) {
  const compactor = new api.ContextCompactor(GOLDEN_OPTIONS)
  // memoryRecords: the projected records are pinned too (J-5 across runtimes), not only their ids
  const result = await compactor.compact(null, transcript, { summarize: goldenSummarize, memoryRecords: 'result' })
  const text = JSON.stringify(result)
  return { status: result.status, bytes: new TextEncoder().encode(text).length, sha256: await sha256Hex(text), text }
}
