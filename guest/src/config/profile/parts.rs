//! The parts of a profile: defaults, texts and rule switches (see [`super`] for what each
//! part means and [`super::releases`] for the profiles themselves).

use std::num::NonZeroU32;

/// The message texts of the tool-loop detectors and the post-compaction guard. `{tool}`, `{n}`,
/// `{name}`, `{window}`, `{variants}` and `{reason}` are replaced by the tool, the count, the
/// missing tool's name, the guard's window, the argument-churn variant count and a block's
/// detector message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolTexts {
    /// `unknown_tool_repeat` block.
    pub unknown_critical: &'static str,
    /// `global_circuit_breaker` block.
    pub global_critical: &'static str,
    /// `known_poll_no_progress` block.
    pub poll_critical: &'static str,
    /// `known_poll_no_progress` warning.
    pub poll_warning: &'static str,
    /// `ping_pong` block.
    pub ping_pong_critical: &'static str,
    /// `ping_pong` warning.
    pub ping_pong_warning: &'static str,
    /// `generic_repeat` block.
    pub generic_critical: &'static str,
    /// `generic_repeat` warning.
    pub generic_warning: &'static str,
    /// `argument_churn` warning (only used when [`ToolRules::argument_churn`] is on).
    pub argument_churn_warning: &'static str,
    /// The post-compaction abort.
    pub compaction_abort: &'static str,
    /// What the model receives for a block, when it is more than the detector's message.
    pub recovery: Option<RecoveryTexts>,
}

/// The texts of "tool-loop recovery" (openclaw 2026.9, NOTES §2.3): the first block of an attempt
/// asks the model to reassess; every later block of the same attempt says recovery failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryTexts {
    /// The first critical of an attempt (`{reason}` = the detector's message).
    pub first: &'static str,
    /// Any later critical of the same attempt.
    pub failed: &'static str,
}

/// The defaults of the tunable tool-loop knobs (docs/spec/tool-loop.md §5). The two sizes cannot be
/// zero; the thresholds are positive too (OpenClaw's `asPositiveInt` falls back to them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolDefaults {
    /// `historySize`.
    pub history_size: NonZeroU32,
    /// `warningThreshold`.
    pub warning: u32,
    /// `unknownToolThreshold`.
    pub unknown_tool: u32,
    /// `criticalThreshold`.
    pub critical: u32,
    /// `globalCircuitBreakerThreshold`.
    pub global: u32,
    /// `postCompactionGuard.windowSize`.
    pub window_size: NonZeroU32,
}

/// When a call that is not blocked is recorded in the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordCalls {
    /// Unless the resolved `enabled` is explicitly `false` (spec §2 step 3).
    UnlessDisabled,
    /// Only when the resolved `enabled` is `true` (openclaw 2026.9, NOTES §2.1).
    WhenEnabled,
}

/// The tool-loop rules that differ between profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolRules {
    /// Which calls are recorded.
    pub record_calls: RecordCalls,
    /// A blocked call leaves a veto record in the history (NOTES §2.4): the next identical call
    /// counts 21, 22, … instead of staying at 20, and most blocks stop being sticky.
    pub record_blocked_calls: bool,
    /// The `argument_churn` warning (NOTES §2.5).
    pub argument_churn: bool,
    /// Terminal exec failures carry a failure identity (volatile parts of the output masked) and
    /// continue one no-progress streak across commands (NOTES §2.6).
    pub exec_failure_identity: bool,
    /// A `write` result with `details.changed === false` is one "unchanged" outcome, a
    /// no-progress outcome (NOTES §2.6).
    pub write_unchanged_no_progress: bool,
    /// Outcome digests give every untrusted-content marker pair the id `0000000000000000`
    /// (NOTES §2.7).
    pub untrusted_marker_ids: bool,
    /// Lone surrogates are kept in fingerprints (`\udXXX`, as `JSON.stringify` writes them) and
    /// keys that differ only in them are different keys; otherwise they are removed (spec §1.1).
    pub keep_lone_surrogates: bool,
    /// `update_plan` params and details are reduced to their shape (spec §1.4).
    pub update_plan_shape: bool,
    /// Tools other than `message` whose results are message sends (volatile ids stripped),
    /// besides the operator's `loopguard.sendTools`.
    pub send_tools: &'static [&'static str],
    /// Tool names as the guard's caller normalizes them (`normalizeToolPolicyName`: an empty
    /// name is `tool`, else trimmed and lowercased, then these aliases); `None`: names as the
    /// host passes them (spec §1.2, the host maps its own aliases).
    pub tool_name_aliases: Option<&'static [(&'static str, &'static str)]>,
}

/// The bot pair guard's rules that differ between profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BotRules {
    /// A redelivered event id is let through before the cooldown test (openclaw 2026.9, NOTES
    /// §4.1); otherwise a redelivery during a cooldown is suppressed (spec §2.4 step 10).
    pub replay_before_cooldown: bool,
}

/// How a participant's mention patterns are found when it has none of its own and there is no
/// global list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DerivedMentions {
    /// `@<id>` and `@<name>` (docs/spec/bot-loop.md §5.2).
    IdAndName,
    /// None: openclaw 2026.9 derives patterns from `identity.name` only, which loopguard does not
    /// read (docs/SPEC-CHOICES.md).
    None,
}

/// The group-thread coordinator's rules that differ between profiles (NOTES §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupRules {
    /// Patterns for participants without their own and without a global list.
    pub derived_mentions: DerivedMentions,
    /// A mention must be an `@` address: the text (lowercased, zero-width characters removed)
    /// must contain `@`, and a pattern match must start at an `@` (`@…`, `<@…` or right after an
    /// `@`) that follows no letter, digit or `_`.
    pub mentions_need_at: bool,
    /// A reply that is only the silent token (`NO_REPLY`, edge punctuation allowed) is a pass.
    pub silent_reply_token: Option<&'static str>,
    /// A sibling's reply also addresses a participant by its display name as a whole word,
    /// case-insensitively, without `@`.
    pub address_by_display_name: bool,
    /// A message with the root of a thread that is still running launches nobody and leaves the
    /// thread alone (otherwise it starts the thread over).
    pub duplicate_root_launches_nobody: bool,
    /// Legacy (unqualified) entries run as one-round threads whose replies end them
    /// (`all_passed` or `max_rounds`); otherwise no thread is kept for them.
    pub legacy_is_one_round_thread: bool,
    /// Participants are reported with their normalized agent ids (`normalizeAgentId`), not as
    /// spelled in the entry.
    pub normalized_participant_ids: bool,
}

/// A compatibility profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The value of `loopguard.compat` that selects it.
    pub name: &'static str,
    /// The tool-loop message texts.
    pub texts: ToolTexts,
    /// The defaults of the tool-loop knobs.
    pub defaults: ToolDefaults,
    /// Tool-loop rules.
    pub tool: ToolRules,
    /// Bot pair guard rules.
    pub bot: BotRules,
    /// Group-thread coordinator rules.
    pub group: GroupRules,
}
