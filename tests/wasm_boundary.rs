//! The JS boundary of the wasm build (src/wasm/mod.rs), run by wasm-bindgen-test in a real
//! JS engine: Node by default, headless Chromium with `WASM_BINDGEN_USE_BROWSER=1` and
//! `CHROMEDRIVER` set (scripts/test.sh runs both). Checks conversions (JS objects and JSON
//! text in, plain JS objects out), sync and async hooks (J-2), and errors with `.code`.
#![cfg(all(target_arch = "wasm32", feature = "wasm"))]

use context_compactor::wasm::{detect_format, import_transcript, version, ContextCompactor};
use js_sys::{Array, Function, Reflect, JSON};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

const GOLDEN: &str = include_str!("fixtures/golden.json");

fn parse(s: &str) -> JsValue {
    JSON::parse(s).unwrap_or(JsValue::NULL)
}
fn get(v: &JsValue, k: &str) -> JsValue {
    Reflect::get(v, &k.into()).unwrap_or(JsValue::UNDEFINED)
}
fn code_of(err: &JsValue) -> Option<String> {
    get(err, "code").as_string()
}
fn compactor() -> ContextCompactor {
    match ContextCompactor::new(parse(r#"{"format":"openai-chat","contextWindow":8000}"#)) {
        Ok(c) => c,
        Err(e) => panic!("constructor failed: {:?}", e),
    }
}
async fn compact(c: &ContextCompactor, transcript: JsValue, hooks: JsValue) -> Result<JsValue, JsValue> {
    JsFuture::from(c.compact(JsValue::NULL, transcript, hooks)).await
}
fn hooks_with(summarize: Function) -> JsValue {
    let hooks = js_sys::Object::new();
    let _ = Reflect::set(&hooks, &"summarize".into(), &summarize);
    hooks.into()
}

#[wasm_bindgen_test]
fn version_and_detect_format_cross_the_boundary() {
    assert_eq!(version(), env!("CARGO_PKG_VERSION"));
    assert_eq!(detect_format(parse(GOLDEN)).ok().as_deref(), Some("openai-chat"));
    // JSON text is accepted as well as objects.
    assert_eq!(detect_format(GOLDEN.into()).ok().as_deref(), Some("openai-chat"));
}

#[wasm_bindgen_test]
fn j2_errors_carry_a_stable_code() {
    let err = ContextCompactor::new(parse(r#"{"contextWindow":"big"}"#)).err().expect("bad option rejected");
    assert!(err.is_instance_of::<js_sys::Error>());
    assert_eq!(code_of(&err).as_deref(), Some("invalid_config"));
    assert_eq!(get(&err, "name").as_string().as_deref(), Some("ContextCompactorError"));
    let err = detect_format(parse(r#"{"hello":1}"#)).err().expect("unknown shape rejected");
    assert_eq!(code_of(&err).as_deref(), Some("unknown_format"));
    let err = import_transcript("claude-code-jsonl".into(), "{not json\n".into(), JsValue::UNDEFINED).err().expect("bad jsonl rejected");
    assert_eq!(code_of(&err).as_deref(), Some("invalid_transcript"));
    let log = "{\"type\":\"user\",\"session_id\":\"s\",\"message\":{\"content\":\"hi\"}}\n{\"type\": torn";
    let err = import_transcript("claude-code-jsonl".into(), log.into(), parse(r#"{"subagents":"keep"}"#)).err().expect("bad options rejected");
    assert_eq!(code_of(&err).as_deref(), Some("invalid_config"));
    let ok = import_transcript("claude-code-jsonl".into(), log.into(), parse(r#"{"subagents":"drop"}"#)).expect("N-2: a torn line is a warning");
    let warnings = get(&ok, "warnings");
    assert_eq!(get(&get(&warnings, "0"), "code").as_string().as_deref(), Some("torn_line"));
    assert_eq!(get(&get(&warnings, "0"), "line").as_f64(), Some(2.0));
    let err = compactor().check(JsValue::NULL, "{ nope".into(), JsValue::UNDEFINED).err().expect("bad JSON text rejected");
    assert_eq!(code_of(&err).as_deref(), Some("invalid_transcript"));
}

#[wasm_bindgen_test]
fn c9_check_returns_a_plain_object_decision() {
    let d = compactor().check(JsValue::NULL, parse(GOLDEN), parse(r#"{"toolsBytes":100}"#)).expect("check");
    assert_eq!(get(&d, "compact").as_bool(), Some(true));
    assert_eq!(get(&d, "reason").as_string().as_deref(), Some("estimate_over_threshold"));
    assert!(Array::is_array(&get(&d, "signals")));
    assert_eq!(get(&d, "contextWindow").as_f64(), Some(8000.0));
    let floor = get(&d, "floor");
    assert!(get(&floor, "totalTokens").as_f64().unwrap_or(0.0) > 0.0);
}

#[wasm_bindgen_test]
async fn j2_sync_summarize_hook_result_is_used() {
    let f = Function::new_with_args("req", "return 'SYNC ' + req.kind + ' ' + req.messages.length");
    let r = compact(&compactor(), parse(GOLDEN), hooks_with(f)).await.expect("compact");
    assert_eq!(get(&r, "status").as_string().as_deref(), Some("compacted"));
    let summary = get(&get(&get(&r, "rewrite"), "summary"), "text").as_string().unwrap_or_default();
    assert!(summary.starts_with("SYNC summary "), "{summary}");
    let writer = get(&get(&get(&get(&r, "rewrite"), "summary"), "source"), "writer").as_string();
    assert_eq!(writer.as_deref(), Some("provider"));
}

#[wasm_bindgen_test]
async fn j2_async_summarize_hook_and_on_event_are_awaited() {
    let f = Function::new_with_args("req", "return new Promise(r => setTimeout(() => r({ text: 'ASYNC ' + req.maxOutputTokens, usage: { prompt_tokens: 10, completion_tokens: 5 } }), 5))");
    let hooks = hooks_with(f);
    let seen = Array::new();
    let _ = Reflect::set(&js_sys::global(), &"__ccSeen".into(), &seen);
    let on_event = Function::new_with_args("e", "return new Promise(r => setTimeout(() => { globalThis.__ccSeen.push(e.type); r() }, 1))");
    let _ = Reflect::set(&hooks, &"onEvent".into(), &on_event);
    let r = compact(&compactor(), GOLDEN.into(), hooks).await.expect("compact");
    let summary = get(&get(&get(&r, "rewrite"), "summary"), "text").as_string().unwrap_or_default();
    assert!(summary.starts_with("ASYNC "), "{summary}");
    let spend = get(&r, "spend");
    assert_eq!(get(&spend, "summarizeCalls").as_f64(), Some(1.0));
    assert_eq!(get(&spend, "outputTokens").as_f64(), Some(5.0));
    let kinds: Vec<String> = seen.iter().filter_map(|v| v.as_string()).collect();
    assert_eq!(kinds.first().map(String::as_str), Some("compaction_started"));
    assert!(kinds.iter().any(|k| k == "compaction_completed"), "{kinds:?}");
}

#[wasm_bindgen_test]
async fn w3_a_rejected_hook_error_reaches_the_caller_unchanged_with_state() {
    let f = Function::new_with_args("req", "return Promise.reject(Object.assign(new Error('upstream down'), { code: 'my_code', status: 503 }))");
    let err = compact(&compactor(), parse(GOLDEN), hooks_with(f)).await.err().expect("rejects");
    assert_eq!(code_of(&err).as_deref(), Some("my_code"));
    assert_eq!(get(&err, "message").as_string().as_deref(), Some("upstream down"));
    assert_eq!(get(&err, "status").as_f64(), Some(503.0));
    assert!(get(&err, "state").is_object(), "the new state rides on the error");
    // A synchronous throw behaves the same.
    let f = Function::new_with_args("req", "throw Object.assign(new Error('sync boom'), { code: 'sync_code' })");
    let err = compact(&compactor(), parse(GOLDEN), hooks_with(f)).await.err().expect("rejects");
    assert_eq!(code_of(&err).as_deref(), Some("sync_code"));
}

#[wasm_bindgen_test]
async fn f4_to_request_and_mechanical_summary_without_hook() {
    let c = compactor();
    let r = compact(&c, parse(GOLDEN), JsValue::UNDEFINED).await.expect("compact");
    let writer = get(&get(&get(&get(&r, "rewrite"), "summary"), "source"), "writer").as_string();
    assert_eq!(writer.as_deref(), Some("mechanical"));
    let stored = get(&r, "transcript");
    let request = c.to_request(stored, JsValue::NULL, JsValue::UNDEFINED).expect("toRequest");
    assert_eq!(JSON::stringify(&request).ok().and_then(|s| s.as_string()), JSON::stringify(&get(&r, "request")).ok().and_then(|s| s.as_string()));
    let messages = get(&request, "messages");
    assert!(Array::is_array(&messages));
    assert_eq!(Array::from(&messages).length(), 4);
}

#[wasm_bindgen_test]
async fn promise_resolve_accepts_thenables() {
    // J-2: a hook's result goes through Promise.resolve, so a bare thenable works too.
    let f = Function::new_with_args("req", "return { then(ok) { ok('THENABLE') } }");
    let r = compact(&compactor(), parse(GOLDEN), hooks_with(f)).await.expect("compact");
    let summary = get(&get(&get(&r, "rewrite"), "summary"), "text").as_string().unwrap_or_default();
    assert!(summary.starts_with("THENABLE"), "{summary}");
}
