//! Summaries (Y-1..Y-9): the summarize request the host's model answers
//! ([`request`]), the deterministic handoff summary the engine writes itself
//! ([`handoff`], Y-6 and the built-in default summarizer), the floor it lays under any
//! summary ([`floor`], N-5), the engine's deterministic sections (folded-call ledger Y-5,
//! artifact index Y-2, [`ledger`]) and rollup requests (Y-3).

pub mod carry;
pub mod facts;
pub mod floor;
pub mod handoff;
pub mod ledger;
pub mod merge;
pub mod request;

pub use facts::Facts;
pub use floor::{floor_items, rehydration};
pub use handoff::*;
pub use ledger::*;
pub use request::*;

pub use crate::prompts::{ROLLUP_PROMPT, SUMMARY_PROMPT};
