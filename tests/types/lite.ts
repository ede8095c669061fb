// Compiled by `tsc --noEmit -p tests/types` (tests/js/types.test.mjs): a typed consumer of
// `context-compactor/lite` (issue 15). The API of the full entry, with `importTranscript`
// and `MemoryIndex` typed as throwing; lines marked @ts-expect-error must stay errors.
import init, { ContextCompactor, importTranscript, initSync, MemoryIndex, type CompactResult, type ErrorCode } from 'context-compactor/lite'
import liteWasm from 'context-compactor/lite/wasm'

export async function lite(transcript: string): Promise<CompactResult> {
  await init()
  initSync({ module: liteWasm })
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const code: ErrorCode = 'not_in_lite'
  void code
  // importTranscript never returns in the lite build
  const never: never = importTranscript('claude-code-jsonl', '')
  void never
  // @ts-expect-error the lite MemoryIndex has no recall: it cannot be constructed
  new MemoryIndex().recall('s', 'q')
  return c.compact(null, transcript, { summarize: () => 'summary' })
}
