//! Events the engine and the bounding pass report to the host's `onEvent` (J-4).
//! Below the engine in the one-way flow, so [`crate::bound`] and [`crate::engine`]
//! both report through it without depending on each other.

use serde::Serialize;
use serde_json::Value;

/// An event for the host's `onEvent` (J-4).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// `compaction_started`, `summary_written`, `summary_discarded` (a summary whose
    /// `summary_written` came before was not kept, Y-6), `compaction_completed`,
    /// `compaction_failed`, `warning`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// The event's payload (a JSON object; its keys depend on `kind`, camelCase).
    pub data: Value,
}

/// An event of `kind` with its payload.
pub fn event(kind: &str, data: Value) -> Event {
    Event { kind: kind.to_string(), data }
}
