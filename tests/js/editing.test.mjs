// Context editing through the package (K-1..K-4): a check with only `clearToolUses`
// configured, the compaction that follows without a summarize call, the artifact store
// hook, the cache report and the Anthropic cache breakpoints of `toRequest`.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { ContextCompactor, Session } from 'context-compactor'

const FORMATS = ['openai-chat', 'anthropic', 'gemini', 'openai-responses', 'ai-sdk', 'canonical']
const fixture = (f) => JSON.parse(readFileSync(new URL(`../fixtures/formats/${f}.json`, import.meta.url), 'utf8'))

/** A window whose threshold sits at 80% of the transcript's estimate. */
function windowFor(format, doc) {
  const probe = new ContextCompactor({ format })
  const est = probe.check(null, doc, {}).signals.find(s => s.name === 'estimated_transcript_tokens').value
  return Math.ceil(est * 0.8 / 0.65)
}

test('k1: only clearToolUses configured: check says clearing reaches the target; compact clears with no summarize call, in every format', async () => {
  for (const format of FORMATS) {
    const doc = fixture(format)
    const compactor = new ContextCompactor({ format, contextWindow: windowFor(format, doc), clearToolUses: {} })
    const d = compactor.check(null, doc, {})
    assert.equal(d.compact, true, format)
    assert.equal(d.clearing.reachesTarget, true, format)
    assert.equal(d.cache.tier, 'clear', format)
    assert.equal(d.cache.firstChangedOffset, d.clearing.firstChangedOffset, format)
    let calls = 0
    const stored = []
    const out = await compactor.compact(null, doc, {
      summarize: () => { calls++; return 'never' },
      storeArtifact: (item) => { stored.push(item); return undefined },
    })
    assert.equal(calls, 0, `${format}: no summarize call (K-1)`)
    assert.equal(out.status, 'compacted', format)
    assert.equal(out.rewrite.summary, null, format)
    assert.equal(out.rewrite.stage, 'clear', format)
    assert.ok(out.after.estimatedTokens < d.thresholdTokens, format)
    assert.equal(out.rewrite.cleared.length, stored.length, `${format}: each cleared body stored (E-6)`)
    for (const c of out.rewrite.cleared) assert.match(c.handle, /^artifact#([a-z]{1,16}-)?\d+$/)
    const text = JSON.stringify(out.transcript)
    for (const c of out.rewrite.cleared) {
      assert.ok(text.includes(`full output stored as ${c.handle}`), `${format}: placeholder names ${c.handle}`)
    }
    assert.equal(typeof out.rewrite.firstChangedOffset, 'number')
    // the compacted transcript checks clean and is not cleared again
    const again = compactor.check(null, out.transcript, {})
    assert.equal(again.compact, false, `${format}: ${again.reason}`)
    assert.equal(again.clearing.items, 0, format)
  }
})

test('k3: pays policy defers an ordinary trigger that does not pay; force is never vetoed', () => {
  const doc = fixture('anthropic')
  const opts = { format: 'anthropic', contextWindow: windowFor('anthropic', doc), clearToolUses: {}, promptCache: { policy: 'pays', horizonTurns: 1 } }
  const c = new ContextCompactor(opts)
  const d = c.check(null, doc, {})
  assert.equal(d.compact, false)
  assert.equal(d.reason, 'cache_not_paying')
  assert.ok(d.cache.netSaving < 0 && d.cache.invalidatedTokens > 0)
  assert.equal(c.check(null, doc, { force: true }).compact, true)
  assert.throws(() => new ContextCompactor({ promptCache: { provider: 'acme' } }), (e) => e.code === 'invalid_config')
})

test('k2: trigger clauses by messages and tool uses beside the seeds\' mode', () => {
  const doc = fixture('openai-chat')
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 1_000_000, trigger: [{ messages: 10_000 }, { toolUses: 5 }] })
  const d = c.check(null, doc, {})
  assert.equal(d.compact, true)
  assert.equal(d.decidedBy, 'trigger_tool_uses')
  assert.equal(new ContextCompactor({ trigger: 'provider_usage' }).config.trigger, 'provider_usage')
})

test('k4: toRequest places Anthropic cache_control breakpoints on system, summary end and last message', async () => {
  const doc = fixture('anthropic')
  const c = new ContextCompactor({ format: 'anthropic', contextWindow: Math.ceil(windowFor('anthropic', doc) / 2) })
  const out = await c.compact(null, doc, { summarize: () => 'SUMMARY' })
  assert.equal(out.status, 'compacted')
  const plain = c.toRequest(out.transcript, out.state)
  assert.ok(!JSON.stringify(plain).includes('cache_control'))
  const req = c.toRequest(out.transcript, out.state, { cacheBreakpoints: true })
  assert.deepEqual(req.system.at(-1).cache_control, { type: 'ephemeral' })
  const at = out.rewrite.summary.offset
  assert.deepEqual(req.messages[at].content.at(-1).cache_control, { type: 'ephemeral' })
  assert.deepEqual(req.messages.at(-1).content.at(-1).cache_control, { type: 'ephemeral' })
  assert.equal(JSON.stringify(req).split('cache_control').length - 1, 3)
})

test('k1: a Session persists a clearing (no summary) and a live handle compacts by clearing too', async () => {
  const doc = fixture('openai-chat')
  const compactor = new ContextCompactor({ format: 'openai-chat', contextWindow: windowFor('openai-chat', doc), clearToolUses: {} })
  let record = JSON.stringify({ transcript: doc, state: null, revision: 0 })
  const store = {
    load() { return JSON.parse(record) },
    async save(r, { expectedRevision }) {
      if (JSON.parse(record).revision !== expectedRevision) return { ok: false, reason: 'stale_revision' }
      record = JSON.stringify(r)
      return { ok: true }
    },
  }
  const out = await new Session(compactor, store).compact({ summarize: () => { throw new Error('no summary expected') } })
  assert.equal(out.status, 'compacted')
  assert.equal(out.rewrite.summary, null)
  const saved = JSON.parse(record)
  assert.equal(saved.revision, 1)
  const savedText = JSON.stringify(saved.transcript)
  assert.ok(savedText.includes('[tool result cleared by context editing'), 'the stored transcript itself carries the placeholders')
  const live = compactor.open(doc)
  const d = live.check(null, {})
  assert.equal(d.clearing.reachesTarget, true)
  const lo = await live.compact(null, { summarize: () => { throw new Error('no summary expected') } })
  assert.equal(lo.status, 'compacted')
  assert.ok(JSON.stringify(live.transcript()).includes('[tool result cleared by context editing'))
})
