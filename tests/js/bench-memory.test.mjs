// Smoke check of the memory benchmark (bench/memory.mjs, M-1..M-3): the script runs on a
// small subset (two transcripts, 1k-record latency) and prints its tables. No figure is
// asserted: the benchmark reports, it does not gate.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const transcripts = join(root, '..', 'shared', 'transcripts')

test('bench:memory --smoke runs and prints the recall, fidelity, latency and target tables', { skip: !existsSync(transcripts) && 'no ../shared/transcripts' }, async () => {
  const out = await new Promise((resolve, reject) => {
    execFile(process.execPath, [join(root, 'bench', 'memory.mjs'), '--smoke'], { cwd: root, timeout: 120_000, maxBuffer: 1 << 24 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))
  })
  for (const want of ['Recall by kind of fact', '| tool_input |', 'MiniSearch (BM25)', 'Fidelity of the compacted transcript', '| 1,000 |', '| recall@5 >= 0.8 overall (embedded) |', 'half B (held out)']) {
    assert.ok(out.includes(want), `the output has ${JSON.stringify(want)}`)
  }
  const probes = out.match(/probes: (\d+) \(fact left the context: (\d+)/)
  assert.ok(probes && Number(probes[1]) > 0 && Number(probes[2]) > 0, 'some probes counted')
})
