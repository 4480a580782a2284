//! `loopguard mcp --listen` end to end, for the answers the proxy writes itself: with the upstream
//! down, a request is answered with a JSON-RPC error that a client can match to its call.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

/// The proxy process, stopped (by its own id) when the test ends, pass or fail.
struct Proxy {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the proxy on a free port, in front of a port nothing listens on.
fn proxy_to_nowhere() -> Proxy {
    let closed = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port");
    let upstream = format!("http://{closed}/mcp");
    let mut child = Command::new(env!("CARGO_BIN_EXE_loopguard"))
        .args(["mcp", "--listen", "127.0.0.1:0", "--upstream", &upstream])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("loopguard mcp starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr is piped"));
    let mut line = String::new();
    // "loopguard mcp: listening on http://ADDR -> URL" once the policy is loaded.
    let _ = stderr.read_line(&mut line);
    let addr =
        line.split("http://").nth(1).and_then(|rest| rest.split_whitespace().next()).and_then(|a| a.parse().ok());
    let proxy = Proxy { child, addr: addr.unwrap_or(closed) };
    assert!(addr.is_some(), "expected the listening line, got {line:?}");
    proxy
}

/// POSTs `body` and returns the status and the JSON body of the answer.
fn post(addr: SocketAddr, body: &str) -> (u16, Value) {
    let mut stream = TcpStream::connect(addr).expect("connects");
    stream.set_read_timeout(Some(Duration::from_secs(60))).expect("timeout");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, \
         text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(format!("{head}{body}").as_bytes()).expect("sends");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("reads the answer");
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let json = answer.split_once("\r\n\r\n").and_then(|(_, b)| serde_json::from_str(b).ok()).unwrap_or(Value::Null);
    (status, json)
}

/// The error answer carries the request's id when the request could be read, and
/// `null` (as JSON-RPC says) when it has none or is not JSON.
#[test]
fn an_error_answer_carries_the_requests_id() {
    let proxy = proxy_to_nowhere();
    let call = |id: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "read", "arguments": {}}})
            .to_string()
    };
    let cases = [
        (call(json!(1)), json!(1)),
        (call(json!("call-7")), json!("call-7")),
        (json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {}}).to_string(), json!(3)),
        (json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(), Value::Null),
        ("{not json".to_string(), Value::Null),
    ];
    for (request, id) in cases {
        let (status, answer) = post(proxy.addr, &request);
        assert_eq!(status, 502, "{request}: {answer}");
        assert_eq!(answer["error"]["code"], json!(-32603), "{request}: {answer}");
        assert_eq!(answer.get("id"), Some(&id), "{request}: {answer}");
    }
}
