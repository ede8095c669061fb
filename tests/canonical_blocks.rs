//! F-1: the canonical format's block reader (`formats::canonical::block`, written by hand
//! to keep serde's buffering of internally tagged enums out of the wasm module) reads
//! exactly what the derived `Deserialize` of `Block` reads: the same block for good
//! input, the same error text for bad input, for the object form and serde's sequence
//! form alike.

use context_compactor::formats::canonical::block;
use context_compactor::Block;
use serde_json::{json, Map, Value};

/// What serde's derive gives, as comparable text.
fn derived(v: &Value) -> Result<Block, String> {
    serde_json::from_value::<Block>(v.clone()).map_err(|e| e.to_string())
}

fn by_hand(v: &Value) -> Result<Block, String> {
    block(v).map_err(|e| e.to_string())
}

/// Values a field may hold: right and wrong types, edge numbers.
fn pool() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(false),
        json!(0),
        json!(7),
        json!(-3),
        json!(1.5),
        json!(18446744073709551615u64),
        json!(""),
        json!("image"),
        json!("video"),
        json!("weird"),
        json!("text"),
        json!([]),
        json!(["image", "audio"]),
        json!(["image", 3]),
        json!({}),
        json!({ "image": null }),
        json!({ "image": 1 }),
    ]
}

const KEYS: [&str; 16] = [
    "text", "kind", "bytes", "inline", "id", "name", "arguments", "call_id", "is_error", "media", "media_bytes", "signed", "extra", "Type", "TEXT", "type",
];

/// A value of the right type for a key, so many generated blocks are good ones.
fn fitting(k: &str, g: &mut Gen) -> Value {
    match k {
        "bytes" | "media_bytes" => json!(g.next(100)),
        "inline" | "is_error" | "signed" => json!(g.next(2) == 0),
        "media" => json!(["image", "audio"]),
        "kind" => json!(["image", "video", "server_tool_use"][g.next(3)]),
        "name" if g.next(3) == 0 => Value::Null,
        _ => json!("s"),
    }
}

const TYPES: [&str; 8] = ["text", "media", "tool_call", "tool_result", "reasoning", "opaque", "nope", "Text"];

/// A small deterministic generator (xorshift), so the cases are the same every run.
struct Gen(u64);

impl Gen {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn check(v: &Value) {
    assert_eq!(by_hand(v), derived(v), "block {v}");
}

#[test]
fn f1_canonical_blocks_read_like_the_derived_deserialize_for_good_blocks() {
    for v in [
        json!({ "type": "text", "text": "hi" }),
        json!({ "text": "hi", "type": "text", "extra": [1, 2] }),
        json!({ "type": "media", "kind": "image", "bytes": 12, "inline": true }),
        json!({ "type": "tool_call", "id": "c1", "name": "ls", "arguments": "{}" }),
        json!({ "type": "tool_result", "call_id": "c1", "text": "out" }),
        json!({ "type": "tool_result", "call_id": "c1", "name": "ls", "text": "out", "is_error": true, "media": ["image", "document"], "media_bytes": 40 }),
        json!({ "type": "reasoning" }),
        json!({ "type": "reasoning", "text": "t", "bytes": 9, "signed": true }),
        json!({ "type": "opaque", "kind": "server_tool_use" }),
        json!(["text", "hi"]),
        json!(["tool_result", "c1", null, "out"]),
        json!(["reasoning"]),
    ] {
        assert!(by_hand(&v).is_ok(), "{v}");
        check(&v);
    }
}

#[test]
fn f1_canonical_blocks_fail_like_the_derived_deserialize() {
    for v in [
        json!(null),
        json!("text"),
        json!(5),
        json!(-5),
        json!(2.5),
        json!(true),
        json!([]),
        json!({}),
        json!({ "text": "no type" }),
        json!({ "type": 3 }),
        json!({ "type": null, "text": "x" }),
        json!({ "type": "nope" }),
        json!({ "type": "text" }),
        json!({ "type": "text", "text": null }),
        json!({ "type": "media", "kind": "image", "bytes": -1, "inline": true }),
        json!({ "type": "media", "kind": "image", "bytes": 1.5, "inline": true }),
        json!({ "type": "media", "inline": 1, "kind": "x" }),
        json!({ "type": "media", "kind": { "image": null }, "bytes": 1, "inline": false }),
        json!({ "type": "media", "kind": { "image": null, "video": null }, "bytes": 1, "inline": false }),
        json!({ "type": "tool_result", "media": ["image", "nope"], "call_id": "c", "text": "t" }),
        json!(["text"]),
        json!(["text", "a", "b"]),
        json!(["media", "image"]),
        json!(["reasoning", "t", 1, true, 4]),
        json!([7, "a"]),
    ] {
        check(&v);
    }
}

#[test]
fn f1_canonical_blocks_match_the_derived_deserialize_on_generated_objects_and_sequences() {
    let pool = pool();
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let mut good = 0;
    for _ in 0..60_000 {
        let fit = g.next(2) == 0;
        let ty = json!(TYPES[g.next(TYPES.len())]);
        let v = if g.next(4) == 0 {
            // serde's sequence form: the tag, then fields in declaration order
            let mut items = vec![if g.next(10) == 0 { pool[g.next(pool.len())].clone() } else { ty }];
            for _ in 0..g.next(8) {
                let k = KEYS[g.next(12)];
                items.push(if fit { fitting(k, &mut g) } else { pool[g.next(pool.len())].clone() });
            }
            Value::Array(items)
        } else {
            let mut map = Map::new();
            let n = g.next(8);
            for _ in 0..n {
                let k = KEYS[g.next(KEYS.len())];
                let v = if k == "type" {
                    ty.clone()
                } else if fit {
                    fitting(k, &mut g)
                } else {
                    pool[g.next(pool.len())].clone()
                };
                map.insert(k.to_string(), v);
            }
            if g.next(6) != 0 && !map.contains_key("type") {
                map.insert("type".into(), ty);
            }
            Value::Object(map)
        };
        check(&v);
        good += usize::from(by_hand(&v).is_ok());
    }
    // the generated cases must exercise success as well as every kind of failure
    assert!(good > 3_000, "only {good} good blocks generated");
}
