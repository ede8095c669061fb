//! The constraint-flood transcript (N-1 / S-9 adversarial finding "superlinear time on
//! messages full of constraint sentences"), shared by tests/nothing_lost.rs and
//! examples/constraint_flood.rs (included by path: not a test target of its own).

use serde_json::{json, Value};

/// A transcript of about `bytes` UTF-8 bytes whose user rows are nothing but constraint
/// sentences (`distinct`: each one different; else 50 distinct, repeated).
pub fn constraint_flood(bytes: usize, distinct: bool) -> Value {
    let words = ["You must keep", "Never touch", "Always run", "Do not rename", "Make sure to test", "You should document"];
    let mut messages = vec![json!({ "role": "system", "content": "You are a coding agent." })];
    let (mut total, mut k) = (0usize, 0usize);
    while total < bytes {
        let mut text = String::new();
        while text.len() < 1_000 {
            let n = if distinct { k } else { k % 50 };
            text.push_str(&format!("{} module_{n}/file_{n}.rs as it is. ", words[n % words.len()]));
            k += 1;
        }
        total += text.len();
        messages.push(json!({ "role": "user", "content": text }));
        messages.push(json!({ "role": "assistant", "content": "Understood." }));
    }
    messages.push(json!({ "role": "user", "content": "Now fix the parser." }));
    Value::Array(messages)
}
