#!/usr/bin/env node
// Writes examples/sample-session.json: a deterministic OpenAI Chat Completions transcript
// of a coding-agent session (system prompt, several user requests, parallel tool calls,
// large tool outputs such as file listings, test logs and lint output).
// Usage: node scripts/make-sample.mjs [OUT]   (default: examples/sample-session.json)
import { writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const outPath = resolve(root, process.argv[2] ?? 'examples/sample-session.json')

// mulberry32: a tiny seeded PRNG so the output is byte-for-byte reproducible.
let seed = 0x5eed1e55
function rand() {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1))
const pick = (xs) => xs[Math.floor(rand() * xs.length)]
const pad = (x, w) => String(x).padStart(w, '0')

const messages = []
let callSeq = 0
const system = (content) => messages.push({ role: 'system', content })
const user = (content) => messages.push({ role: 'user', content })
const say = (content) => messages.push({ role: 'assistant', content })
/** One assistant turn with (possibly parallel) tool calls, followed by their results. */
function act(content, calls) {
  const withIds = calls.map(([name, args, result]) => ({ id: `call_${pad(++callSeq, 3)}_${name}`, name, args, result }))
  messages.push({
    role: 'assistant',
    content,
    tool_calls: withIds.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } })),
  })
  for (const c of withIds) messages.push({ role: 'tool', tool_call_id: c.id, content: c.result })
}

// ---- generated tool outputs ----------------------------------------------------------
const modules = ['orders', 'inventory', 'customers', 'payments', 'shipping', 'auth', 'reports']
const kinds = ['models', 'service', 'routes', 'schemas', 'repository', 'errors']

function fileListing() {
  const lines = ['$ find . -type f -not -path "./.git/*" -not -path "./.venv/*" | sort']
  const files = ['./README.md', './pyproject.toml', './alembic.ini', './Makefile', './.github/workflows/ci.yml']
  for (const m of modules) {
    files.push(`./src/shopapi/${m}/__init__.py`)
    for (const k of kinds) files.push(`./src/shopapi/${m}/${k}.py`)
    for (let i = 0; i < int(3, 6); i++) files.push(`./tests/${m}/test_${pick(kinds)}_${pick(['happy', 'edge', 'errors', 'perf', 'regression'])}_${i}.py`)
  }
  for (let i = 1; i <= 24; i++) files.push(`./migrations/versions/${pad(i, 4)}_${pick(['add', 'drop', 'alter', 'index'])}_${pick(modules)}_${pick(['status', 'created_at', 'sku', 'total', 'email', 'note'])}.py`)
  for (const f of files.sort()) lines.push(f)
  lines.push(`${files.length} files`)
  return lines.join('\n')
}

function grepHits(term, n) {
  const lines = [`$ rg -n "${term}" src tests`]
  for (let i = 0; i < n; i++) {
    const m = pick(modules)
    const where = rand() < 0.6 ? `src/shopapi/${m}/${pick(kinds)}.py` : `tests/${m}/test_${pick(kinds)}_edge_${int(0, 4)}.py`
    lines.push(`${where}:${int(5, 320)}:    ${pick([
      `if ${term} <= 0:`, `${term}: int = Field(..., ge=1)`, `total = price * ${term}`,
      `assert line.${term} == ${int(1, 9)}`, `raise ValueError("${term} must be positive")`,
      `"${term}": payload.get("${term}", 1),`, `logger.debug("reserve %s x%d", sku, ${term})`,
    ])}`)
  }
  return lines.join('\n')
}

function pythonModule(name, funcs) {
  const out = [`"""${name}: service layer for the shop API."""`, 'from __future__ import annotations', '',
    'import logging', 'from decimal import Decimal', '', 'from .errors import OrderError, OutOfStock',
    'from .repository import OrderRepository', '', 'logger = logging.getLogger(__name__)', '']
  for (const f of funcs) {
    out.push(`def ${f}(repo: OrderRepository, order_id: int, **kwargs) -> dict:`)
    out.push(`    """${f.replace(/_/g, ' ')}; see docs/orders.md."""`)
    for (let i = 0; i < int(8, 16); i++) {
      out.push(pick([
        '    order = repo.get(order_id)', '    if order is None:', '        raise OrderError(f"order {order_id} not found")',
        '    unit = Decimal(order.unit_price)', '    total = unit * order.quantity / order.quantity if order.quantity else unit',
        '    logger.info("order %s: %s", order_id, kwargs)', '    repo.save(order)',
        '    lines = [l for l in order.lines if l.active]', '    discount = Decimal(kwargs.get("discount", "0"))',
      ]))
    }
    out.push('    return order.to_dict()', '')
  }
  return out.join('\n')
}

function pytestLog({ failing, total, verbose = false }) {
  const out = [verbose ? '$ pytest -v' : '$ pytest -q -ra', 'platform linux -- Python 3.12.3, pytest-8.2.1, pluggy-1.5.0', 'rootdir: /workspace/shopapi',
    'configfile: pyproject.toml', 'plugins: anyio-4.4.0, cov-5.0.0', `collected ${total} items`, '']
  for (let i = 0; verbose && i < total; i++) {
    const m = modules[i % modules.length]
    const name = `test_${pick(['create', 'list', 'get', 'update', 'delete', 'price', 'refund', 'validate'])}_${pick(['ok', 'missing', 'invalid', 'zero', 'limit', 'cursor', 'unicode'])}_${i}`
    out.push(`tests/${m}/test_${pick(kinds)}.py::${name} PASSED${' '.repeat(Math.max(1, 44 - name.length))}[${String(Math.floor((100 * (i + 1)) / total)).padStart(3)}%]`)
  }
  for (const m of verbose ? [] : modules) {
    const n = Math.floor(total / modules.length)
    let dots = ''
    for (let i = 0; i < n; i++) dots += failing.some((f) => f.startsWith(`tests/${m}/`)) && i === 3 ? 'F' : '.'
    out.push(`tests/${m}/ ${dots} [${pad(Math.min(100, int(10, 100)), 3)}%]`)
  }
  for (const f of failing) {
    out.push('', `________________________ ${f.split('::')[1]} ________________________`, '')
    out.push('    def test_zero_quantity(client, seeded_db):', '        resp = client.post("/orders", json={"sku": "A-100", "quantity": 0})',
      '>       assert resp.status_code == 422', 'E       assert 500 == 422', 'E        +  where 500 = <Response [500]>.status_code', '')
    out.push('src/shopapi/orders/service.py:88: in price_order')
    out.push('    total = unit * order.quantity / order.quantity if order.quantity else unit')
    out.push('E   decimal.InvalidOperation: [<class \'decimal.DivisionUndefined\'>]', '')
    out.push('------------------------------ Captured log call -------------------------------')
    for (let i = 0; i < 40; i++) {
      out.push(`${pick(['INFO', 'DEBUG', 'DEBUG', 'WARNING'])}  shopapi.${pick(modules)}:${pick(kinds)}.py:${int(10, 300)} ${pick([
        'reserve sku=A-100 qty=0', 'opening session id=7f3a', 'cache miss key=price:A-100', 'retrying db write (1/3)',
        'request POST /orders 500', 'computing totals for order 4411', 'rolled back transaction 0x1f9c',
      ])}`)
    }
  }
  out.push('', failing.length
    ? `=========== ${failing.length} failed, ${total - failing.length} passed, 3 warnings in ${int(8, 14)}.${int(10, 99)}s ===========`
    : `=========== ${total} passed, 3 warnings in ${int(8, 14)}.${int(10, 99)}s ===========`)
  return out.join('\n')
}

function lintLog(n) {
  const out = ['$ ruff check src tests --output-format concise']
  const rules = [['E501', 'Line too long (104 > 100)'], ['F401', '`typing.Optional` imported but unused'],
    ['B008', 'Do not perform function call `Depends` in argument defaults'], ['UP007', 'Use `X | Y` for type annotations'],
    ['SIM108', 'Use ternary operator instead of `if`-`else`-block'], ['I001', 'Import block is un-sorted or un-formatted']]
  for (let i = 0; i < n; i++) {
    const [code, msg] = pick(rules)
    out.push(`src/shopapi/${pick(modules)}/${pick(kinds)}.py:${int(1, 400)}:${int(1, 90)}: ${code} ${msg}`)
  }
  out.push(`Found ${n} errors.`, '[*] 61 fixable with the `--fix` option.')
  return out.join('\n')
}

function ciLog() {
  const out = ['Run make lint', 'ruff check src tests']
  for (let i = 0; i < 30; i++) out.push(`src/shopapi/${pick(modules)}/routes.py:${int(1, 200)}:${int(1, 80)}: E501 Line too long (${int(101, 130)} > 100)`)
  out.push('make: *** [Makefile:14: lint] Error 1', 'Error: Process completed with exit code 2.')
  return out.join('\n')
}

// ---- the session -----------------------------------------------------------------------
system([
  'You are a coding agent working in the repository at /workspace/shopapi (a FastAPI service, Python 3.12).',
  'Tools: list_files(path), read_file(path), search_code(query), run_command(cmd), write_file(path, content).',
  'Rules:',
  '- Read before you write. Keep changes minimal and focused on the request.',
  '- Run the tests (`pytest -q`) after every change and report the result honestly.',
  '- Never push, never force anything, never touch migrations that are already applied.',
  '- Prefer parallel tool calls when the calls are independent.',
  '- When you are done, summarize what you changed, which files, and how you verified it.',
].join('\n'))

user('POST /orders returns a 500 when quantity is 0. It should be a 422 validation error. Can you find and fix it?')
act('I will look at the layout of the repository and search for where quantity is handled, in parallel.', [
  ['list_files', { path: '.' }, fileListing()],
  ['search_code', { query: 'quantity' }, grepHits('quantity', 60)],
])
act('The pricing logic is in the orders service; reading it and the request schema.', [
  ['read_file', { path: 'src/shopapi/orders/service.py' }, pythonModule('orders.service', ['create_order', 'price_order', 'cancel_order', 'refund_order', 'apply_discount'])],
  ['read_file', { path: 'src/shopapi/orders/schemas.py' }, [
    'from pydantic import BaseModel, Field', '', 'class OrderLineIn(BaseModel):', '    sku: str', '    quantity: int', '',
    'class OrderIn(BaseModel):', '    customer_id: int', '    lines: list[OrderLineIn] = Field(default_factory=list)', '    note: str | None = None', ''].join('\n')],
])
act('Reproducing the failure with the test suite first.', [
  ['run_command', { cmd: 'pytest -q -ra' }, pytestLog({ failing: ['tests/orders/test_routes_edge_0.py::test_zero_quantity'], total: 182 })],
])
act('The schema accepts quantity 0 and the service divides by it. I will add `Field(ge=1)` to the schema so FastAPI answers 422, and remove the needless division.', [
  ['write_file', { path: 'src/shopapi/orders/schemas.py', content: 'from pydantic import BaseModel, Field\n\nclass OrderLineIn(BaseModel):\n    sku: str\n    quantity: int = Field(..., ge=1)\n' }, 'wrote 96 bytes to src/shopapi/orders/schemas.py'],
  ['write_file', { path: 'src/shopapi/orders/service.py', content: '# (price_order) total = unit * order.quantity\n' }, 'patched 1 hunk in src/shopapi/orders/service.py'],
])
act(null, [['run_command', { cmd: 'pytest -v' }, pytestLog({ failing: [], total: 182, verbose: true })]])
say('Fixed. `OrderLineIn.quantity` now has `Field(..., ge=1)`, so a zero quantity is rejected with 422 before it reaches the service, and `price_order` no longer divides by the quantity. All 182 tests pass.')

user('Thanks. Next: GET /orders should support pagination with `limit` (default 50, max 200) and `cursor` query parameters. Look at how customers does it, we already have that there.')
act('Reading the customers routes and repository, and the current orders routes, in parallel.', [
  ['read_file', { path: 'src/shopapi/customers/routes.py' }, pythonModule('customers.routes', ['list_customers', 'get_customer', 'update_customer'])],
  ['read_file', { path: 'src/shopapi/customers/repository.py' }, pythonModule('customers.repository', ['page', 'encode_cursor', 'decode_cursor'])],
  ['read_file', { path: 'src/shopapi/orders/routes.py' }, pythonModule('orders.routes', ['list_orders', 'get_order', 'create_order_route'])],
])
act('Checking how cursors are encoded elsewhere before copying the pattern.', [
  ['search_code', { query: 'encode_cursor' }, grepHits('encode_cursor', 25)],
])
act('Adding `page()` to the orders repository and wiring `limit`/`cursor` into the route.', [
  ['write_file', { path: 'src/shopapi/orders/repository.py', content: 'def page(self, limit: int, cursor: str | None): ...\n' }, 'patched 2 hunks in src/shopapi/orders/repository.py'],
  ['write_file', { path: 'src/shopapi/orders/routes.py', content: 'limit: int = Query(50, ge=1, le=200), cursor: str | None = None\n' }, 'patched 1 hunk in src/shopapi/orders/routes.py'],
  ['write_file', { path: 'tests/orders/test_routes_pagination.py', content: 'def test_pagination_limit(client): ...\n' }, 'wrote 1,204 bytes to tests/orders/test_routes_pagination.py'],
])
act(null, [['run_command', { cmd: 'pytest -q -ra tests/orders' }, pytestLog({ failing: [], total: 41 })]])
say('GET /orders now takes `limit` (1..200, default 50) and an opaque `cursor`, using the same cursor encoding as customers. New tests in tests/orders/test_routes_pagination.py; the orders suite passes (41 tests).')

user(`CI is red on my branch, here is the log:\n\n${ciLog()}\n\nCan you fix the lint?`)
act('Running the linter locally to see every finding, and reading the lint config, in parallel.', [
  ['run_command', { cmd: 'ruff check src tests --output-format concise' }, lintLog(170)],
  ['read_file', { path: 'pyproject.toml' }, ['[project]', 'name = "shopapi"', 'version = "0.7.2"', 'requires-python = ">=3.12"', '',
    '[tool.ruff]', 'line-length = 100', 'target-version = "py312"', '', '[tool.ruff.lint]', 'select = ["E", "F", "B", "UP", "SIM", "I"]', 'ignore = []', '',
    '[tool.pytest.ini_options]', 'addopts = "-q"', 'testpaths = ["tests"]', ''].join('\n')],
])
act('Most findings are auto-fixable. Applying the safe fixes, then looking at what is left.', [
  ['run_command', { cmd: 'ruff check src tests --fix' }, lintLog(24).replace('[*] 61 fixable', 'Fixed 146 errors.\n[*] 0 fixable')],
])
act('The remaining ones are long lines and B008 on FastAPI dependencies; B008 is a false positive for `Depends`, so I will configure it instead of rewriting the routes.', [
  ['write_file', { path: 'pyproject.toml', content: '[tool.ruff.lint.flake8-bugbear]\nextend-immutable-calls = ["fastapi.Depends", "fastapi.Query"]\n' }, 'patched 1 hunk in pyproject.toml'],
  ['run_command', { cmd: 'ruff format src tests' }, `${int(30, 40)} files reformatted, ${int(80, 90)} files left unchanged`],
])
act(null, [
  ['run_command', { cmd: 'ruff check src tests' }, 'All checks passed!'],
  ['run_command', { cmd: 'pytest -q' }, pytestLog({ failing: [], total: 186 })],
])
say('Lint is clean: 146 findings auto-fixed, long lines reformatted with `ruff format`, and `fastapi.Depends`/`fastapi.Query` marked as immutable calls for B008 in pyproject.toml. Tests still pass (186).')

user('One more: orders need a `status` column (pending, paid, shipped, cancelled; default pending). Write the migration and expose it in the API.')
act('Looking at the latest migrations and the order model, in parallel.', [
  ['run_command', { cmd: 'ls migrations/versions | tail -n 5' }, ['0020_alter_orders_total.py', '0021_index_customers_email.py', '0022_add_shipping_note.py', '0023_drop_payments_sku.py', '0024_add_reports_created_at.py'].join('\n')],
  ['read_file', { path: 'migrations/versions/0024_add_reports_created_at.py' }, ['"""add reports.created_at', '', 'Revision ID: 0024', 'Revises: 0023', '"""', 'from alembic import op', 'import sqlalchemy as sa', '',
    'revision = "0024"', 'down_revision = "0023"', '', 'def upgrade():', '    op.add_column("reports", sa.Column("created_at", sa.DateTime(), nullable=True))', '',
    'def downgrade():', '    op.drop_column("reports", "created_at")', ''].join('\n')],
  ['read_file', { path: 'src/shopapi/orders/models.py' }, pythonModule('orders.models', ['Order', 'OrderLine'])],
])
act('Writing the migration (with a server default so existing rows become pending), the model field and the schema field.', [
  ['write_file', { path: 'migrations/versions/0025_add_orders_status.py', content: 'op.add_column("orders", sa.Column("status", sa.String(16), nullable=False, server_default="pending"))\n' }, 'wrote 742 bytes to migrations/versions/0025_add_orders_status.py'],
  ['write_file', { path: 'src/shopapi/orders/models.py', content: 'status: Mapped[OrderStatus] = mapped_column(default=OrderStatus.pending)\n' }, 'patched 2 hunks in src/shopapi/orders/models.py'],
  ['write_file', { path: 'src/shopapi/orders/schemas.py', content: 'status: OrderStatus = OrderStatus.pending\n' }, 'patched 1 hunk in src/shopapi/orders/schemas.py'],
])
act(null, [
  ['run_command', { cmd: 'alembic upgrade head && alembic downgrade -1 && alembic upgrade head' }, ['INFO  [alembic.runtime.migration] Context impl SQLiteImpl.', 'INFO  [alembic.runtime.migration] Will assume non-transactional DDL.',
    'INFO  [alembic.runtime.migration] Running upgrade 0024 -> 0025, add orders.status', 'INFO  [alembic.runtime.migration] Running downgrade 0025 -> 0024, add orders.status',
    'INFO  [alembic.runtime.migration] Running upgrade 0024 -> 0025, add orders.status'].join('\n')],
  ['run_command', { cmd: 'pytest -v' }, pytestLog({ failing: [], total: 189, verbose: true })],
])
say('Added migration 0025 (orders.status, VARCHAR(16), NOT NULL, server default "pending"; upgrade and downgrade both run), an `OrderStatus` enum on the model, and `status` in the order schema. 189 tests pass.')

user('Great. Please write a short PR description covering everything we did in this session.')

const doc = { model: 'gpt-4o-2024-08-06', messages }
const text = `${JSON.stringify(doc, null, 2)}\n`
writeFileSync(outPath, text)
console.log(`${outPath}: ${messages.length} messages, ${Buffer.byteLength(text)} bytes`)
