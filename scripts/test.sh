#!/usr/bin/env bash
# The whole test suite. Installs what it needs (scripts/setup.sh), then runs
#   1. native core tests:      cargo test --no-default-features --no-fail-fast
#   2. JS tests of the build:  node --test tests/js/ (Node, Deno, workerd, esbuild, tsc, Chromium)
#   3. wasm boundary tests:    cargo test --target wasm32-unknown-unknown --test wasm_boundary
#                              (wasm-bindgen-test-runner; in Node, then headless Chromium)
# and prints one final line "N passed, N failed" (Rust + JS). Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh || { echo "test: setup failed" >&2; exit 1; }

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
passed=0
failed=0
status=0

# Adds the "test result:" counts of a cargo log to the totals; a run that failed without
# any failed test (a build error) counts as one failure so the total shows it.
count_cargo() { # count_cargo LOG RC
  local p f
  read -r p f < <(awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
                       END { print p + 0, f + 0 }' "$1")
  passed=$((passed + p)); failed=$((failed + f))
  if [ "$2" -ne 0 ]; then
    status=1
    [ "$f" -eq 0 ] && failed=$((failed + 1))
  fi
}

# ---- 0. Headless Chromium + chromedriver (browser tests) ----------------------------
# Installed with apt only when missing and running as root; otherwise the browser tests
# skip with a notice (and fail under CI=true).
if { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; } && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "test: installing chromium and chromium-driver with apt"
  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver
fi

# ---- 1. Rust (native) -------------------------------------------------------------
cargo test --no-default-features --no-fail-fast 2>&1 | tee "$logs/cargo.log"
count_cargo "$logs/cargo.log" "${PIPESTATUS[0]}"

# ---- 2. JavaScript (the built package): Node ESM/CJS, npm pack, Deno, workerd, esbuild,
#         tsc, Playwright in Chromium (golden bytes J-5 + the www demo) ----------------
node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$logs/node.tap" tests/js/
rc=$?
p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$logs/node.tap" | tail -n 1)
f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$logs/node.tap" | tail -n 1)
passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
if [ "$rc" -ne 0 ]; then
  status=1
  [ "${f:-0}" -eq 0 ] && failed=$((failed + 1))
fi

# ---- 2b. Benchmark smoke check (1 MB, no timing assertions; ~15 s) -----------------
if [ -d ../shared/transcripts ]; then
  if node bench/run.mjs --sizes 1 --runs 3 > "$logs/bench.log" 2>&1; then
    echo "bench smoke (1 MB): ok"
  else
    cat "$logs/bench.log"; echo "bench smoke (1 MB): FAILED"
    failed=$((failed + 1)); status=1
  fi
else
  echo "note: ../shared/transcripts not found; skipping the benchmark smoke check"
fi

# ---- 3. The wasm boundary (wasm-bindgen-test): in Node, then in headless Chromium ---
# .cargo/config.toml makes wasm-bindgen-test-runner the runner of the wasm32 target.
cargo test --target wasm32-unknown-unknown --test wasm_boundary 2>&1 | tee "$logs/wasm-node.log"
count_cargo "$logs/wasm-node.log" "${PIPESTATUS[0]}"
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER=/usr/bin/chromedriver WASM_BINDGEN_TEST_WEBDRIVER_JSON="$PWD/tests/webdriver.json" \
    cargo test --target wasm32-unknown-unknown --test wasm_boundary 2>&1 | tee "$logs/wasm-chromium.log"
  count_cargo "$logs/wasm-chromium.log" "${PIPESTATUS[0]}"
  grep -q 'Running headless tests in Chrome' "$logs/wasm-chromium.log" || { echo "test: the wasm tests did not run in Chromium" >&2; status=1; failed=$((failed + 1)); }
elif [ "${CI:-}" = "true" ]; then
  echo "test: /usr/bin/chromium or /usr/bin/chromedriver missing (required under CI)" >&2
  status=1; failed=$((failed + 1))
else
  echo "test: NOTICE: skipping the wasm tests in Chromium (no /usr/bin/chromium or /usr/bin/chromedriver)"
fi

echo "$passed passed, $failed failed"
exit "$status"
