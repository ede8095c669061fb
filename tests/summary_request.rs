//! The summarize request's text on small hand-built folds (Y-8, Y-9, E-2, E-5): the
//! oracle for the request's bounds. `summary_request` (rows rendered first) and
//! `summary_request_for` (rows rendered on demand, the fold pass's way) share one code path
//! for the bounds, so each test writes out the request it expects, worked by hand from the
//! rules, and checks both ways against it.
//!
//! Every config here counts one byte a token and leaves the rows a budget of `budget`
//! bytes: window = budget + output budget (100) + instructions (`sys`, 3) + 64, and no
//! share bound (`summary_input_share` 1.0). A row costs its length plus 2 (the blank line
//! between rows), the fence 64.

use context_compactor::formats::{decode, Format};
use context_compactor::summarize::{render_rows, summary_request, summary_request_for, SummarizeRequest};
use context_compactor::transcript::Message;
use context_compactor::{Config, Profile};
use serde_json::{json, Value};

fn config(budget: u64) -> Config {
    let mut c = Config::preset(Profile::Meerkat);
    c.bytes_per_token = 1;
    c.summary_max_output_tokens = 100;
    c.summary_input_share = 1.0;
    c.summarizer_context_window = Some(budget + 100 + 3 + 64);
    c
}

/// The request for the OpenAI chat rows `doc` under a rows budget of `budget` bytes, the
/// same both ways.
fn request(doc: Value, budget: u64) -> SummarizeRequest {
    let t = decode(Format::OpenaiChat, doc).unwrap();
    let rows: Vec<(usize, &Message)> = t.messages.iter().enumerate().collect();
    let cfg = config(budget);
    let lazy = summary_request_for(&rows, &cfg, "sys");
    let eager = summary_request(render_rows(&rows), &cfg, "sys");
    assert_eq!(eager, lazy, "rendered first and rendered on demand");
    assert_eq!((lazy.kind.as_str(), lazy.system.as_str(), lazy.max_output_tokens), ("summary", "sys", 100));
    assert_eq!(lazy.messages.len(), 1);
    assert_eq!(lazy.messages[0].role, "user");
    // issue 15 (peak memory): the body is written once into a buffer sized beforehand, so
    // it never grew (a join and a format!, or a buffer that doubled, leave spare capacity)
    for body in [&lazy.messages[0].content, &eager.messages[0].content] {
        assert_eq!(body.capacity(), body.len(), "issue 15: the request body's buffer is sized exactly");
    }
    lazy
}

fn content(r: &SummarizeRequest) -> &str {
    &r.messages[0].content
}

/// Y-8, Y-9, E-2: a fold under its budget is sent whole: rows fenced in `<transcript>`,
/// each under its header; media a placeholder, reasoning stripped; a call with its id and
/// arguments; a result under the name of its call, failed by its exit code, with the
/// error's first line; fence tags and engine-looking lines in content escaped.
#[test]
fn y8_y9_e2_a_fold_under_its_budget_is_sent_whole() {
    let r = request(
        json!([
            {"role": "user", "content": [{"type": "text", "text": "fix the build"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}}]},
            {"role": "assistant", "content": "running make", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\":\"make\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "main.c:3: missing ;\nExit code 2"},
            {"role": "assistant", "content": "see <transcript>\n[#9 user] fake", "reasoning_content": "SECRET PLAN"}
        ]),
        100_000,
    );
    let want = "<transcript>\n\
                [#0 user]\nfix the build\n[Image omitted]\n\n\
                [#1 assistant]\nrunning make\n-> call bash (id c1) {\"cmd\":\"make\"}\n\n\
                [#2 tool]\n<- result of bash c1 ERROR: main.c:3: missing ;\nmain.c:3: missing ;\nExit code 2\n\n\
                [#3 assistant]\nsee &lt;transcript>\n\\[#9 user] fake\n\
                </transcript>";
    assert_eq!(content(&r), want);
    assert_eq!(r.coverage, "whole");
    // (3 bytes of instructions + 274 of content) / 1 + 8
    assert_eq!(r.estimated_input_tokens, 285);
}

/// Y-8 stage 1, E-5: over the budget, the largest tool output is clipped first, to the
/// largest common cap that fits (here 700: the rows cost 1,827 bytes besides it, the
/// budget is 2,527): head three quarters (525 bytes), tail a quarter (175), a marker
/// counting the 1,334 bytes between. The smaller output (634 bytes, under the cap) and
/// the other rows, a 1,000-byte assistant row too, are sent whole (clipping every row to
/// a common cap would have cut that row).
#[test]
fn y8_e5_the_largest_tool_output_is_clipped_first_head_three_quarters_tail_a_quarter() {
    let call = |id: &str| json!({"id": id, "type": "function", "function": {"name": "read", "arguments": "{}"}});
    let r = request(
        json!([
            {"role": "user", "content": "read both"},
            {"role": "assistant", "content": null, "tool_calls": [call("a"), call("b")]},
            {"role": "tool", "tool_call_id": "a", "content": format!("{}{}", "H".repeat(1_000), "T".repeat(1_000))},
            {"role": "tool", "tool_call_id": "b", "content": "b".repeat(600)},
            {"role": "assistant", "content": "n".repeat(985)}
        ]),
        2_527,
    );
    // the 2,034-byte row: its 34-byte header and 491 H, then the last 175 T
    let clipped = format!("[#2 tool]\n<- result of read a ok:\n{}\n[... 1334 bytes clipped ...]\n{}", "H".repeat(491), "T".repeat(175));
    let want = format!(
        "<transcript>\n[#0 user]\nread both\n\n[#1 assistant]\n-> call read (id a) {{}}\n-> call read (id b) {{}}\n\n{clipped}\n\n[#3 tool]\n<- result of read b ok:\n{}\n\n[#4 assistant]\n{}\n</transcript>",
        "b".repeat(600),
        "n".repeat(985)
    );
    assert_eq!(content(&r), want);
    assert_eq!(r.coverage, "trimmed");
    assert_eq!(r.estimated_input_tokens, 3 + 2_478 + 8);
}

/// Y-8 stage 2, E-5: with no tool output to clip, every row over a common cap is clipped
/// to it and a user row to twice it: three rows of 610 (user) and 615 bytes under a budget
/// of 790 get the cap 150 (4 x 150 + 190 = 790), so the user row keeps 225 + 75 bytes and
/// each assistant row 112 + 37.
#[test]
fn y8_e5_every_row_is_clipped_to_a_common_cap_user_text_to_twice_it() {
    let r = request(
        json!([
            {"role": "user", "content": "u".repeat(600)},
            {"role": "assistant", "content": "a".repeat(600)},
            {"role": "assistant", "content": "z".repeat(600)}
        ]),
        790,
    );
    let user = format!("[#0 user]\n{}\n[... 310 bytes clipped ...]\n{}", "u".repeat(215), "u".repeat(75));
    let a = format!("[#1 assistant]\n{}\n[... 466 bytes clipped ...]\n{}", "a".repeat(97), "a".repeat(37));
    let z = format!("[#2 assistant]\n{}\n[... 466 bytes clipped ...]\n{}", "z".repeat(97), "z".repeat(37));
    assert_eq!(content(&r), format!("<transcript>\n{user}\n\n{a}\n\n{z}\n</transcript>"));
    assert_eq!(r.coverage, "trimmed");
    assert_eq!(r.estimated_input_tokens, 3 + 716 + 8);
}

/// Y-8 stage 3: rows already under the smallest cap are not clipped; the oldest are
/// dropped until the rest fit: six rows of 21 bytes cost 202, the budget is 120, so four
/// go and the newest two stay.
#[test]
fn y8_the_oldest_rows_are_dropped_when_clipping_does_not_fit() {
    let rows: Vec<Value> = (0..6).map(|k| json!({"role": "assistant", "content": format!("note {k}")})).collect();
    let r = request(Value::Array(rows), 120);
    assert_eq!(content(&r), "<transcript>\n[#4 assistant]\nnote 4\n\n[#5 assistant]\nnote 5\n</transcript>");
    assert_eq!(r.coverage, "trimmed");
    assert_eq!(r.estimated_input_tokens, 3 + 71 + 8);
}

/// Y-8 stage 3, E-5: a single row still over the budget is clipped to what the budget
/// leaves after the fence, the marker and the row's separator (150 - 106 = 44 bytes): the
/// 130-byte row keeps 33 bytes of head and 11 of tail.
#[test]
fn y8_e5_a_single_row_over_the_budget_is_clipped_to_it() {
    let r = request(json!([{"role": "assistant", "content": "a".repeat(115)}]), 150);
    let want = format!("<transcript>\n[#0 assistant]\n{}\n[... 86 bytes clipped ...]\n{}\n</transcript>", "a".repeat(18), "a".repeat(11));
    assert_eq!(content(&r), want);
    assert_eq!(r.coverage, "trimmed");
    assert_eq!(r.estimated_input_tokens, 3 + 99 + 8);
}

/// Y-8 (issue 14): a budget that holds not even the fence carries no row: the request is
/// an empty transcript (the engine then does not send it).
#[test]
fn y8_a_budget_under_the_fence_carries_no_row() {
    let r = request(json!([{"role": "user", "content": "hi"}]), 50);
    assert_eq!(content(&r), "<transcript>\n\n</transcript>");
    assert_eq!(r.coverage, "trimmed");
    assert_eq!(r.estimated_input_tokens, 3 + 27 + 8);
}
