//! The Prometheus text of the long-running hosts (docs/METRICS.md), end to end: what a scraper
//! reads on `loopguard mcp --listen`'s `/metrics` and on the stdio proxy's `--metrics ADDR`
//! matches what the client saw, and a bad `--metrics` is refused naming the option.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

/// A proxy process, stopped (by its own id) when the test ends, pass or fail.
struct Proxy(Child);

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn loopguard(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_loopguard"));
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

/// The address in the first stderr line that names `http://ADDR`.
fn announced(stderr: &mut impl BufRead) -> SocketAddr {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(stderr.read_line(&mut line).expect("stderr") > 0, "no address announced");
        let addr = line.split("http://").nth(1).and_then(|r| r.split(['/', ' ', '\n']).next());
        if let Some(addr) = addr.and_then(|a| a.parse().ok()) {
            return addr;
        }
    }
}

/// One HTTP/1.1 exchange; the status and the body.
fn http(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("connects");
    stream.set_read_timeout(Some(Duration::from_secs(60))).expect("timeout");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, \
         text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(format!("{head}{body}").as_bytes()).expect("sends");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("reads the answer");
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, answer.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default())
}

/// The sum of the samples of `name` whose labels contain every `label="value"` in `with`.
fn sample_sum(text: &str, name: &str, with: &[&str]) -> u64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .filter(|l| with.iter().all(|w| l.contains(w)))
        .map(|l| l.rsplit(' ').next().and_then(|v| v.parse::<u64>().ok()).expect("an integer sample"))
        .sum()
}

fn call(id: usize) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "read", "arguments": {"path": "/a"}}})
        .to_string()
}

/// A blocked call is answered by the proxy with a tool result marked as an error.
fn is_block(answer: &Value) -> bool {
    answer["result"]["isError"] == json!(true)
}

const CALLS: usize = 40;

/// A stand-in MCP server over HTTP: every POST is answered with the same tool result, so the
/// policy sees the same call return the same thing again and again.
fn same_result_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = listener.local_addr().expect("its address");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let (mut line, mut length) = (String::new(), 0);
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let id = serde_json::from_slice::<Value>(&body).map(|v| v["id"].clone()).unwrap_or(Value::Null);
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "same"}]}});
            let answer = answer.to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                answer.len()
            );
            let _ = reader.get_mut().write_all(format!("{head}{answer}").as_bytes());
        }
    });
    addr
}

/// The server of the stdio tests: a line with an id in, the same tool result for that id out.
const SAME_RESULT_STDIO: &str =
    r#"s/.*"id":\([0-9]*\).*/{"jsonrpc":"2.0","id":\1,"result":{"content":[{"type":"text","text":"same"}]}}/"#;

#[test]
fn listen_serves_the_decisions_the_client_saw_on_its_own_address() {
    let upstream = format!("http://{}/mcp", same_result_server());
    let mut child = loopguard(&["mcp", "--listen", "127.0.0.1:0", "--upstream", &upstream]).spawn().expect("starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let _proxy = Proxy(child);
    let addr = announced(&mut stderr);
    let mut blocks = 0;
    for id in 0..CALLS {
        let (_, body) = http(addr, "POST", "/mcp", &call(id));
        blocks += u64::from(is_block(&serde_json::from_str(&body).unwrap_or(Value::Null)));
    }
    assert!(blocks > 0, "the same call {CALLS} times is blocked in the end");
    let (status, text) = http(addr, "GET", "/metrics", "");
    assert_eq!(status, 200, "{text}");
    assert_eq!(sample_sum(&text, "loopguard_decisions_total", &[r#"action="block""#]), blocks, "{text}");
    assert_eq!(
        sample_sum(&text, "loopguard_decisions_total", &[r#"host="mcp""#, r#"kind="tool_call""#]),
        CALLS as u64,
        "{text}"
    );
    assert_eq!(
        sample_sum(&text, "loopguard_decision_duration_seconds_count", &[r#"kind="tool_call""#]),
        CALLS as u64,
        "{text}"
    );
    assert_eq!(sample_sum(&text, "loopguard_policy_traps_total", &[r#"host="mcp""#]), 0, "{text}");
    assert!(text.ends_with("# EOF\n"), "{text}");
    let (status, _) = http(addr, "POST", "/metrics", "");
    assert_eq!(status, 405);
}

#[test]
fn the_stdio_proxy_serves_its_decisions_on_the_metrics_address() {
    // `sed` as the server (see SAME_RESULT_STDIO); blocked calls never reach it.
    let args = ["mcp", "--metrics", "127.0.0.1:0", "--", "sed", "-u", "-e", SAME_RESULT_STDIO];
    let mut child = loopguard(&args).stdin(Stdio::piped()).spawn().expect("starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let _proxy = Proxy(child);
    let addr = announced(&mut stderr);
    let mut blocks = 0;
    for id in 0..CALLS {
        writeln!(stdin, "{}", call(id)).expect("writes");
        stdin.flush().expect("flushes");
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the server's answer or the proxy's");
        blocks += u64::from(is_block(&serde_json::from_str(&line).unwrap_or(Value::Null)));
    }
    assert!(blocks > 0, "the same call {CALLS} times is blocked in the end");
    let (status, text) = http(addr, "GET", "/metrics", "");
    assert_eq!(status, 200, "{text}");
    assert_eq!(sample_sum(&text, "loopguard_decisions_total", &[r#"action="block""#]), blocks, "{text}");
    assert_eq!(sample_sum(&text, "loopguard_decisions_total", &[r#"kind="tool_call""#]), CALLS as u64, "{text}");
    assert_eq!(http(addr, "GET", "/other", "").0, 404);
}

fn refused(args: &[&str]) -> Output {
    let out = loopguard(args).stdin(Stdio::null()).output().expect("runs");
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

#[test]
fn a_bad_metrics_address_is_refused_naming_the_option() {
    let taken = TcpListener::bind("127.0.0.1:0").expect("a port");
    let taken = taken.local_addr().expect("its address").to_string();
    for (args, says) in [
        (&["mcp", "--metrics", "nonsense", "--", "cat"][..], "--metrics"),
        (&["mcp", "--metrics", "localhost", "--", "cat"][..], "--metrics"),
        (&["mcp", "--metrics", &taken, "--", "cat"][..], "cannot listen"),
    ] {
        let stderr = String::from_utf8_lossy(&refused(args).stderr).to_string();
        assert!(stderr.contains(says) && stderr.contains("--metrics"), "{args:?}: {stderr}");
    }
}

/// `replay … -` with `--metrics`: while the trace is still streaming in, a scrape counts the
/// decision lines written so far, by the words of those lines.
#[test]
fn a_streaming_replay_serves_the_decisions_it_has_written() {
    let dir = std::env::temp_dir().join(format!("loopguard-metrics-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let config = dir.join("config.json");
    std::fs::write(&config, r#"{"tools":{"loopDetection":{"enabled":true}}}"#).expect("config");
    let config = config.to_string_lossy().to_string();
    let mut child = loopguard(&["replay", "--config", &config, "--metrics", "127.0.0.1:0", "-"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let _replay = Proxy(child);
    let addr = announced(&mut stderr);
    // More than one chunk (256 KiB) of the same call and result (written below, once the
    // decisions are being read): decisions come out per chunk, and stdin stays open so the
    // replay is still running when it is scraped.
    let (call, result) = (
        json!({"kind": "tool_call", "session": "s", "tool": "read", "args": {"path": "/a", "pad": "x".repeat(200)}}),
        json!({"kind": "tool_result", "session": "s", "tool": "read", "args": {"path": "/a", "pad": "x".repeat(200)}, "result": "same"}),
    );
    let seen = std::sync::Arc::new(std::sync::Mutex::new((0u64, 0u64)));
    {
        let seen = std::sync::Arc::clone(&seen);
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                let mut s = seen.lock().expect("the count");
                s.0 += 1;
                s.1 += u64::from(v["action"] == json!("block"));
            }
        });
    }
    for _ in 0..1000 {
        writeln!(stdin, "{call}\n{result}").expect("writes");
    }
    stdin.flush().expect("flushes");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (_, text) = http(addr, "GET", "/metrics", "");
        let (lines, blocks) = *seen.lock().expect("the count");
        let counted = sample_sum(&text, "loopguard_decisions_total", &[r#"host="replay""#]);
        if lines > 0 && counted == lines {
            assert_eq!(sample_sum(&text, "loopguard_decisions_total", &[r#"action="block""#]), blocks, "{text}");
            assert!(blocks > 0, "the same call again and again is blocked: {text}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{lines} lines read, {counted} counted: {text}");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(stdin);
    let _ = std::fs::remove_dir_all(&dir);
}
