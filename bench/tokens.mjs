// The 4-bytes-a-token estimate against a real tokenizer (js-tiktoken o200k_base, through
// the countTokens hook, I-4) on the real transcripts in ../shared/transcripts: one line a
// transcript with both estimate_transcript_tokens values and their ratio. A benchmark of
// accuracy, not a test: it asserts nothing.
// Usage: node bench/tokens.mjs
import { readdirSync, readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { getEncoding } from 'js-tiktoken'
import { ContextCompactor, importTranscript } from 'context-compactor'

const shared = fileURLToPath(new URL('../../shared/transcripts/', import.meta.url))
if (!existsSync(shared)) { console.error('no ../shared/transcripts'); process.exit(1) }
const enc = getEncoding('o200k_base')
const countTokens = (texts) => texts.map((t) => enc.encode(t).length)
const rows = []
for (const dir of ['claude-code', 'swe-agent', 'tau-bench', 'glaive']) {
  for (const name of readdirSync(join(shared, dir))) {
    if (!/\.(jsonl|json|traj)$/.test(name)) continue
    const { format, document } = importTranscript('auto', readFileSync(join(shared, dir, name), 'utf8'))
    const c = new ContextCompactor({ format, contextWindow: 10_000_000 })
    const value = (d) => d.signals.find((s) => s.name === 'estimated_transcript_tokens').value
    const estimate = value(c.check(null, document))
    const counted = value(c.check(null, document, { countTokens }))
    rows.push({ transcript: `${dir}/${name}`, estimate, counted, ratio: estimate / counted })
  }
}
console.log('| transcript | estimate (4 bytes a token) | o200k count of the same JSON | estimate / count |')
console.log('|---|---|---|---|')
for (const r of rows) console.log(`| ${r.transcript} | ${r.estimate} | ${r.counted} | ${r.ratio.toFixed(2)} |`)
