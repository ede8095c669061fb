#!/usr/bin/env bash
# Idempotent set-up for a machine with Rust (rustup), Node >= 20 and npm:
# wasm target, the wasm-bindgen CLI matching Cargo.toml's pin, npm packages, then the build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

rustup target add wasm32-unknown-unknown

# The CLI must match the crate's exact `wasm-bindgen = "=X"` pin.
want=$(sed -n 's/^wasm-bindgen *= *{[^}]*version *= *"=\([0-9.]*\)".*/\1/p; s/^wasm-bindgen *= *"=\([0-9.]*\)".*/\1/p' Cargo.toml | head -n 1)
if [ -z "$want" ]; then
  echo "setup: no exact wasm-bindgen pin (\"=X.Y.Z\") found in Cargo.toml" >&2
  exit 1
fi
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
  echo "setup: installing wasm-bindgen-cli $want (found: ${have:-none})"
  cargo install wasm-bindgen-cli --version "$want"
fi

# npm packages: install when node_modules is missing or package-lock.json changed since.
stamp=node_modules/.setup-lock-hash
lock_hash() { if [ -f package-lock.json ]; then sha256sum package-lock.json | cut -d' ' -f1; else echo none; fi; }
if [ ! -d node_modules ] || [ "$(cat "$stamp" 2>/dev/null)" != "$(lock_hash)" ]; then
  if [ -f package-lock.json ] && [ -n "${CI:-}" ]; then npm ci; else npm install; fi
  mkdir -p node_modules
  lock_hash > "$stamp"
fi

npm run build
