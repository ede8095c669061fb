// Types of `context-compactor/lite`: the API of the full entry (js/web.d.ts) from the
// `lite` build, which leaves out the log importers and the embedded memory index. Those
// two keep their names and throw a ContextCompactorError with `code: "not_in_lite"`
// whose message names what is missing and the entry that has it (issue 15).
export * from './web.js'
export { default } from './web.js'
import type { ContextCompactorError } from './index.js'

/** Not in the lite build: always throws `not_in_lite` ({@link ContextCompactorError}).
 * Import `importTranscript` from `context-compactor` to convert log files. */
export function importTranscript(kind: string, text: string, options?: unknown): never

/** Not in the lite build: `new MemoryIndex()` and `MemoryIndex.restore()` always throw
 * `not_in_lite`. Use the `store` hook of `compact` (or a `memory` object with
 * `add(records)`) and `recallFromStore`, or import `MemoryIndex` from `context-compactor`. */
export class MemoryIndex {
  /** @throws {ContextCompactorError} `not_in_lite`, always. */
  constructor(options?: unknown)
  /** @throws {ContextCompactorError} `not_in_lite`, always. */
  static restore(bytes: unknown): never
}
