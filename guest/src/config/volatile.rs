//! Volatile fields, nothing-found answers and infrastructure errors: the rules that decide when
//! two outcomes are "the same" for the detectors beyond OpenClaw (`crate::tool_loop::beyond`).
//! They live with the config because the operator extends them (`loopguard.rules`) and they are
//! compiled once, when the config is read.
//!
//! Why: a poll whose output differs only in a timestamp, or a tool that fails 29 times with an
//! error naming a different line each time, never repeats byte for byte, so OpenClaw's hashes see
//! progress where an operator sees none. Results are compared after [`Normalizer::strip_volatile`]
//! (timestamps, durations, PIDs, temp paths, UUIDs and long hex ids); errors after
//! [`Normalizer::error_class`], which also sets aside numbers, paths, quoted text and the call's
//! own arguments. Rate limits, 5xx answers and timeouts are the infrastructure's fault, not the
//! agent's, and are never counted ([`Normalizer::is_infrastructure`]).
//!
//! The rules are regular expressions compiled once with `regex-lite`, which the guest already
//! uses. Measured against `regex`: `regex` strips a 1.5 KB result in 13 µs natively
//! where `regex-lite` takes 0.7 ms, but it grows the policy from 0.95 to 1.78 MB and its cold
//! start (no compile cache) from about 2.3 to 3.2 s for every user, preset or not; the
//! normalised text is bounded instead ([`MAX_TEXT`]), so an outcome costs at most a few ms, and
//! only with the preset on. An operator extends each list with `loopguard.rules`
//! ([`crate::config::detection`]).

use std::sync::{Arc, OnceLock};

use regex_lite::Regex;

/// Bytes of an outcome text that are normalised: the head and the tail, so that the work per
/// outcome is bounded whatever the tool returned.
pub const MAX_TEXT: usize = 4 * 1024;

/// The operator's extra rules, each as (config path, pattern), before compilation.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    /// Replaced by `<v>` in results and errors.
    pub volatile: Vec<(String, String)>,
    /// A result that matches one of these found nothing.
    pub nothing_found: Vec<(String, String)>,
    /// An error that matches one of these is the infrastructure's, not counted.
    pub infrastructure: Vec<(String, String)>,
}

/// The built-in rules plus the operator's.
#[derive(Debug, Clone, Default)]
pub struct Normalizer {
    extra: Option<Arc<Compiled>>,
}

#[derive(Debug)]
struct Compiled {
    volatile: Vec<Regex>,
    nothing_found: Vec<Regex>,
    infrastructure: Vec<Regex>,
}

/// Built-in volatile fields, in the order they are replaced (the longer shapes first).
const VOLATILE: &[&str] = &[
    // ISO 8601 / RFC 3339 timestamps with a time of day, and times of day alone.
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?",
    r"\b\d{1,2}:\d{2}:\d{2}(\.\d+)?\b",
    // UUIDs, then hex ids of 8+ digits (commit hashes, container ids, request ids).
    r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
    r"\b(0x)?[0-9a-f]{8,}\b",
    // Durations.
    r"\b\d+(\.\d+)?\s?(ms|µs|us|ns|s|sec|secs|seconds?)\b",
    // PIDs and epoch times.
    r"(?i)\b(pid|process)[\s=:#]*\d+",
    r"\b1[5-9]\d{8}(\d{3})?\b",
    // Temporary paths.
    r"(/tmp|/var/folders|/private/var)/[^\s'`]*",
];

/// Nothing found: the answer starts with one of these (after leading space and punctuation).
const NOTHING_FOUND: &[&str] = &[
    r"(?i)^\W*(no results?( found)?|no matches( found)?|could not find|couldn't find|not found|nothing found|0 results|no such (file|page|entry)|none found|no (files|entries|items|records) found)\b",
];

/// Infrastructure errors: rate limits, server errors, timeouts, dropped connections.
const INFRASTRUCTURE: &[&str] = &[
    r"(?i)rate.?limit|too many requests|\b(http/?[\d.]*|status( code)?|error code|code)[ :=]*(429|5\d\d)\b|internal server error|bad gateway|service unavailable|gateway time-?out|overloaded|(request|connection|connect|read|socket|upstream|api) time(d ?|-)?out|ETIMEDOUT|ECONNRESET|ECONNREFUSED|connection (reset|refused|aborted)",
];

/// A line that says something failed, in the words shells, compilers, interpreters and tools
/// use: `bash: line 3: javac: command not found`, `ValueError: ...`, `- E999 IndentationError:
/// unexpected indent`, `fatal: not a git repository`, `error: ...`. A tool's result whose first
/// line is one of these reads as an error ([`reads_as_error`]), and two errors are compared by
/// these lines alone when they have any ([`Normalizer::error_class`]): the same failure shown
/// around a different snippet of code, or a different stack, is the same failure.
const ERROR_LINE: &str = r"(?i)(: command not found|: no such file or directory|: permission denied|\bsyntax ?error|^\S+: line \d+: |\b[a-z]*(error|exception)\b:|^\W*(error|fatal|[ef]\d{3,4})\b)";

/// The first line of a result that failed although the tool returned normally: an error line
/// that starts the line (a grep hit that shows `except ValueError:` in a file does not).
const FAILED_FIRST_LINE: &str = r"(?i)^(\S+: line \d+: |\S*(error|exception)\b:|\W*(error|fatal)\b)|: (command not found|no such file or directory|permission denied)\s*$|\bsyntax ?error";

/// What errors set aside besides the volatile fields, with their replacements.
const ERROR_FIELDS: &[(&str, &str)] = &[
    (r"`[^`\n]*`|'[^'\n]*'|\u{22}[^\u{22}\n]*\u{22}", "<q>"),
    (r"(~|\.{1,2})?(/[\w.@+-]+)+/?", "<path>"),
    (r"\b[A-Za-z]:\\[^\s]*", "<path>"),
    (r"\d+(\.\d+)?", "<n>"),
];

struct BuiltIn {
    volatile: Vec<Regex>,
    nothing_found: Vec<Regex>,
    infrastructure: Vec<Regex>,
    error_fields: Vec<(Regex, &'static str)>,
    error_line: Regex,
    failed_first_line: Regex,
    spaces: Regex,
}

fn built_in() -> &'static BuiltIn {
    static RULES: OnceLock<BuiltIn> = OnceLock::new();
    // The patterns are constants checked by the tests below; a failure here is a bug in them.
    let all = |ps: &[&str]| ps.iter().map(|p| Regex::new(p).expect("built-in rule compiles")).collect();
    RULES.get_or_init(|| BuiltIn {
        volatile: all(VOLATILE),
        nothing_found: all(NOTHING_FOUND),
        infrastructure: all(INFRASTRUCTURE),
        error_fields: ERROR_FIELDS.iter().map(|(p, r)| (Regex::new(p).expect("built-in rule compiles"), *r)).collect(),
        error_line: Regex::new(ERROR_LINE).expect("built-in rule compiles"),
        failed_first_line: Regex::new(FAILED_FIRST_LINE).expect("built-in rule compiles"),
        spaces: Regex::new(r"\s+").expect("built-in rule compiles"),
    })
}

impl Normalizer {
    /// The built-in rules alone.
    pub const BUILT_IN: Normalizer = Normalizer { extra: None };

    /// The built-in rules plus `rules`; an error names the config path of a pattern that does
    /// not compile and says why.
    pub fn new(rules: &RuleSet) -> Result<Self, (String, String)> {
        let compile = |list: &[(String, String)]| -> Result<Vec<Regex>, (String, String)> {
            list.iter()
                .map(|(path, p)| {
                    Regex::new(p).map_err(|e| (path.clone(), format!("is not a valid regular expression: {e}")))
                })
                .collect()
        };
        let c = Compiled {
            volatile: compile(&rules.volatile)?,
            nothing_found: compile(&rules.nothing_found)?,
            infrastructure: compile(&rules.infrastructure)?,
        };
        Ok(Normalizer { extra: Some(Arc::new(c)) })
    }

    /// `text` with its volatile fields replaced by `<v>` and runs of space collapsed.
    pub fn strip_volatile(&self, text: &str) -> String {
        let b = built_in();
        let mut s = bounded(text);
        for re in b.volatile.iter().chain(self.extra.iter().flat_map(|e| e.volatile.iter())) {
            s = re.replace_all(&s, "<v>").into_owned();
        }
        b.spaces.replace_all(s.trim(), " ").into_owned()
    }

    /// The class of an error: its error lines (`ERROR_LINE`; the whole text when it has none),
    /// with volatile fields, the call's own argument strings (`args`, each of 3 bytes or more),
    /// quoted text, paths and numbers set aside, lower-cased.
    pub fn error_class(&self, text: &str, args: &[&str]) -> String {
        let text = bounded(text);
        let b = built_in();
        let lines: Vec<&str> = text.lines().filter(|l| b.error_line.is_match(l)).take(8).collect();
        let mut s = if lines.is_empty() { text.clone() } else { lines.join("\n") };
        for a in args.iter().filter(|a| a.len() >= 3 && a.len() <= 512) {
            s = s.replace(a, "<arg>");
        }
        let mut s = self.strip_volatile(&s);
        for (re, with) in &built_in().error_fields {
            s = re.replace_all(&s, *with).into_owned();
        }
        s.to_lowercase()
    }

    /// True when a result says that nothing was found.
    pub fn is_nothing_found(&self, text: &str) -> bool {
        let head = &text[..floor(text, 512)];
        built_in()
            .nothing_found
            .iter()
            .chain(self.extra.iter().flat_map(|e| e.nothing_found.iter()))
            .any(|re| re.is_match(head))
    }

    /// True when an error is the infrastructure's (rate limit, 5xx, timeout, connection).
    pub fn is_infrastructure(&self, text: &str) -> bool {
        let head = &text[..floor(text, 1024)];
        built_in()
            .infrastructure
            .iter()
            .chain(self.extra.iter().flat_map(|e| e.infrastructure.iter()))
            .any(|re| re.is_match(head))
    }
}

/// True when a tool's result reads as a failure although the tool returned normally (agents
/// whose shell tool records no exit status): it starts with `Error`/`error:` or a Python
/// traceback, or its first line says it failed (`FAILED_FIRST_LINE`).
pub fn reads_as_error(text: &str) -> bool {
    let t = text.trim_start();
    let head = &t[..floor(t, 40)];
    let lower = head.to_ascii_lowercase();
    let first = t.lines().next().unwrap_or_default();
    lower.starts_with("error")
        || lower.starts_with("traceback (most recent call last)")
        || built_in().failed_first_line.is_match(&first[..floor(first, 240)])
}

/// The first and last [`MAX_TEXT`]/2 bytes of `text`.
fn bounded(text: &str) -> String {
    if text.len() <= MAX_TEXT {
        return text.to_string();
    }
    let head = floor(text, MAX_TEXT / 2);
    let mut tail = text.len() - MAX_TEXT / 2;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{} … {}", &text[..head], &text[tail..])
}

/// The largest char boundary ≤ `n`.
fn floor(text: &str, n: usize) -> usize {
    let mut i = n.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volatile_fields_are_stripped_before_results_are_compared() {
        let n = Normalizer::BUILT_IN;
        let a = n.strip_volatile("job 4f3a9c2e1b done at 2026-12-06T07:01:02Z in 1.25s (pid 4411)");
        let b = n.strip_volatile("job 9e8d7c6b5a done at 2026-12-06T07:09:44Z in 0.9s (pid 17)");
        assert_eq!(a, b);
        assert_eq!(n.strip_volatile("wrote /tmp/tmp.XyZ12/out.txt"), n.strip_volatile("wrote /tmp/tmp.Ab9/out.txt"));
        // Plain numbers and dates are data, not volatile: different prices are different results.
        assert_ne!(n.strip_volatile("total 120 on 2024-05-01"), n.strip_volatile("total 140 on 2024-05-01"));
    }

    #[test]
    fn errors_are_compared_without_numbers_paths_quotes_or_their_arguments() {
        let n = Normalizer::BUILT_IN;
        let a = n.error_class("Error: flight HAT041 not available on date 2024-05-16", &["HAT041"]);
        let b = n.error_class("Error: flight HAT172 not available on date 2024-05-17", &["HAT172"]);
        assert_eq!(a, b);
        let a = n.error_class("No replacement was performed, old_str `foo(x)` did not appear in /src/a.c line 12", &[]);
        let b = n.error_class("No replacement was performed, old_str `bar` did not appear in /src/b/c.c line 40", &[]);
        assert_eq!(a, b);
        assert_ne!(n.error_class("permission denied", &[]), n.error_class("file not found", &[]));
    }

    #[test]
    fn nothing_found_and_infrastructure_rules() {
        let n = Normalizer::BUILT_IN;
        for t in ["Could not find [\"Scat\"]. Similar: []", "No Results", "  no matches found", "Not found"] {
            assert!(n.is_nothing_found(t), "{t}");
        }
        assert!(!n.is_nothing_found("Found 3 results for x"));
        for t in ["HTTP 429 Too Many Requests", "503 Service Unavailable", "request timed out", "rate limit exceeded"] {
            assert!(n.is_infrastructure(t), "{t}");
        }
        assert!(!n.is_infrastructure("SyntaxError: invalid syntax"));
    }

    #[test]
    fn operator_rules_extend_the_built_in_ones() {
        let rules = RuleSet {
            volatile: vec![("v[0]".into(), r"req-[a-z]+".into())],
            nothing_found: vec![("n[0]".into(), r"^\(0 rows\)".into())],
            infrastructure: vec![("i[0]".into(), r"quota".into())],
        };
        let n = Normalizer::new(&rules).unwrap();
        assert_eq!(n.strip_volatile("ok req-abc"), n.strip_volatile("ok req-xyz"));
        assert!(n.is_nothing_found("(0 rows)"));
        assert!(n.is_infrastructure("quota exceeded"));
        let bad = RuleSet { volatile: vec![("loopguard.rules.volatile[0]".into(), "(".into())], ..RuleSet::default() };
        let (path, why) = Normalizer::new(&bad).unwrap_err();
        assert_eq!(path, "loopguard.rules.volatile[0]");
        assert!(why.contains("regular expression"), "{why}");
    }

    #[test]
    fn results_that_read_as_errors() {
        assert!(reads_as_error("Error: payment amount does not add up"));
        assert!(reads_as_error("Traceback (most recent call last):\n  File"));
        assert!(reads_as_error("/bin/bash: line 12: javac: command not found"));
        assert!(reads_as_error("Your proposed edit has introduced new syntax error(s). Please read"));
        assert!(reads_as_error("fatal: not a git repository"));
        assert!(!reads_as_error("3 errors were fixed"));
        assert!(!reads_as_error("Found 2 matches for \"ValueError\" in /src"));
        assert!(!reads_as_error("./x.py:10:    except ValueError:\n./y.py:3: pass"));
    }

    #[test]
    fn errors_with_error_lines_are_compared_by_those_lines() {
        let n = Normalizer::BUILT_IN;
        let edit = |code: &str| {
            format!("Your proposed edit has introduced new syntax error(s).\n- E999 IndentationError: unexpected indent\n{code}")
        };
        assert_eq!(n.error_class(&edit("    x = 1"), &[]), n.error_class(&edit("  return y"), &[]));
        assert_ne!(
            n.error_class(&edit("x"), &[]),
            n.error_class("Your proposed edit has introduced new syntax error(s).\n- F821 undefined name 'y'", &[])
        );
        let tb = |frame: &str| format!("Traceback (most recent call last):\n  File \"{frame}\", line 3\nKeyError: 'a'");
        assert_eq!(n.error_class(&tb("/a.py"), &[]), n.error_class(&tb("/b/c.py"), &[]));
    }
}
