// Semantic memory (M-1..M-4) in Node, through the package's node entry. The cases
// live in memory-cases.mjs so the browser harness runs the very same assertions.
import { test } from 'node:test'
import * as api from 'context-compactor'
import { memoryCases } from './memory-cases.mjs'

for (const { name, run } of memoryCases(api)) {
  test(name, run)
}
