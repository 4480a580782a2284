//! Unknown-tool streak: the agent keeps calling a tool the gateway does not have.
//!
//! Models retry a hallucinated tool name with different arguments, so this streak ignores
//! arguments and counts consecutive outcomes that named the same missing tool.

use super::history::Record;

/// The newest run of records for `tool` whose outcomes named the same missing tool:
/// `(count, missing tool name)`.
pub fn streak<'a>(scoped: impl DoubleEndedIterator<Item = &'a Record>, tool: u64) -> (u32, Option<&'a str>) {
    let mut name: Option<&str> = None;
    let mut count = 0;
    for r in scoped.rev() {
        let Some(unknown) = r.unknown_tool.as_deref() else { break };
        if r.tool != tool {
            break;
        }
        match name {
            None => name = Some(unknown),
            Some(n) if n != unknown => break,
            Some(_) => {}
        }
        count += 1;
    }
    (count, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(tool: &str, unknown: Option<&str>) -> Record {
        Record {
            tool: crate::digest::name_id(tool),
            args: [0; 16],
            call_id: None,
            run: None,
            result: Some([1; 16]),
            unknown_tool: unknown.map(Into::into),
        }
    }

    #[test]
    fn counts_newest_run_of_the_same_missing_name() {
        let h = [rec("x", Some("x")), rec("b", Some("b")), rec("b", Some("b")), rec("b", Some("b"))];
        assert_eq!(streak(h.iter(), crate::digest::name_id("b")), (3, Some("b")));
    }

    #[test]
    fn stops_at_another_tool_or_a_known_outcome_or_another_name() {
        let h = [rec("b", Some("b")), rec("b", None), rec("b", Some("b"))];
        assert_eq!(streak(h.iter(), crate::digest::name_id("b")), (1, Some("b")));
        let h = [rec("b", Some("b")), rec("a", Some("a"))];
        assert_eq!(streak(h.iter(), crate::digest::name_id("b")), (0, None), "the newest record is another tool");
        let h = [rec("b", Some("c")), rec("b", Some("b"))];
        assert_eq!(streak(h.iter(), crate::digest::name_id("b")), (1, Some("b")));
    }
}
