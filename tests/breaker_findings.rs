//! Findings of the breaker session on the handoff summary (Y-5 the folded-call ledger, N-5
//! the floor under any summary): §5 resolution by the same command, and the error line
//! shown for a failed call.

use context_compactor::formats::{self, Format};
use context_compactor::summarize::facts::{core_command, Facts};
use context_compactor::summarize::{self, handoff_summary};
use context_compactor::transcript::Message;
use serde_json::{json, Value};

fn facts_of(format: Format, doc: Value) -> Facts {
    let t = formats::decode(format, doc).unwrap();
    let rows: Vec<(usize, &Message)> = t.messages.iter().enumerate().collect();
    Facts::read(&rows, &|_, _, _| None)
}

fn section(text: &str, n: usize) -> String {
    let h = summarize::section_header(n);
    let start = text.find(&h).unwrap_or_else(|| panic!("section {n} in\n{text}")) + h.len();
    let end = text[start..].find("\n[§").map(|e| start + e).unwrap_or(text.len());
    text[start..end].to_string()
}

/// An OpenAI chat session of `bash` calls: (id, command, output).
fn chat(calls: &[(&str, &str, &str)]) -> Value {
    let mut d = vec![json!({"role": "system", "content": "sys"}), json!({"role": "user", "content": "Ship the release."})];
    for (id, cmd, out) in calls {
        d.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": "bash", "arguments": json!({"command": cmd}).to_string()}}]}));
        d.push(json!({"role": "tool", "tool_call_id": id, "content": out}));
    }
    d.push(json!({"role": "assistant", "content": "Looked around."}));
    Value::Array(d)
}

/// The §5 line of the failed call `id`.
fn error_entry(f: &Facts, id: &str) -> String {
    let s = section(&handoff_summary(f, 16 * 1024), 5);
    s.lines().find(|l| l.contains(&format!("[{id}]"))).unwrap_or_else(|| panic!("{id} in\n{s}")).to_string()
}

#[test]
fn y5_core_command_unwraps_shell_wrappers_and_cd() {
    assert_eq!(core_command("bash -lc \"cd /repo &&  npm   test\""), "npm test");
    assert_eq!(core_command("bash -lc git push origin main"), "git push origin main");
    assert_eq!(core_command("/bin/sh -c 'make build'"), "make build");
    assert_eq!(core_command("cd a && cd b && cargo test"), "cargo test");
    assert_eq!(core_command("npm run build"), "npm run build");
    assert_ne!(core_command("npm run build"), core_command("npm run lint"));
}

/// Y-5 §5 (breaker finding 1): a failed command is not resolved by a later success whose
/// first two words match; only the same command resolves it.
#[test]
fn y5_a_failed_command_is_not_resolved_by_another_command_with_the_same_first_words() {
    let f = facts_of(
        Format::OpenaiChat,
        chat(&[
            ("b1", "npm run build", "npm error code ELIFECYCLE\nnpm error Build failed\nexit code 1"),
            ("b2", "npm run lint", "ok, 0 problems\nexit code 0"),
            ("c1", "cd /repo && python3 migrate.py --prod", "Traceback (most recent call last):\nKeyError: DATABASE_URL\nexit code 1"),
            ("c2", "cd /repo && python3 -c \"print(1)\"", "1\nexit code 0"),
        ]),
    );
    for id in ["b1", "c1"] {
        let e = error_entry(&f, id);
        assert!(e.contains("not resolved in the folded rows") && !e.contains("resolved: a later"), "{e}");
    }
}

/// Y-5 §5: the same command, behind a different `bash -lc` / `cd DIR &&` wrapping or
/// spacing, does resolve it.
#[test]
fn y5_a_failed_command_is_resolved_by_the_same_command_rewrapped() {
    let f = facts_of(
        Format::OpenaiChat,
        chat(&[
            ("b1", "npm run build", "npm error code ELIFECYCLE\nnpm error Build failed\nexit code 1"),
            ("b2", "npm run lint", "ok, 0 problems\nexit code 0"),
            ("b3", "bash -lc 'cd /repo &&  npm run build'", "built in 2s\nexit code 0"),
        ]),
    );
    let e = error_entry(&f, "b1");
    assert!(e.contains("resolved: a later bash call (b3) succeeded"), "{e}");
}

/// Y-5 §5 with a Codex `shell` call (`command: ["bash", "-lc", ...]`): `ls` does not
/// resolve a failed `git push origin main`; a later `git push origin main` does.
#[test]
fn y5_codex_shell_failure_is_resolved_only_by_the_same_script() {
    let sh = |id: &str, cmd: &str, out: &str| {
        vec![
            json!({"type": "function_call", "call_id": id, "name": "shell", "arguments": json!({"command": ["bash", "-lc", cmd]}).to_string()}),
            json!({"type": "function_call_output", "call_id": id, "output": out}),
        ]
    };
    let mut items = vec![json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Ship the release."}]})];
    items.extend(sh("a1", "git push origin main", "Exit code: 1\nWall time: 1s\nOutput:\nerror: failed to push some refs to origin"));
    items.extend(sh("a2", "ls", "Exit code: 0\nWall time: 0s\nOutput:\nREADME.md"));
    items.push(json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Looked around."}]}));
    let f = facts_of(Format::OpenaiResponses, Value::Array(items.clone()));
    let e = error_entry(&f, "a1");
    assert!(e.contains("not resolved in the folded rows") && !e.contains("(a2)"), "{e}");
    items.extend(sh("a3", "git push  origin main", "Exit code: 0\nWall time: 1s\nOutput:\nmain -> main"));
    let f = facts_of(Format::OpenaiResponses, Value::Array(items));
    let e = error_entry(&f, "a1");
    assert!(e.contains("resolved: a later shell call (a3) succeeded"), "{e}");
}

/// Y-5 §5: a call naming a path (no command) is still resolved by a later success on
/// that path.
#[test]
fn y5_a_failed_path_call_is_resolved_by_a_later_success_on_the_path() {
    let d = json!([
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "e1", "type": "function", "function": {"name": "Edit", "arguments": json!({"file_path": "/repo/a.rs", "old_string": "x", "new_string": "y"}).to_string()}}]},
        {"role": "tool", "tool_call_id": "e1", "content": "Error: old_string not found in file"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "e2", "type": "function", "function": {"name": "Edit", "arguments": json!({"file_path": "/repo/a.rs", "old_string": "z", "new_string": "y"}).to_string()}}]},
        {"role": "tool", "tool_call_id": "e2", "content": "The file /repo/a.rs has been updated."},
        {"role": "assistant", "content": "done"}
    ]);
    let f = facts_of(Format::OpenaiChat, d);
    let e = error_entry(&f, "e1");
    assert!(e.contains("resolved: a later Edit call (e2) succeeded"), "{e}");
}

/// A chat session of one call per (id, tool, output), each given the error flag.
fn failed_calls(calls: &[(&str, &str, &str)]) -> Facts {
    let mut d = vec![json!({"role": "user", "content": "go"})];
    for (id, name, out) in calls {
        d.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": "{\"x\":1}"}}]}));
        d.push(json!({"role": "tool", "tool_call_id": id, "content": out}));
    }
    d.push(json!({"role": "assistant", "content": "done"}));
    let t = formats::decode(Format::OpenaiChat, Value::Array(d)).unwrap();
    let mut msgs = t.messages.clone();
    for m in msgs.iter_mut() {
        for b in m.blocks.iter_mut() {
            if let context_compactor::transcript::Block::ToolResult { is_error, .. } = b {
                *is_error = true;
            }
        }
    }
    let rows: Vec<(usize, &Message)> = msgs.iter().enumerate().collect();
    Facts::read(&rows, &|_, _, _| None)
}

fn failed_line(f: &Facts, id: &str) -> String {
    let c = f.calls.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("{id}"));
    c.outcome.describe()
}

/// Y-5 / N-5 (breaker finding 2): a failed JSON object body is named by its message, not
/// by its first line `{` nor by 200 bytes of the fields before the message.
#[test]
fn n5_failed_json_body_is_named_by_its_message() {
    let long = format!("{{\"ok\":false,\"request_id\":\"req_{}\",\"meta\":{{\"region\":\"eu-west-1\"}},\"error\":{{\"code\":\"token_expired\",\"message\":\"OAuth token expired at 16:59\"}}}}", "9".repeat(240));
    let f = failed_calls(&[
        ("j1", "http_get", "{\n  \"status\": \"error\",\n  \"message\": \"quota exceeded\"\n}"),
        ("j2", "gql", "{\n  \"data\": null,\n  \"errors\": [\n    {\n      \"message\": \"Not authorized\",\n      \"locations\": [{\"line\": 1}]\n    }\n  ]\n}"),
        ("j3", "create_user", &long),
        ("j4", "api", "{\"status\": 500, \"error\": \"Internal Server Error\", \"message\": \"later\"}"),
        ("j5", "api", "{\"Status\": \"Error\", \"Message\": \"bad key\"}"),
        ("j6", "api", "{\"detail\": \"Not found.\"}"),
        ("j7", "api", "{\"success\": false, \"reason\": \"quota\"}"),
        ("j8", "api", "{\"error\": true, \"code\": 7}"),
    ]);
    assert_eq!(failed_line(&f, "j1"), "failed: message: quota exceeded");
    assert_eq!(failed_line(&f, "j2"), "failed: errors: Not authorized");
    assert_eq!(failed_line(&f, "j3"), "failed: error: OAuth token expired at 16:59");
    assert_eq!(failed_line(&f, "j4"), "failed: error: Internal Server Error");
    assert_eq!(failed_line(&f, "j5"), "failed: Message: bad key");
    assert_eq!(failed_line(&f, "j6"), "failed: detail: Not found.");
    assert_eq!(failed_line(&f, "j7"), "failed: reason: quota");
    // no message to name: the first line, as before
    assert_eq!(failed_line(&f, "j8"), "failed: {\"error\": true, \"code\": 7}");
    // bounded: a long message is clipped
    let f = failed_calls(&[("j9", "api", &format!("{{\"message\": \"{}\"}}", "m".repeat(5_000)))]);
    assert!(failed_line(&f, "j9").len() < 260, "{}", failed_line(&f, "j9"));
}

/// Y-5 / N-5 (breaker finding 3): the error line of gcc (its `: error:` diagnostic, not
/// the command echoed first), Go (past the `# pkg` header), Maven (its `[ERROR]` line,
/// not `[INFO]`) and Terraform (ANSI colour codes and box marks stripped).
#[test]
fn n5_error_line_of_gcc_go_maven_and_terraform() {
    let f = failed_calls(&[
        ("g1", "bash", "gcc -o app main.c\nmain.c:3:5: error: use of undeclared identifier 'y'\n1 error generated.\nmake: *** [app] Error 1\nexit code 2"),
        ("g2", "bash", "# example.com/app\n./main.go:5:2: undefined: foo\nexit status 1"),
        ("g3", "bash", "[INFO] Scanning for projects...\n[ERROR] Failed to execute goal surefire:3.0:test (default-test): There are test failures.\nexit code 1"),
        ("g4", "bash", "\u{1b}[31m╷\u{1b}[0m\n\u{1b}[31m│\u{1b}[0m \u{1b}[1m\u{1b}[31mError: \u{1b}[0m\u{1b}[1mError creating S3 bucket: BucketAlreadyExists\u{1b}[0m\nexit code 1"),
        ("g5", "bash", "cc main.c\nmain.c:1:10: fatal error: 'x.h' file not found\nexit code 1"),
    ]);
    assert_eq!(failed_line(&f, "g1"), "failed (exit 2): main.c:3:5: error: use of undeclared identifier 'y'");
    assert_eq!(failed_line(&f, "g2"), "failed (exit 1): ./main.go:5:2: undefined: foo");
    assert_eq!(failed_line(&f, "g3"), "failed (exit 1): [ERROR] Failed to execute goal surefire:3.0:test (default-test): There are test failures.");
    assert_eq!(failed_line(&f, "g4"), "failed (exit 1): Error: Error creating S3 bucket: BucketAlreadyExists");
    assert_eq!(failed_line(&f, "g5"), "failed (exit 1): main.c:1:10: fatal error: 'x.h' file not found");
}
