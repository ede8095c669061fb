// CommonJS consumer: require() the package (the "node" + "require" condition), run the
// golden compaction and print { status, bytes, sha256 } as JSON on stdout.
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const api = require('context-compactor')

import('./golden.mjs').then(async ({ runGolden }) => {
  const transcript = JSON.parse(readFileSync(join(__dirname, '../fixtures/golden.json'), 'utf8'))
  const { status, bytes, sha256 } = await runGolden(api, transcript)
  process.stdout.write(JSON.stringify({ status, bytes, sha256, format: api.detectFormat(transcript) }) + '\n')
})
