//! The only code that touches wasm-bindgen / js-sys: a thin layer over the core.

use wasm_bindgen::prelude::*;

/// The package version (Cargo.toml `version`).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
