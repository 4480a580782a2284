//! `loopguard replay --jobs N` writes byte for byte what `--jobs 1` writes: on every example
//! trace, on a large random trace (many sessions, bot and group events, several chunks), under a
//! session cap that makes one gateway evict, and on bad input (same decisions before the error,
//! same one-line error).

use std::path::{Path, PathBuf};

use loopguard_tests::{scenarios, Run, Scenario, TempDir};

/// The CLI's replay chunk size (`DEFAULT_CHUNK_BYTES` in `src/trace/stream.rs`).
const CHUNK_BYTES: usize = 256 << 10;

fn loopguard<I: IntoIterator<Item = S>, S: AsRef<std::ffi::OsStr>>(args: I, stdin: Option<&[u8]>) -> Run {
    Run::new(Path::new(env!("CARGO_BIN_EXE_loopguard")), args, stdin)
}

fn replay(config: &Path, trace: &Path, jobs: u32) -> Run {
    let jobs = jobs.to_string();
    loopguard(
        [
            "replay".as_ref(),
            "--jobs".as_ref(),
            jobs.as_ref(),
            "--config".as_ref(),
            config.as_os_str(),
            trace.as_os_str(),
        ],
        None,
    )
}

/// Runs `--jobs 1` and then each of `jobs`, and checks that status, stdout and stderr agree.
fn same_for_all(config: &Path, trace: &Path, jobs: &[u32]) -> Run {
    let one = replay(config, trace, 1);
    for &n in jobs {
        let many = replay(config, trace, n);
        let same = many.output.status.code() == one.output.status.code()
            && many.output.stdout == one.output.stdout
            && many.stderr() == one.stderr();
        let first_diff = one.stdout().lines().zip(many.stdout().lines()).position(|(a, b)| a != b);
        many.check(
            same,
            &format!(
                "--jobs {n} differs from --jobs 1 (first differing line: {first_diff:?}; --jobs 1 wrote {} bytes, status {}, stderr {:?})",
                one.output.stdout.len(),
                one.output.status,
                one.stderr()
            ),
        );
    }
    one
}

#[test]
fn every_example_trace_is_the_same_on_one_two_and_three_workers() {
    for s in scenarios() {
        eprintln!("scenario: {}", s.name);
        let one = same_for_all(&s.config, &s.trace, &[2, 3]).success();
        let golden = one.stdout() == Scenario::read(&s.expected);
        one.check(golden, &format!("{}: --jobs 1 must still give the golden decisions", s.name));
    }
}

/// A small deterministic PRNG (splitmix64), so that the trace is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const GROUP_CONFIG: &str = r#"{
  tools: { loopDetection: { enabled: true } },
  agents: { list: [
    { id: "planner", groupChat: { mentionPatterns: ["@planner"] } },
    { id: "coder", groupChat: { mentionPatterns: ["@coder"] } },
    { id: "reviewer", groupChat: { mentionPatterns: ["@reviewer"] } },
    { id: "ops", tools: { loopDetection: { warningThreshold: 4, criticalThreshold: 8 } } },
  ] },
  channels: { discord: { botLoopProtection: { maxEventsPerWindow: 6, windowSeconds: 30, cooldownSeconds: 20 } } },
  broadcast: { "slack:C0123": { agents: ["planner", "coder", "reviewer"], maxRounds: 3, maxTurns: 5 } },
}"#;

/// Many sessions looping on repeated calls (written in several spellings of the same key), bot
/// storms with late and future timestamps, group threads, blank and CRLF lines, padding so that
/// the trace spans several chunks.
fn random_trace(seed: u64, lines: usize) -> String {
    let mut r = Rng(seed);
    let mut out = String::with_capacity(lines * 260);
    let mut ts: i64 = 1_767_225_600_000;
    let mut roots = 0u64;
    for i in 0..lines {
        let pick = r.below(100);
        let pad = "p".repeat(r.below(160) as usize);
        if pick < 70 {
            let s = r.below(400);
            // The policy reads these as one session: an escape, and a lone surrogate it drops.
            let session = match r.below(10) {
                0 => format!("agent:main:s\\u0031{s}"),
                1 => format!("agent:main:s1{s}\\ud800"),
                _ => format!("agent:main:s1{s}"),
            };
            // Mostly the session's own loop (same tool, same arguments), sometimes something else.
            let looping = r.chance(80);
            let tool = ["read", "exec", "process", "write"][if looping { s % 4 } else { r.below(4) } as usize];
            let arg = if looping { s % 3 } else { r.below(50) };
            let pad = if looping { "p".repeat(40 + (s % 80) as usize) } else { pad };
            let agent = if r.chance(20) { ",\"agent\":\"ops\"" } else { "" };
            let run = if r.chance(50) { format!(",\"run\":\"r{}\"", r.below(3)) } else { String::new() };
            let head = format!("\"session\":\"{session}\",\"tool\":\"{tool}\",\"args\":{{\"path\":\"/{arg}\",\"pad\":\"{pad}\"}}{agent}{run}");
            match r.below(10) {
                0..=4 => out.push_str(&format!("{{\"kind\":\"tool_call\",{head},\"call_id\":\"c{i}\"}}")),
                5..=7 => {
                    let ok = if looping { 1 } else { r.below(2) };
                    out.push_str(&format!("{{\"kind\":\"tool_result\",{head},\"result\":{{\"ok\":{ok}}}}}"))
                }
                8 => out.push_str(&format!("{{\"kind\":\"tool_result\",{head},\"error\":\"boom {}\"}}", r.below(2))),
                _ => out.push_str(&format!("{{\"kind\":\"compaction\",\"session\":\"{session}\"{run}}}")),
            }
        } else if pick < 88 {
            ts += r.below(100) as i64;
            let at = match r.below(10) {
                0 => ts - r.below(40_000) as i64,
                1 => ts + r.below(9_000) as i64,
                _ => ts,
            };
            let bots = ["b1", "b2", "b3"];
            let (a, b) = (bots[r.below(3) as usize], bots[r.below(3) as usize]);
            let channel = ["discord", "slack", "telegram"][r.below(3) as usize];
            out.push_str(&format!(
                "{{\"kind\":\"bot_message\",\"channel\":\"{channel}\",\"account\":\"a{}\",\"conversation\":\"c{}\",\"sender\":\"{a}\",\"receiver\":\"{b}\",\"ts_ms\":{at},\"event_id\":\"e{}\"}}",
                r.below(2),
                r.below(6),
                r.below(lines as u64)
            ));
        } else if pick < 96 {
            if r.chance(40) || roots == 0 {
                roots += 1;
            }
            let root = format!("m{}", roots - r.below(roots.min(3)));
            let thread = "\"channel\":\"slack\",\"account\":\"default\",\"conversation\":\"C0123\"";
            match r.below(6) {
                0 | 1 => out.push_str(&format!(
                    "{{\"kind\":\"group_message\",{thread},\"peer\":\"C0123\",\"root\":\"{root}\",\"text\":\"@coder look {pad}\"}}"
                )),
                2 => out.push_str(&format!("{{\"kind\":\"group_cancel\",{thread},\"root\":\"{root}\"}}")),
                _ => out.push_str(&format!(
                    "{{\"kind\":\"group_replies\",{thread},\"root\":\"{root}\",\"replies\":[{{\"agent\":\"coder\",\"reply\":\"@reviewer done\"}},{{\"agent\":\"planner\",\"reply\":null}}]}}"
                )),
            }
        } else if pick < 98 {
            out.push_str("  ");
        } else {
            out.push_str(&format!(
                "{{\"kind\":\"tool_call\",\"session\":\"agent:main:crlf\",\"tool\":\"read\",\"args\":{{\"n\":{}}}}}\r",
                r.below(2)
            ));
        }
        out.push('\n');
    }
    out
}

fn write_random(dir: &TempDir, seed: u64, lines: usize) -> (PathBuf, PathBuf, String) {
    let trace = random_trace(seed, lines);
    let config = dir.write("config.json5", GROUP_CONFIG);
    (config, dir.write("trace.jsonl", &trace), trace)
}

#[test]
fn a_large_random_trace_is_the_same_on_one_two_and_three_workers() {
    let dir = TempDir::new("parallel-random");
    let (config, trace, text) = write_random(&dir, 7, 60_000);
    assert!(text.len() > 2 * CHUNK_BYTES, "{} bytes: more than two chunks", text.len());
    let one = same_for_all(&config, &trace, &[2, 3]).success();
    let out = one.stdout();
    let blank = text.lines().filter(|l| l.trim().is_empty()).count();
    let count = |what: &str| out.matches(what).count();
    let (blocks, suppressed, rounds) = (
        count("\"action\":\"block\""),
        count("\"action\":\"suppress\""),
        count("\"kind\":\"group_replies\",\"action\":\"round\""),
    );
    let ok = out.lines().count() == 60_000 - blank && blocks > 0 && suppressed > 0 && rounds > 0;
    one.check(
        ok,
        &format!(
            "one decision per event, with blocks ({blocks}), suppressions ({suppressed}) and group rounds ({rounds})"
        ),
    );
}

#[test]
fn past_the_session_cap_the_replay_goes_on_with_one_gateway() {
    // 400 sessions under a cap of 50: one gateway evicts, so the workers must not split them.
    let dir = TempDir::new("parallel-cap");
    let (_, trace, _) = write_random(&dir, 11, 30_000);
    let capped = GROUP_CONFIG.replacen('{', "{ loopguard: { maxSessions: 50 },", 1);
    let config = dir.write("capped.json5", capped);
    let one = same_for_all(&config, &trace, &[2]).success();
    let uncapped = replay(&dir.write("uncapped.json5", GROUP_CONFIG), &trace, 1).success();
    let differs = one.stdout() != uncapped.stdout();
    one.check(differs, "the cap must change decisions, or this test proves nothing");
}

#[test]
fn stdin_and_ambiguous_lines_give_the_same_decisions() {
    let dir = TempDir::new("parallel-stdin");
    let (config, trace, mut text) = write_random(&dir, 3, 5_000);
    let via_stdin = loopguard(
        ["replay".as_ref(), "--jobs".as_ref(), "2".as_ref(), "--config".as_ref(), config.as_os_str(), "-".as_ref()],
        Some(text.as_bytes()),
    )
    .success();
    let one = replay(&config, &trace, 1).success();
    let same = via_stdin.stdout() == one.stdout();
    via_stdin.check(same, "a trace on stdin (one worker) decides the same");
    // A session given twice with different values: the policy's rule decides which; one gateway from there on.
    text.push_str("{\"kind\":\"tool_call\",\"session\":\"agent:main:s11\",\"session\":\"agent:main:s12\",\"tool\":\"read\",\"args\":{}}\n");
    text.push_str(&random_trace(4, 2_000));
    let trace = dir.write("ambiguous.jsonl", &text);
    same_for_all(&config, &trace, &[2]).success();
}

#[test]
fn bad_input_fails_the_same_way_on_every_worker_count() {
    let dir = TempDir::new("parallel-bad");
    let good = random_trace(5, 40_000);
    let lines: Vec<&str> = good.lines().collect();
    let config = dir.write("config.json5", GROUP_CONFIG);
    // Past the first chunk, so that the chunks before it are written first; a field error before
    // a JSON error in the same chunk (the policy reports the first bad line, the field error).
    /// A name, the lines to replace (0-based index, new text), the line the error must name.
    type Case<'a> = (&'a str, &'a [(usize, &'a str)], usize);
    let cases: &[Case] = &[
        ("not json", &[(25_000, "this is not json")], 25_001),
        ("missing session", &[(25_000, r#"{"kind":"tool_call","tool":"read","args":null}"#)], 25_001),
        (
            "field error then JSON error",
            &[(24_000, r#"{"kind":"tool_call","tool":"read","args":null}"#), (24_010, "{oops")],
            24_001,
        ),
        (
            "bot field",
            &[(
                30_000,
                r#"{"kind":"bot_message","channel":"d","account":"a","conversation":"c","sender":"x","receiver":"y","ts_ms":-4}"#,
            )],
            30_001,
        ),
        ("first line", &[(0, "[1,2]")], 1),
    ];
    for (name, edits, named) in cases {
        eprintln!("case: {name}");
        let mut bad: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        for (at, line) in *edits {
            bad[*at] = line.to_string();
        }
        let trace = dir.write(&format!("{}.jsonl", name.replace(' ', "-")), bad.join("\n") + "\n");
        let one = same_for_all(&config, &trace, &[2, 3]).code(2);
        let said = one.stderr().contains(&format!("line {named}"));
        one.check(said, &format!("the error names line {named}"));
    }
    // Invalid UTF-8 in the third chunk: the first two are written, then the error.
    let mut bytes = good.clone().into_bytes();
    let at = good.match_indices('\n').nth(34_999).map(|(i, _)| i + 2).expect("line 35001");
    bytes[at] = 0xff;
    let trace = dir.write("utf8.jsonl", bytes);
    let one = same_for_all(&config, &trace, &[2]).code(2);
    let ok = one.stderr().contains("line 35001") && !one.output.stdout.is_empty();
    one.check(ok, "UTF-8 error at line 35001");
    // A line longer than any reader takes (here one without an end): named, not read whole.
    let long = format!("{}{{\"kind\":\"tool_call\",\"args\":\"{}", &good[..at - 1], "x".repeat(17 << 20));
    let trace = dir.write("long.jsonl", long);
    let one = same_for_all(&config, &trace, &[2]).code(2);
    let ok = one.stderr().contains("line 35001: is longer than 16777216 bytes") && !one.output.stdout.is_empty();
    one.check(ok, "a too-long line 35001");
}
