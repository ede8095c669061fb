//! Configuration: every number from the seeds, with its default and source, and the
//! profiles (`kerkov`, `meerkat`, `default`) as presets (REQUIREMENTS "profiles").
//!
//! Options arrive from JS in camelCase (`contextWindow`, `thresholdPct`); the seed's
//! snake_case names (`max_context_tokens`, `threshold_pct`, ...) are accepted as aliases.

use crate::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};

/// A named preset. No code path depends on the profile beyond these values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// The Kerkov seed exactly: provider-reported trigger only, no in-run stages.
    Kerkov,
    /// The Meerkat seed: pressure signals, staged in-run compaction.
    Meerkat,
    /// Both combined (the recommended preset).
    #[default]
    Default,
}

/// How the trigger decides (C-1 vs C-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggerMode {
    /// C-1: only the provider-reported `total_tokens`; no local estimate.
    ProviderUsage,
    /// C-2: every pressure signal (provider count, projection, estimates, bytes, refusal).
    Signals,
}

/// The resolved configuration. Units are in each field's doc.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    /// The preset these values started from (JSON `profile`: `kerkov`, `meerkat`, `default`).
    pub profile: Profile,
    /// How the trigger decides: `provider_usage` (C-1, Kerkov) or `signals` (C-2, Meerkat/default).
    pub trigger: TriggerMode,
    /// Model context window, tokens (Kerkov MAX_CONTEXT_TOKENS). Default 200,000.
    pub context_window: u64,
    /// Compact when usage >= this fraction of the window. Kerkov COMPACTION_THRESHOLD_PCT 0.65 (C-1).
    pub threshold_pct: f64,
    /// Messages kept verbatim at the end. Kerkov PRESERVE_RECENT_TURNS 6 (S-2).
    pub preserve_recent_turns: usize,
    /// Byte budget of the recent window, UTF-8 bytes. Kerkov PRESERVE_RECENT_BYTES 65,536 (S-2).
    pub preserve_recent_bytes: usize,
    /// Evict tool-result bodies over this many UTF-8 bytes. Kerkov EVICT_TOOL_RESULT_MIN_BYTES 1,024 (E-3).
    pub evict_tool_result_min_bytes: usize,
    /// Head of an unrecoverable clip, UTF-8 bytes (E-4, E-5).
    pub clip_head_bytes: usize,
    /// Tail of an unrecoverable clip, UTF-8 bytes (E-4, E-5).
    pub clip_tail_bytes: usize,
    /// Artifact handles indexed under a summary, newest kept. Kerkov MAX_INDEXED_ARTIFACTS 60 (Y-2).
    pub max_indexed_artifacts: usize,
    /// Most UTF-8 bytes of text the pinned rows may hold (Y-10, issue 14); pins past it,
    /// oldest first kept, are not honoured (a `pins_over_cap` warning names them).
    /// Default 32,768.
    pub max_pinned_bytes: u64,
    /// Roll level-1 summaries up when the block holds more than this. Kerkov MAX_SUMMARIES_BEFORE_ROLLUP 4 (Y-3).
    pub max_summaries_before_rollup: usize,
    /// Merge level-2 summaries when more than this. Kerkov MAX_ROLLED_UP_SUMMARIES 4 (Y-3).
    pub max_rolled_up_summaries: usize,
    /// Tokens reserved for the model's answer, counted in the forecast and floor (C-2,
    /// C-8). Kerkov 0; Meerkat/default unset = min(4,096, a tenth of the window).
    pub output_reserve_tokens: Option<u64>,
    /// Provider request-body cap, UTF-8 bytes (C-2, B-1). None: no cap.
    pub max_request_bytes: Option<u64>,
    /// Estimator: bytes of text per token (C-7). 4.
    pub bytes_per_token: u64,
    /// Estimator: tokens per image (C-7). 1,600.
    pub image_tokens: u64,
    /// Output budget asked of the summarizer, tokens (Y-8). 2,048.
    pub summary_max_output_tokens: u64,
    /// The summarizer's own context window, tokens (Y-1, Y-8). Default: `context_window`.
    pub summarizer_context_window: Option<u64>,
    /// Bound on the summarize request as a share of what it folds (Y-8, issue 7 target
    /// "summarize request <= 30% of the folded range's tokens": eviction before summary).
    /// The request (instructions + fenced rows) is kept under this fraction of the folded
    /// rows' rendered UTF-8 bytes, but its rows are never bounded under
    /// [`crate::summarize::MIN_SUMMARY_INPUT_BYTES`]. Over it, rows are clipped head and
    /// tail, largest tool outputs first, then every row to a common cap (user text gets
    /// twice the cap), then the oldest rows are dropped (coverage `trimmed`). The first
    /// and newest user requests stay verbatim in the summary's deterministic tail (S-9).
    /// Meerkat/default 0.25 (under 30% with the instructions counted); Kerkov 1.0 (only
    /// the window bounds the input, as in that seed).
    #[serde(default = "default_summary_input_share")]
    pub summary_input_share: f64,
    /// Under byte pressure keep fewer recent rows so the rebuilt request fits (S-8):
    /// the recent window's bytes are capped at half of what the threshold leaves after
    /// the floor and the summary budget. Kerkov: false (count and bytes only, S-2).
    pub fit_recent_window: bool,
    /// Never fold the newest user request (S-6, S-9). Kerkov: false (the request is then
    /// quoted verbatim in the summary when folded, S-9).
    pub protect_run_request: bool,
    /// Fold the open run's completed rounds when nothing before the run is left (S-6 stage 2).
    pub in_run_stage2: bool,
    /// Append the folded-call ledger to stage-2 summaries (Y-5).
    pub folded_call_ledger: bool,
    /// Rehydration budget (N-6), UTF-8 bytes: the instruction documents the folded rows
    /// loaded and the latest plan state are re-attached verbatim after the summary, newest
    /// first, up to this many bytes; the rest is named with its handle. 0 disables.
    /// Default: 8,192; kerkov and meerkat: 0 (the seeds do not rehydrate).
    #[serde(default)]
    pub rehydrate_bytes: usize,
    /// Instructions for a summary call (Y-9). `None`: the built-in
    /// [`crate::prompts::SUMMARY_PROMPT`]. The engine still fences the transcript as data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_prompt: Option<String>,
    /// Instructions for a rollup merge call (Y-3, Y-9). `None`: the built-in
    /// [`crate::prompts::ROLLUP_PROMPT`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollup_prompt: Option<String>,
    /// Minimum-boundary cadence (C-4, C-5), boundaries: after a compaction attempt
    /// (committed or failed) at boundary B, an ordinary high-water mark (the provider's
    /// count, an anchor already over the threshold, any crossing after a failed attempt
    /// or after a rewrite that left history over the threshold) is suppressed until
    /// boundary B + this. Recovery (request bytes, or history / projection crossing
    /// through growth when the last rewrite got history under the threshold), a
    /// recorded refusal and `force` are never suppressed. A boundary is one answered or
    /// refused request (`observeUsage`, `recordRefusal`), or a `compact` call with none
    /// since the previous one. Meerkat/default: 2 (one boundary skipped between
    /// attempts; the seed names the cadence but not its length). Kerkov: 0 (none).
    #[serde(default = "default_min_boundaries")]
    pub min_boundaries_between: u64,
    /// Project the discarded rows into memory records (M-1). Default true in every
    /// profile. A host that never recalls (no memory store, no recall tool) may turn it
    /// off: the result's `memory` is then `{ session, records: [] }`, no memory step is
    /// asked, and the compaction skips building and returning a copy of every
    /// discarded row (for a large fold, most of the result's bytes).
    #[serde(default = "default_true")]
    pub project_memory: bool,
    /// Largest transcript accepted, UTF-8 bytes of its JSON text (issue 15). A larger one
    /// fails with `too_large` before it is decoded, instead of exhausting wasm memory
    /// (a compaction peaks at a few times the transcript) or the JS string limit.
    /// Default 256 MiB (268,435,456); at least 1.
    #[serde(default = "default_max_transcript_bytes")]
    pub max_transcript_bytes: u64,
    /// The clearing tier (K-1): old tool results replaced by placeholders before any
    /// summary. `None`: off. See [`crate::clear`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clear_tool_uses: Option<crate::clear::ClearToolUses>,
    /// Clearing of old reasoning (K-1, T-3). `None`: off. See [`crate::clear`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clear_thinking: Option<crate::clear::ClearThinking>,
    /// Recent conversational user messages kept verbatim out of a fold, newest first, up
    /// to this many estimated tokens (K-2; Codex keeps 20,000). `None`: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserve_recent_user_tokens: Option<u64>,
    /// Extra triggers (K-2, LangChain `trigger` style): compact when every threshold of
    /// any one clause is reached. Empty: none. See [`crate::editing::TriggerClause`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trigger_on: Vec<crate::editing::TriggerClause>,
    /// Prompt-cache pricing and policy (K-3). `None`: no cache report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<crate::cache::PromptCache>,
}

/// [`Config::max_transcript_bytes`] by default: 256 MiB.
pub const DEFAULT_MAX_TRANSCRIPT_BYTES: u64 = 256 << 20;

fn default_max_transcript_bytes() -> u64 {
    DEFAULT_MAX_TRANSCRIPT_BYTES
}

fn default_true() -> bool {
    true
}

/// The default profile's rehydration budget (N-6), UTF-8 bytes.
pub const DEFAULT_REHYDRATE_BYTES: usize = 8_192;

fn default_min_boundaries() -> u64 {
    2
}

fn default_summary_input_share() -> f64 {
    0.25
}

impl Config {
    /// The preset for a profile.
    pub fn preset(profile: Profile) -> Config {
        let base = Config {
            profile,
            trigger: TriggerMode::Signals,
            context_window: 200_000,
            threshold_pct: 0.65,
            preserve_recent_turns: 6,
            preserve_recent_bytes: 65_536,
            evict_tool_result_min_bytes: 1_024,
            clip_head_bytes: 1_200,
            clip_tail_bytes: 400,
            max_indexed_artifacts: 60,
            max_pinned_bytes: 32_768,
            max_summaries_before_rollup: 4,
            max_rolled_up_summaries: 4,
            output_reserve_tokens: None,
            max_request_bytes: None,
            bytes_per_token: 4,
            image_tokens: 1_600,
            summary_max_output_tokens: 2_048,
            summarizer_context_window: None,
            fit_recent_window: true,
            protect_run_request: true,
            in_run_stage2: true,
            folded_call_ledger: true,
            rehydrate_bytes: 0,
            summary_prompt: None,
            rollup_prompt: None,
            min_boundaries_between: 2,
            summary_input_share: 0.25,
            project_memory: true,
            max_transcript_bytes: DEFAULT_MAX_TRANSCRIPT_BYTES,
            clear_tool_uses: None,
            clear_thinking: None,
            preserve_recent_user_tokens: None,
            trigger_on: Vec::new(),
            prompt_cache: None,
        };
        match profile {
            Profile::Kerkov => Config {
                trigger: TriggerMode::ProviderUsage,
                output_reserve_tokens: Some(0),
                in_run_stage2: false,
                protect_run_request: false,
                fit_recent_window: false,
                folded_call_ledger: false,
                min_boundaries_between: 0,
                summary_input_share: 1.0,
                ..base
            },
            Profile::Meerkat => base,
            Profile::Default => Config { rehydrate_bytes: DEFAULT_REHYDRATE_BYTES, ..base },
        }
    }

    /// Threshold in tokens: `threshold_pct x context_window`, rounded up.
    pub fn threshold_tokens(&self) -> u64 {
        (self.threshold_pct * self.context_window as f64).ceil() as u64
    }

    /// The output reserve in force, tokens (C-8).
    pub fn output_reserve(&self) -> u64 {
        self.output_reserve_tokens.unwrap_or_else(|| (self.context_window / 10).min(4_096))
    }

    /// The summary instructions in force (Y-9).
    pub fn summary_instructions(&self) -> &str {
        self.summary_prompt.as_deref().unwrap_or(crate::prompts::SUMMARY_PROMPT)
    }

    /// The rollup instructions in force (Y-3, Y-9).
    pub fn rollup_instructions(&self) -> &str {
        self.rollup_prompt.as_deref().unwrap_or(crate::prompts::ROLLUP_PROMPT)
    }

    /// The summarizer's window, tokens.
    pub fn summarizer_window(&self) -> u64 {
        self.summarizer_context_window.unwrap_or(self.context_window)
    }

    /// Resolves options (JSON) over the profile preset. Errors: `invalid_config` naming
    /// the field.
    pub fn from_options(opts: &serde_json::Value) -> Result<Config> {
        ConfigInput::from_json(opts.clone())?.resolve()
    }

    fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::new(ErrorCode::InvalidConfig, m.to_string()));
        if !(self.threshold_pct > 0.0 && self.threshold_pct <= 1.0) {
            return bad("thresholdPct must be in (0, 1]");
        }
        if self.context_window == 0 {
            return bad("contextWindow must be > 0 tokens");
        }
        if self.summary_prompt.as_deref().is_some_and(|p| p.trim().is_empty()) {
            return bad("summaryPrompt must not be empty");
        }
        if self.rollup_prompt.as_deref().is_some_and(|p| p.trim().is_empty()) {
            return bad("rollupPrompt must not be empty");
        }
        if !(self.summary_input_share > 0.0 && self.summary_input_share <= 1.0) {
            return bad("summaryInputShare must be in (0, 1]");
        }
        if self.bytes_per_token == 0 {
            return bad("bytesPerToken must be > 0");
        }
        if self.max_transcript_bytes == 0 {
            return bad("maxTranscriptBytes must be > 0");
        }
        crate::editing::validate_config(self)
    }

    /// Checks a transcript's size against [`Config::max_transcript_bytes`] (issue 15).
    /// `bytes`: UTF-8 bytes of its JSON text (a lower bound such as its UTF-16 length is
    /// fine for an early check). Errors: `too_large`, naming both sizes.
    pub fn check_transcript_bytes(&self, bytes: u64) -> Result<()> {
        if bytes > self.max_transcript_bytes {
            return Err(Error::new(
                ErrorCode::TooLarge,
                format!("transcript: {bytes} bytes of JSON text, over maxTranscriptBytes ({} bytes)", self.max_transcript_bytes),
            ));
        }
        Ok(())
    }
}

/// Options as the host writes them: every field optional, over a profile preset.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigInput {
    /// The preset the other fields override (`kerkov`, `meerkat`, `default`); absent: `default`.
    pub profile: Option<Profile>,
    /// The K options (`trigger`, `clearToolUses`, `clearThinking`, `promptCache`), taken
    /// out of the options by [`ConfigInput::from_json`] and read by hand (K-1..K-3);
    /// `trigger` as a string overrides [`Config::trigger`] (C-1 / C-2).
    #[serde(skip)]
    pub editing: crate::editing::EditingInput,
    /// Overrides [`Config::context_window`], tokens. Also read as `max_context_tokens` (Kerkov) or `context_window`.
    #[serde(alias = "max_context_tokens", alias = "context_window")]
    pub context_window: Option<u64>,
    /// Overrides [`Config::threshold_pct`], a fraction in (0, 1] (C-1).
    #[serde(alias = "threshold_pct")]
    pub threshold_pct: Option<f64>,
    /// Overrides [`Config::preserve_recent_turns`], messages (S-2).
    #[serde(alias = "preserve_recent_turns")]
    pub preserve_recent_turns: Option<usize>,
    /// Overrides [`Config::preserve_recent_bytes`], UTF-8 bytes (S-2).
    #[serde(alias = "preserve_recent_bytes")]
    pub preserve_recent_bytes: Option<usize>,
    /// Overrides [`Config::evict_tool_result_min_bytes`], UTF-8 bytes (E-3).
    #[serde(alias = "evict_tool_result_min_bytes")]
    pub evict_tool_result_min_bytes: Option<usize>,
    /// Overrides [`Config::clip_head_bytes`], UTF-8 bytes (E-5).
    #[serde(alias = "clip_head_bytes")]
    pub clip_head_bytes: Option<usize>,
    /// Overrides [`Config::clip_tail_bytes`], UTF-8 bytes (E-5).
    #[serde(alias = "clip_tail_bytes")]
    pub clip_tail_bytes: Option<usize>,
    /// Overrides [`Config::max_indexed_artifacts`], handles (Y-2).
    #[serde(alias = "max_indexed_artifacts")]
    pub max_indexed_artifacts: Option<usize>,
    /// Overrides [`Config::max_pinned_bytes`], UTF-8 bytes (Y-10).
    #[serde(alias = "max_pinned_bytes")]
    pub max_pinned_bytes: Option<u64>,
    /// Overrides [`Config::max_summaries_before_rollup`], summaries (Y-3).
    #[serde(alias = "max_summaries_before_rollup")]
    pub max_summaries_before_rollup: Option<usize>,
    /// Overrides [`Config::max_rolled_up_summaries`], level-2 summaries (Y-3).
    #[serde(alias = "max_rolled_up_summaries")]
    pub max_rolled_up_summaries: Option<usize>,
    /// Overrides [`Config::output_reserve_tokens`], tokens (C-8); absent keeps the preset (Kerkov 0, else derived).
    #[serde(alias = "output_reserve_tokens")]
    pub output_reserve_tokens: Option<u64>,
    /// Overrides [`Config::max_request_bytes`], UTF-8 bytes (C-2, B-1); absent keeps the preset (no cap).
    #[serde(alias = "max_request_bytes")]
    pub max_request_bytes: Option<u64>,
    /// Overrides [`Config::bytes_per_token`], UTF-8 bytes per token (C-7); must be > 0.
    #[serde(alias = "bytes_per_token")]
    pub bytes_per_token: Option<u64>,
    /// Overrides [`Config::image_tokens`], tokens per image (C-7).
    #[serde(alias = "image_tokens")]
    pub image_tokens: Option<u64>,
    /// Overrides [`Config::summary_max_output_tokens`], tokens (Y-8).
    #[serde(alias = "summary_max_output_tokens")]
    pub summary_max_output_tokens: Option<u64>,
    /// Overrides [`Config::summarizer_context_window`], tokens (Y-1, Y-8).
    #[serde(alias = "summarizer_context_window")]
    pub summarizer_context_window: Option<u64>,
    /// Overrides [`Config::fit_recent_window`] (S-8).
    #[serde(alias = "fit_recent_window")]
    pub fit_recent_window: Option<bool>,
    /// Overrides [`Config::protect_run_request`] (S-6, S-9).
    #[serde(alias = "protect_run_request")]
    pub protect_run_request: Option<bool>,
    /// Overrides [`Config::in_run_stage2`] (S-6 stage 2).
    #[serde(alias = "in_run_stage2")]
    pub in_run_stage2: Option<bool>,
    /// Overrides [`Config::folded_call_ledger`] (Y-5).
    #[serde(alias = "folded_call_ledger")]
    pub folded_call_ledger: Option<bool>,
    /// Overrides [`Config::rehydrate_bytes`], UTF-8 bytes (N-6); 0 disables.
    #[serde(alias = "rehydrate_bytes")]
    pub rehydrate_bytes: Option<usize>,
    /// Overrides [`Config::summary_prompt`] (Y-9); must not be blank.
    #[serde(alias = "summary_prompt")]
    pub summary_prompt: Option<String>,
    /// Overrides [`Config::rollup_prompt`] (Y-3, Y-9); must not be blank.
    #[serde(alias = "rollup_prompt")]
    pub rollup_prompt: Option<String>,
    /// Overrides [`Config::min_boundaries_between`], boundaries (C-4, C-5).
    #[serde(alias = "min_boundaries_between")]
    pub min_boundaries_between: Option<u64>,
    /// Overrides [`Config::summary_input_share`], a fraction in (0, 1] (Y-8).
    #[serde(alias = "summary_input_share")]
    pub summary_input_share: Option<f64>,
    /// Overrides [`Config::project_memory`] (M-1).
    #[serde(alias = "project_memory")]
    pub project_memory: Option<bool>,
    /// Overrides [`Config::max_transcript_bytes`], UTF-8 bytes (issue 15).
    #[serde(alias = "max_transcript_bytes")]
    pub max_transcript_bytes: Option<u64>,
    /// Sets [`Config::preserve_recent_user_tokens`], tokens (K-2).
    #[serde(alias = "preserve_recent_user_tokens")]
    pub preserve_recent_user_tokens: Option<u64>,
    /// Accepted and ignored here (the wasm layer reads it): the provider format.
    pub format: Option<String>,
}

/// The first option of `opts` that does not deserialize on its own (issue 14: an
/// `invalid_config` names the option, e.g. `options.contextWindow: invalid type`).
fn bad_field(opts: &serde_json::Value) -> Option<String> {
    let map = opts.as_object()?;
    map.iter().find_map(|(k, v)| {
        let one = serde_json::Value::Object(std::iter::once((k.clone(), v.clone())).collect());
        serde_json::from_value::<ConfigInput>(one).is_err().then(|| k.clone())
    })
}

impl ConfigInput {
    /// Options from their JSON: the K options are taken out and kept raw
    /// ([`ConfigInput::editing`]), the rest deserialized. Errors: `invalid_config`
    /// naming an unknown or mistyped field.
    pub fn from_json(mut opts: serde_json::Value) -> Result<ConfigInput> {
        let editing = crate::editing::take_editing(&mut opts);
        let mut input: ConfigInput = match serde_json::from_value(opts.clone()) {
            Ok(i) => i,
            Err(e) => return Err(Error::new(ErrorCode::InvalidConfig, format!("options{}: {e}", bad_field(&opts).map(|k| format!(".{k}")).unwrap_or_default()))),
        };
        input.editing = editing;
        Ok(input)
    }

    /// Applies the given fields over the preset of `profile` (default `default`) and
    /// validates the result. Errors: `invalid_config` (threshold or summary share outside
    /// (0, 1], zero window or bytes per token, blank prompt).
    pub fn resolve(self) -> Result<Config> {
        let mut c = Config::preset(self.profile.unwrap_or_default());
        macro_rules! set {
            ($($f:ident),*) => { $( if let Some(v) = self.$f { c.$f = v; } )* };
        }
        let k = &self.editing;
        if let Some(t) = k.trigger.as_ref() {
            let (mode, clauses) = crate::editing::parse_trigger(t)?;
            if let Some(m) = mode {
                c.trigger = m;
            }
            c.trigger_on = clauses;
        }
        c.clear_tool_uses = k.clear_tool_uses.as_ref().map(crate::clear::ClearToolUses::from_json).transpose()?;
        c.clear_thinking = k.clear_thinking.as_ref().map(crate::clear::ClearThinking::from_json).transpose()?;
        if self.preserve_recent_user_tokens.is_some() {
            c.preserve_recent_user_tokens = self.preserve_recent_user_tokens;
        }
        c.prompt_cache = k.prompt_cache.as_ref().map(|v| crate::cache::PromptCacheInput::from_json(v).and_then(crate::cache::PromptCacheInput::resolve)).transpose()?;
        set!(context_window, threshold_pct, preserve_recent_turns, preserve_recent_bytes,
             evict_tool_result_min_bytes, clip_head_bytes, clip_tail_bytes, max_indexed_artifacts, max_pinned_bytes,
             max_summaries_before_rollup, max_rolled_up_summaries,
             bytes_per_token, image_tokens, summary_max_output_tokens, fit_recent_window, protect_run_request, in_run_stage2, folded_call_ledger, rehydrate_bytes, min_boundaries_between, summary_input_share, project_memory, max_transcript_bytes);
        if self.output_reserve_tokens.is_some() {
            c.output_reserve_tokens = self.output_reserve_tokens;
        }
        if self.max_request_bytes.is_some() {
            c.max_request_bytes = self.max_request_bytes;
        }
        if self.summary_prompt.is_some() {
            c.summary_prompt = self.summary_prompt;
        }
        if self.rollup_prompt.is_some() {
            c.rollup_prompt = self.rollup_prompt;
        }
        if self.summarizer_context_window.is_some() {
            c.summarizer_context_window = self.summarizer_context_window;
        }
        c.validate()?;
        Ok(c)
    }
}
