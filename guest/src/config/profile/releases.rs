//! The profiles themselves: one constant per behaviour (see [`super`] for what each part means).

use std::borrow::Cow;
use std::num::NonZeroU32;

use super::parts::{
    BotRules, DerivedMentions, GroupRules, Profile, RecordCalls, RecoveryTexts, ToolDefaults, ToolRules, ToolTexts,
};
use crate::js::js_trim;

/// NOTES §2.7: `TOOL_NAME_ALIASES` of tool-policy-shared (openclaw 2026.9).
const TOOL_NAME_ALIASES: &[(&str, &str)] = &[("bash", "exec"), ("apply-patch", "apply_patch"), ("cron", "automations")];

/// The tool name OpenClaw 2026.9's guard sees for a call: `normalizeToolPolicyName(name || "tool")`
/// of tool-policy-shared (NOTES §2.7): `"tool"` for an empty name, else JS-trimmed, lowercased,
/// and the aliases `bash` → `exec`, `apply-patch` → `apply_patch`, `cron` → `automations`
/// applied. The one copy of this rule: the `openclaw-2026.9` profile's calls go through it, and
/// so does the transcript importer (`loopguard-transcripts`), which must hash the same names.
pub fn normalize_tool_name(raw: &str) -> Cow<'_, str> {
    apply_tool_name_aliases(raw, TOOL_NAME_ALIASES)
}

/// [`normalize_tool_name`] with a profile's alias table.
pub(crate) fn apply_tool_name_aliases<'t>(raw: &'t str, aliases: &[(&str, &'static str)]) -> Cow<'t, str> {
    if raw.is_empty() {
        return Cow::Borrowed("tool");
    }
    let trimmed = js_trim(raw);
    let changes = trimmed.chars().any(|c| c.to_lowercase().ne(std::iter::once(c)));
    let folded = if changes { Cow::Owned(trimmed.to_lowercase()) } else { Cow::Borrowed(trimmed) };
    match aliases.iter().find(|(from, _)| *from == folded) {
        Some((_, to)) => Cow::Borrowed(to),
        None => folded,
    }
}

/// The behaviour of docs/spec/tool-loop.md and docs/spec/bot-loop.md: every knob configurable, the texts
/// of the documentation. The default.
pub const DOCUMENTED: Profile = Profile {
    name: "documented",
    texts: ToolTexts {
        unknown_critical: "CRITICAL: attempted unavailable tool {name} {n} times. Stop retrying that missing tool and answer without it.",
        global_critical: "CRITICAL: {tool} has repeated identical no-progress outcomes {n} times. Session execution blocked by global circuit breaker to prevent runaway loops.",
        poll_critical: "CRITICAL: Called {tool} with identical arguments and no progress {n} times. This appears to be a stuck polling loop. Session execution blocked to prevent resource waste.",
        poll_warning: "WARNING: You have called {tool} {n} times with identical arguments and no progress. Stop polling and either (1) increase wait time between checks, or (2) report the task as failed if the process is stuck.",
        ping_pong_critical: "CRITICAL: You are alternating between repeated tool-call patterns ({n} consecutive calls) with no progress. This appears to be a stuck ping-pong loop. Session execution blocked to prevent resource waste.",
        ping_pong_warning: "WARNING: You are alternating between repeated tool-call patterns ({n} consecutive calls). This looks like a ping-pong loop; stop retrying and report the task as failed.",
        generic_critical: "CRITICAL: Called {tool} with identical arguments and identical outcomes {n} times. Session execution blocked to prevent runaway loops.",
        generic_warning: "WARNING: You have called {tool} {n} times with identical arguments. If this is not making progress, stop retrying and report the task as failed.",
        argument_churn_warning: "",
        compaction_abort: "CRITICAL: tool {tool} repeated {n} times with identical arguments and identical results within {window} attempts after auto-compaction. The compaction did not break the loop. Aborting to prevent runaway resource use.",
        recovery: None,
    },
    defaults: ToolDefaults {
        history_size: NonZeroU32::new(30).unwrap(),
        warning: 10,
        unknown_tool: 10,
        critical: 20,
        global: 30,
        window_size: NonZeroU32::new(3).unwrap(),
    },
    tool: ToolRules {
        record_calls: RecordCalls::UnlessDisabled,
        record_blocked_calls: false,
        argument_churn: false,
        exec_failure_identity: false,
        write_unchanged_no_progress: false,
        untrusted_marker_ids: false,
        keep_lone_surrogates: false,
        update_plan_shape: true,
        send_tools: &["sessions_send"],
        tool_name_aliases: None,
    },
    bot: BotRules { replay_before_cooldown: false },
    group: GroupRules {
        derived_mentions: DerivedMentions::IdAndName,
        mentions_need_at: false,
        silent_reply_token: None,
        address_by_display_name: false,
        duplicate_root_launches_nobody: false,
        legacy_is_one_round_thread: false,
        normalized_participant_ids: false,
    },
};

/// What the `openclaw@2026.9.6` package does (tests/oracle/NOTES.md §2–§5, checked against the
/// package by `tests/oracle/differential.mjs`).
pub const OPENCLAW_2026_9: Profile = Profile {
    name: "openclaw-2026.9",
    texts: ToolTexts {
        // NOTES §2.3: two texts changed, one is new, the block gets the recovery paragraph.
        global_critical: "CRITICAL: {tool} repeated identical no-progress outcomes {n} times. Session execution blocked by global circuit breaker to prevent runaway loops.",
        generic_critical: "CRITICAL: Called {tool} with identical outcomes {n} times. Session execution blocked to prevent runaway loops.",
        argument_churn_warning: "WARNING: {tool} has cycled through {variants} repeated argument patterns with the same stable outcome {n} times. Continued churn is treated as stalled run activity, but this tool call remains allowed.",
        recovery: Some(RecoveryTexts {
            first: "{reason}\n\nDo not repeat this exact tool action. Reassess the task. You may answer the user, ask for clarification, or continue with a different tool or different arguments.",
            failed: "{reason}\n\nCritical tool-loop recovery failed because another critical loop was detected. This run is stopping now.",
        }),
        ..DOCUMENTED.texts
    },
    // NOTES §2.1, §3: constants equal to the documented defaults.
    defaults: DOCUMENTED.defaults,
    tool: ToolRules {
        record_calls: RecordCalls::WhenEnabled,
        record_blocked_calls: true,
        argument_churn: true,
        exec_failure_identity: true,
        write_unchanged_no_progress: true,
        untrusted_marker_ids: true,
        keep_lone_surrogates: true,
        update_plan_shape: false,
        // NOTES §2.6 item 7: `isMessagingToolSendAction` also names these two.
        send_tools: &["sessions_send", "conversations_send", "conversations_turn"],
        tool_name_aliases: Some(TOOL_NAME_ALIASES),
    },
    bot: BotRules { replay_before_cooldown: true },
    group: GroupRules {
        derived_mentions: DerivedMentions::None,
        mentions_need_at: true,
        silent_reply_token: Some("NO_REPLY"),
        address_by_display_name: true,
        duplicate_root_launches_nobody: true,
        legacy_is_one_round_thread: true,
        normalized_participant_ids: true,
    },
};
