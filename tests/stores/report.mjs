// Turns a contract run (contract.mjs) into node:test subtests: one per case, failing
// with the case's error.
import assert from 'node:assert/strict'

export async function reportContract(t, out, expectedCases) {
  assert.ok(out && Array.isArray(out.results), `no contract result: ${JSON.stringify(out)?.slice(0, 500)}`)
  assert.ok(out.results.length >= expectedCases, `${out.results.length} cases ran, expected ${expectedCases}`)
  for (const r of out.results) {
    await t.test(`${out.engine}: ${r.name}`, () => { if (!r.ok) assert.fail(r.error) })
  }
}

/** The last line of a runner's stdout, as JSON. */
export const lastJson = (stdout) => JSON.parse(stdout.trim().split('\n').pop())
