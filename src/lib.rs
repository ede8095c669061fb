//! # context-compactor
//!
//! A sans-IO context-compaction engine for LLM conversations. The core decides *when*
//! to compact and *how* (evict, summarize, roll up, rewrite) and never performs IO:
//! summaries, storage and token counts come from the host through the step protocol
//! of [`engine`]. The `wasm` module (built for wasm32 only) is the only code that touches wasm-bindgen.
//!
//! Module map (one-way flow): [`formats`] decode -> [`measure`] -> [`trigger`] ->
//! [`select`] -> [`evict`] -> [`summarize`] -> [`rewrite`] -> [`formats`] encode.

#![warn(missing_docs)]

pub mod bound;
pub mod cache;
pub mod capacity;
pub mod clear;
pub mod config;
pub mod editing;
pub mod engine;
pub mod error;
pub mod events;
pub mod evict;
pub mod format;
pub mod formats;
pub mod hosted;
pub mod live;
pub mod measure;
pub mod memory;
pub mod nothing_lost;
pub mod output;
pub mod prompts;
pub mod quote;
pub mod raw;
pub mod rewrite;
pub mod select;
pub mod session;
mod sorted;
pub mod state;
pub mod summarize;
pub mod transcript;
pub mod trust;
pub mod trigger;

pub use config::{Config, Profile};
pub use error::{Error, ErrorCode, Result};
pub use formats::Format;
pub use transcript::{Block, Message, Role, Transcript};

#[cfg(all(feature = "wasm", target_arch = "wasm32"))]
pub mod wasm;
