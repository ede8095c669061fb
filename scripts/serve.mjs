#!/usr/bin/env node
// A tiny static file server for the www/ demo (no dependencies). Serves the repository
// root so the page can import ../pkg/web and ../js; `/` redirects to `/www/`.
// Usage: node scripts/serve.mjs [--port N] [--host H]   (npm start; default 127.0.0.1:8080)
import { createServer } from 'node:http'
import { readFile, stat } from 'node:fs/promises'
import { extname, join, normalize, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(fileURLToPath(new URL('..', import.meta.url)))
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json; charset=utf-8', '.jsonl': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm', '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon',
  '.ts': 'text/plain; charset=utf-8', '.md': 'text/plain; charset=utf-8', '.txt': 'text/plain; charset=utf-8',
}

/** Resolves a URL path to a file under the root, or null when it escapes the root. */
function fileFor(urlPath) {
  let p
  try { p = decodeURIComponent(urlPath.split('?')[0]) } catch { return null }
  const full = normalize(join(root, p))
  return full === root || full.startsWith(root + sep) ? full : null
}

/** Starts the server; resolves to `{ server, url }`. Port 0 picks a free port. */
export function startServer({ port = 8080, host = '127.0.0.1' } = {}) {
  const server = createServer(async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') { res.writeHead(405).end(); return }
    if (req.url === '/' || req.url === '/www') { res.writeHead(302, { location: '/www/' }).end(); return }
    let file = fileFor(req.url ?? '/')
    if (!file || file.split(sep).includes('node_modules') || file.split(sep).includes('.git')) { res.writeHead(404).end('not found\n'); return }
    try {
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html')
      const body = await readFile(file)
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' })
      res.end(req.method === 'HEAD' ? undefined : body)
    } catch {
      res.writeHead(404).end('not found\n')
    }
  })
  return new Promise((ok, fail) => {
    server.once('error', fail)
    server.listen(port, host, () => ok({ server, url: `http://${host}:${server.address().port}` }))
  })
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name, dflt) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : dflt }
  const { url } = await startServer({ port: Number(arg('--port', process.env.PORT ?? 8080)), host: arg('--host', '127.0.0.1') })
  console.log(`context-compactor demo: ${url}/www/`)
}
