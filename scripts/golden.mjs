#!/usr/bin/env node
// Regenerate tests/fixtures/golden.expected.json: the golden transcript compacted in Node
// with the shared options and summarize hook (tests/runtime/golden.mjs). Every runtime test
// (Node ESM/CJS, Deno, workerd, Chromium, esbuild bundle) compares against it (J-5).
// Run after an intentional change of the engine's output: node scripts/golden.mjs
import { readFile, writeFile } from 'node:fs/promises'
import * as api from '../js/node.mjs'
import { GOLDEN_OPTIONS, runGolden } from '../tests/runtime/golden.mjs'

const fixture = new URL('../tests/fixtures/golden.json', import.meta.url)
const out = new URL('../tests/fixtures/golden.expected.json', import.meta.url)
const r = await runGolden(api, JSON.parse(await readFile(fixture, 'utf8')))
const expected = { options: GOLDEN_OPTIONS, status: r.status, bytes: r.bytes, sha256: r.sha256, engine: api.version() }
await writeFile(out, JSON.stringify(expected, null, 2) + '\n')
console.log(JSON.stringify(expected))
