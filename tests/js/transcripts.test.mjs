// The CLI over every real transcript in ../shared/transcripts (claude-code, swe-agent,
// tau-bench, glaive): each imports, compacts at a window small enough to force a
// compaction, and the rewrite validates and fits the window. Runs whenever ../shared
// exists; required under CI=true.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, statSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { ContextCompactor, importTranscript } from 'context-compactor'

const root = fileURLToPath(new URL('../..', import.meta.url))
const shared = join(root, '..', 'shared', 'transcripts')
const cli = join(root, 'bin', 'context-compactor.mjs')

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) return files(p)
    return /\.(jsonl|json|traj)$/.test(name) ? [p] : []
  })
}

if (!existsSync(shared)) {
  test('../shared/transcripts is present', { skip: process.env.CI !== 'true' && 'no ../shared here' }, () => {
    assert.fail('../shared/transcripts is required under CI=true')
  })
} else {
  for (const file of files(shared)) {
    for (const profile of ['default', 'kerkov', 'meerkat']) {
      test(`CLI compacts ${relative(shared, file)} (profile ${profile}) to a valid rewrite under the window`, () => {
        const { format, document } = importTranscript('auto', readFileSync(file, 'utf8'))
        const est = new ContextCompactor({ format, profile }).check(null, document, {}).signals.find(s => s.name === 'estimated_transcript_tokens')
        const before = est ? est.value : 20000
        // at least one compaction: a window below the transcript's own size
        let window = Math.max(4000, Math.min(16000, Math.floor(before / 2)))
        const run = (w) => JSON.parse(execFileSync('node', [cli, 'compact', file, '--json', '--context-window', String(w), '--profile', profile], { maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'ignore'] }))
        let out = run(window)
        if (out.status === 'cannot_fit') {
          // allowed only when its reason is true: the floor's parts add up and are over the budget
          const m = /floor \((\d+) tokens: system (\d+), tools (\d+), protected request (\d+), findings ledger (\d+), output reserve (\d+)\) is over the budget of (\d+) tokens/.exec(out.reason)
          assert.ok(m, `cannot_fit names its floor: ${out.reason}`)
          const [floor, sys, tools, req, ledger, reserve, budget] = m.slice(1).map(Number)
          assert.equal(floor, sys + tools + req + ledger + reserve)
          assert.ok(floor > budget)
          window = 8000
          out = run(window)
        }
        assert.equal(out.status, 'compacted', `${out.status}: ${out.reason}`)
        assert.equal(out.validation.ok, true)
        assert.ok(out.validation.checks.includes('provider_pairing'))
        assert.ok(out.validation.checks.includes('user_text_kept'))
        if (out.after.estimatedTokens >= window) {
          // N-4: said so, with the figures. Today only where the importer types tool
          // output or skill expansions as user text (SWE-agent observations, Claude Code
          // isMeta rows: issue 12 items 6 and 9), which N-1 then quotes or protects
          assert.equal(out.overWindow?.limit, 'context_window', JSON.stringify(out.overWindow))
          assert.equal(out.overWindow.by, out.overWindow.tokens - window)
          assert.ok(out.events.some(e => e.data?.code === 'over_window'))
          assert.match(relative(shared, file), /^(claude-code|swe-agent)\//, `after ${out.after.estimatedTokens} tokens < window ${window}`)
        }
        assert.ok(out.after.bytes < out.before.bytes)
        const offsets = [...out.rewrite.retained.map(r => r.source), ...out.rewrite.discarded].sort((a, b) => a - b)
        assert.equal(offsets.length, out.before.messages)
      })
    }
  }
}
