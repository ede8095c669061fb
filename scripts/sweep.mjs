#!/usr/bin/env node
// Issue 12 done-when sweep: the CLI compacts every transcript in ../shared/transcripts in
// every profile (kerkov, meerkat, default) at 8,000 and 16,000 tokens; each run must give
// a valid rewrite under the window, or a typed cannot_fit whose reason names the floor.
// Prints one table row per run, with the constraint fidelity of the run: the user
// constraint sentences (must / never / don't / always / should / make sure / ensure /
// need to / prefer / avoid / required ...) of the rows the rewrite discarded, found
// verbatim in the summary, over all of them (sentences found here by this script's own
// splitter, not the engine's).
//
// Usage: node scripts/sweep.mjs [--cli PATH/TO/context-compactor.mjs] [--shared DIR]
//        (exit status 1 when a run fails the done-when rule)
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const { values: v } = parseArgs({ options: { cli: { type: 'string' }, shared: { type: 'string' } } })
const cli = resolve(v.cli ?? join(root, 'bin/context-compactor.mjs'))
const shared = resolve(v.shared ?? join(root, '../shared'))
// the wasm package beside the CLI, for the imported document (offsets of the discarded rows)
const wasm = createRequire(import.meta.url)(join(dirname(cli), '../pkg/node/context_compactor.js'))

const KINDS = [['claude-code', '.jsonl', 'claude-code-jsonl'], ['swe-agent', '.traj', 'swe-agent-traj'], ['tau-bench', '.json', 'tau-bench'], ['glaive', '.json', 'glaive']]
const WORDS = /\b(must|mustn't|never|don't|dont|do not|always|should|shouldn't|make sure|ensure|need to|prefer|avoid|required)\b/i

function walk(dir, ext, out = []) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) walk(p, ext, out)
    else if (name.endsWith(ext)) out.push(p)
  }
  return out
}

/** Sentences: split at line breaks and after . ! ? followed by white space. */
function sentences(text) {
  const out = []
  for (const line of text.split('\n')) {
    for (const s of line.split(/(?<=[.!?])\s+/)) {
      const t = s.trim()
      if (/[\p{L}\p{N}]/u.test(t)) out.push(t)
    }
  }
  return out
}

/** The text blocks a person wrote in a document row (conversational user rows only). */
function userTexts(m) {
  if (m.role !== 'user' || m.summary_level != null) return []
  if (m.transcript_role && m.transcript_role !== 'conversational') return []
  if (typeof m.content === 'string') return [m.content]
  if (!Array.isArray(m.content)) return []
  return m.content.filter((b) => b?.type === 'text' && typeof b.text === 'string').map((b) => b.text)
}

const rows = []
let bad = 0
for (const [folder, ext, kind] of KINDS) {
  let files = []
  try {
    files = walk(join(shared, 'transcripts', folder), ext)
  } catch {
    continue
  }
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    const doc = wasm.importTranscript(kind, text, {}).document
    const messages = doc.messages ?? []
    for (const profile of ['kerkov', 'meerkat', 'default']) {
      for (const window of [8000, 16000]) {
        let out
        try {
          out = JSON.parse(execFileSync(process.execPath, [cli, 'compact', file, '--format', kind, '--profile', profile, '--context-window', String(window), '--json'], { maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] }))
        } catch (err) {
          rows.push({ file, profile, window, status: 'error', note: String(err.message).split('\n')[0] })
          bad++
          continue
        }
        const row = { file, profile, window, status: out.status, tokens: out.after?.estimatedTokens, over: out.overWindow?.limit ?? '', fid: '' }
        if (out.status === 'compacted') {
          const summary = out.rewrite?.summary?.text ?? ''
          let [hit, all] = [0, 0]
          if (out.before?.messages === messages.length) {
            const seen = new Set()
            for (const d of out.rewrite.discarded) {
              for (const t of userTexts(messages[d] ?? {})) {
                for (const s of sentences(t)) {
                  if (!WORDS.test(s.replace(/\u2019/g, "'")) || seen.has(s)) continue
                  seen.add(s)
                  all++
                  if (summary.includes(s)) hit++
                }
              }
            }
            row.fid = all ? `${hit}/${all}` : 'n/a'
          } else {
            row.fid = '?'
          }
          const valid = ['user_text_kept', 'provider_pairing'].every((c) => out.validation?.checks?.includes?.(c) ?? true)
          const under = out.overWindow == null || out.overWindow.limit === 'threshold'
          row.note = [valid ? '' : 'checks missing', under ? '' : 'over the window'].filter(Boolean).join(', ')
          if (!valid || !under || (all && hit < all)) bad++
        } else if (out.status === 'cannot_fit') {
          row.note = out.reason.slice(0, 150)
          if (!out.reason.startsWith('cannot_fit: the floor (')) bad++
        } else {
          row.note = out.reason.slice(0, 150)
          bad++
        }
        rows.push(row)
      }
    }
  }
}

console.log('| transcript | profile | window | status | tokens after | over | constraints verbatim | note |')
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |')
for (const r of rows) {
  console.log(`| ${basename(dirname(r.file)).startsWith('replay__') ? `${basename(r.file)} (${basename(dirname(r.file)).slice(0, 40)})` : basename(r.file)} | ${r.profile} | ${r.window} | ${r.status} | ${r.tokens ?? ''} | ${r.over ?? ''} | ${r.fid ?? ''} | ${(r.note ?? '').replace(/\|/g, '\\|')} |`)
}
console.log(`\n${rows.length} runs, ${bad} not meeting the rule (valid rewrite under the window with every constraint verbatim, or cannot_fit naming the floor)`)
process.exitCode = bad ? 1 : 0
