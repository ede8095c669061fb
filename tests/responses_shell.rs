//! The Responses API's `shell_call_output` and `apply_patch_call_output` items (break4
//! finding 3; F-1, Y-5, B-1): their stdout, stderr and exit code are the result's text,
//! a non-zero exit, a timeout or `status: "failed"` is a failed call, and an oversized
//! shell output can be bounded like any other result.

use context_compactor::config::Config;
use context_compactor::engine::{run_sync, Job, JobOptions, Reply};
use context_compactor::formats::{self, Format};
use context_compactor::state::SessionState;
use context_compactor::transcript::Block;
use context_compactor::trigger::Signals;
use serde_json::{json, Value};

fn doc(stderr: &str) -> Vec<Value> {
    let mut d = vec![json!({ "role": "user", "content": "fix the build" })];
    d.push(json!({ "type": "shell_call", "call_id": "s1", "action": { "commands": ["cargo build"], "timeout_ms": 60000 }, "status": "completed" }));
    d.push(json!({ "type": "shell_call_output", "call_id": "s1", "output": [{ "stdout": "", "stderr": stderr, "outcome": { "type": "exit", "exit_code": 101 } }] }));
    d.push(json!({ "type": "apply_patch_call", "call_id": "p1", "operation": { "type": "update_file", "path": "src/config.rs", "diff": "@@\n-    cfg_path\n+    config_path\n" }, "status": "completed" }));
    d.push(json!({ "type": "apply_patch_call_output", "call_id": "p1", "status": "failed", "output": "Patch failed: context does not match src/config.rs" }));
    d.push(json!({ "type": "shell_call", "call_id": "s2", "action": { "commands": ["ls"] }, "status": "completed" }));
    d.push(json!({ "type": "shell_call_output", "call_id": "s2", "output": [{ "stdout": "Cargo.toml\nsrc\n", "stderr": "", "outcome": { "type": "exit", "exit_code": 0 } }] }));
    d
}

fn result<'a>(t: &'a context_compactor::transcript::Transcript, id: &str) -> (&'a str, bool) {
    t.messages
        .iter()
        .flat_map(|m| m.blocks.iter())
        .find_map(|b| match b {
            Block::ToolResult { call_id, text, is_error, .. } if call_id == id => Some((text.as_str(), *is_error)),
            _ => None,
        })
        .expect("the result")
}

#[test]
fn f1_y5_shell_and_apply_patch_outputs_are_read_with_their_outcome() {
    let t = formats::decode(Format::OpenaiResponses, Value::Array(doc("error[E0425]: cannot find value `cfg_path` in this scope\n --> src/config.rs:41:9"))).unwrap();
    let (text, failed) = result(&t, "s1");
    assert!(text.contains("error[E0425]: cannot find value `cfg_path`") && text.contains("Exit code 101") && failed, "{text:?} {failed}");
    let (text, failed) = result(&t, "p1");
    assert!(text.contains("Patch failed") && failed, "{text:?}");
    let (text, failed) = result(&t, "s2");
    assert!(text.contains("Cargo.toml") && text.contains("Exit code 0") && !failed, "{text:?}");
    // the handoff summary names the failures
    let mut d = doc("error[E0425]: cannot find value `cfg_path` in this scope\n --> src/config.rs:41:9");
    for k in 1..=4 {
        d.push(json!({ "type": "function_call", "call_id": format!("r{k}"), "name": format!("tool_{k}"), "arguments": "{}" }));
        d.push(json!({ "type": "function_call_output", "call_id": format!("r{k}"), "output": format!("ok {}", "y".repeat(2000)) }));
    }
    let t = formats::decode(Format::OpenaiResponses, Value::Array(d)).unwrap();
    let config = Config::from_options(&json!({ "contextWindow": 128000 })).unwrap();
    let mut job = Job::start(config, SessionState::default(), t, JobOptions { signals: Signals { force: true, in_run: true, ..Signals::default() }, has_summarizer: false });
    let o = run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }).unwrap();
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let summary: String = o.transcript.messages.iter().filter(|m| m.is_summary()).map(|m| m.text()).collect();
    assert!(summary.contains("E0425") && summary.contains("Patch failed"), "{summary}");
}

#[test]
fn b1_an_oversized_shell_output_is_bounded() {
    // 310 KB of stderr in the open run (the last item is the shell output)
    let big = "warning: unused variable `x` in src/lib.rs\n".repeat(7_200);
    let mut d = doc("short");
    d.truncate(3);
    if let Some(o) = d[2].pointer_mut("/output/0/stderr") {
        *o = json!(big);
    }
    let config = Config::from_options(&json!({ "contextWindow": 16000 })).unwrap();
    let t = formats::decode(Format::OpenaiResponses, Value::Array(d)).unwrap();
    let b = context_compactor::bound::bound_request(&t, &config, &SessionState::default(), &context_compactor::bound::BoundOptions::default()).unwrap();
    assert!(b.fits && b.bounded.len() == 1, "fits {} bounded {}", b.fits, b.bounded.len());
    let req = formats::encode(&b.request, formats::View::Request);
    let out = req.pointer("/2/output/0").cloned().unwrap_or(Value::Null);
    assert_eq!(out.pointer("/outcome/exit_code"), Some(&json!(101)), "{out}");
    assert!(out.get("stdout").and_then(Value::as_str).is_some_and(|s| s.len() < big.len()), "{out}");
}
