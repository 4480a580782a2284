//! A rolling upgrade on a real redis-server: replicas of loopguard 1.0 (the compare-and-set that
//! counts versions from 1) and of this version (remembered versions, the store's clock as the
//! version: docs/SCALING.md, "Upgrading") share keys; every verdict is one node's, and a version
//! this replica remembers never wins on a state it did not see, also after the key was dropped.
#![allow(clippy::unwrap_used)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use loopguard_host::store::{
    Cas, MemoryStore, RedisStore, StateStore, StoreError, StoreErrorKind, StoreOptions, StoreTls, StoredGateway,
    Versioned, Via, COUNTED_BELOW,
};
use loopguard_host::Policy;
use loopguard_tests::{policy_wasm, require_tool, workspace_root};

/// loopguard 1.0's CAS script, byte for byte: the client writes the header `expected + 1`.
const CAS_SCRIPT_1_0: &str = r"
local cur = redis.call('GET', KEYS[1])
local ver = cur and string.sub(cur, 1, 16) or '0000000000000000'
if ver ~= ARGV[1] then return cur or '' end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
";

/// A pair budget of 2 per 60 s: the 3rd message of a pair in the window is suppressed.
const CONFIG: &str = r#"{"channels":{"defaults":{"botLoopProtection":{"maxEventsPerWindow":2}}}}"#;
const PREFIX: &str = "lg:up:";

/// A redis-server on a free loopback port, persistence off, stopped when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(require_tool("redis-server"))
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let server = Self { child, port };
        let end = Instant::now() + Duration::from_secs(10);
        while server.connection().and_then(|mut c| redis::cmd("PING").query::<String>(&mut c)).is_err() {
            assert!(Instant::now() < end, "redis-server did not answer on port {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn connection(&self) -> redis::RedisResult<redis::Connection> {
        redis::Client::open(self.url())?.get_connection()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopguard 1.0 replica's store client: its script, its `expected + 1` versions.
struct Store1_0 {
    conn: redis::Connection,
}

impl StateStore for Store1_0 {
    fn get(&mut self, key: &str) -> Result<Versioned, StoreError> {
        let value: Option<Vec<u8>> = redis::cmd("GET").arg(format!("{PREFIX}{{{key}}}")).query(&mut self.conn).unwrap();
        Ok(value.map(|v| parse(&v)).unwrap_or_default())
    }

    fn cas(&mut self, key: &str, expected: u64, blob: &[u8], ttl: Duration) -> Result<Cas, StoreError> {
        let mut value = format!("{:016x}", expected + 1).into_bytes();
        value.extend_from_slice(blob);
        let reply: redis::Value = redis::Script::new(CAS_SCRIPT_1_0)
            .key(format!("{PREFIX}{{{key}}}"))
            .arg(format!("{expected:016x}"))
            .arg(value)
            .arg(ttl.as_millis().to_string())
            .invoke(&mut self.conn)
            .unwrap();
        match reply {
            redis::Value::Int(1) => Ok(Cas::Written(expected + 1)),
            redis::Value::BulkString(v) if v.is_empty() => Ok(Cas::Conflict(Versioned::default())),
            redis::Value::BulkString(v) => Ok(Cas::Conflict(parse(&v))),
            other => Err(StoreError::new(StoreErrorKind::Refused, format!("{other:?}"))),
        }
    }

    fn describe(&self) -> String {
        "loopguard 1.0".into()
    }
}

fn parse(value: &[u8]) -> Versioned {
    let version = u64::from_str_radix(std::str::from_utf8(&value[..16]).unwrap(), 16).unwrap();
    Versioned { version, blob: value[16..].to_vec() }
}

fn policy() -> Policy {
    let _ = loopguard_host::use_compile_cache(&workspace_root().join("target/wasmtime-cache"));
    Policy::from_file(policy_wasm()).unwrap()
}

fn options() -> StoreOptions {
    // A loaded machine must not turn a slow answer into a local decision here.
    StoreOptions { deadline: Duration::from_secs(5), ..StoreOptions::default() }
}

fn replica(policy: &Policy, server: &Server) -> StoredGateway {
    let store = RedisStore::open(&server.url(), PREFIX, Duration::from_secs(5), &StoreTls::default()).unwrap();
    StoredGateway::new(policy.gateway(CONFIG).unwrap(), Box::new(store), options())
}

fn replica_1_0(policy: &Policy, server: &Server) -> StoredGateway {
    let store = Store1_0 { conn: server.connection().unwrap() };
    StoredGateway::new(policy.gateway(CONFIG).unwrap(), Box::new(store), options())
}

/// Message `i` of the pair in `conversation`, the two bots taking turns, one second apart.
fn message(conversation: &str, i: u64) -> String {
    let (sender, receiver) = if i.is_multiple_of(2) { ("a", "b") } else { ("b", "a") };
    format!(
        r#"{{"kind":"bot_message","channel":"slack","account":"T1","conversation":"{conversation}","sender":"{sender}","receiver":"{receiver}","ts_ms":{}}}"#,
        1_000_000 + i * 1_000
    )
}

fn action(line: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    v["action"].as_str().unwrap().to_string()
}

/// The verdicts of one node deciding `events` in this order.
fn one_node(policy: &Policy, events: &[String]) -> Vec<String> {
    let mut node = StoredGateway::new(policy.gateway(CONFIG).unwrap(), Box::new(MemoryStore::default()), options());
    events.iter().enumerate().map(|(i, e)| action(&node.decide(e, i as u32 + 1).unwrap().decision.unwrap())).collect()
}

#[test]
fn old_and_new_replicas_share_keys_during_an_upgrade_and_decide_as_one_node() {
    let (policy, server) = (policy(), Server::start());
    let mut replicas = [replica(&policy, &server), replica(&policy, &server), replica_1_0(&policy, &server)];
    // Three conversations, 30 messages each, dealt to the replicas in turn (the 1.0 one every third).
    let mut decided: Vec<(String, u64, String, String)> = Vec::new();
    for i in 0..30u64 {
        for (c, conversation) in ["c0", "c1", "c2"].iter().enumerate() {
            let event = message(conversation, i);
            let r = (i as usize + c) % 3;
            let d = replicas[r].decide(&event, 1).unwrap();
            assert_eq!(d.via, Via::Store, "{conversation} message {i} on replica {r}");
            decided.push((d.key.clone(), d.version, event, action(&d.decision.unwrap())));
        }
    }
    let mut keys: Vec<String> = decided.iter().map(|d| d.0.clone()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let mut commits: Vec<_> = decided.iter().filter(|d| d.0 == key).cloned().collect();
        commits.sort_by_key(|d| d.1);
        let versions: Vec<u64> = commits.iter().map(|d| d.1).collect();
        assert!(versions.windows(2).all(|w| w[0] < w[1]), "{key}: one version per decision: {versions:?}");
        let events: Vec<String> = commits.iter().map(|d| d.2.clone()).collect();
        let verdicts: Vec<String> = commits.iter().map(|d| d.3.clone()).collect();
        assert_eq!(verdicts, one_node(&policy, &events), "{key}");
        assert!(verdicts.iter().any(|v| v == "suppress"), "{key}: the pair budget tripped");
    }
}

#[test]
fn a_remembered_version_never_wins_after_the_key_was_dropped_and_written_again() {
    let (policy, server) = (policy(), Server::start());
    let (mut new, mut old) = (replica(&policy, &server), replica_1_0(&policy, &server));
    // Two messages at 0 and 1 s; after the key is dropped, two more at 100 and 101 s, then one at
    // 102 s: on the store's state (100, 101) it is the pair's 3rd in the window, suppressed; on the
    // remembered state (0, 1: out of the window) it would be the 1st, allowed.
    let e: Vec<String> = [0, 1, 100, 101, 102].iter().map(|&i| message("c", i)).collect();
    let mine: Vec<_> = e[..2].iter().map(|event| new.decide(event, 1).unwrap()).collect();
    assert!(mine[0].version >= COUNTED_BELOW && mine[1].version > mine[0].version, "the store's clock");
    let key = format!("{PREFIX}{{{}}}", mine[0].key);
    // The key is evicted (or expires); a 1.0 replica writes it anew, counting from 1.
    let deleted: i64 = redis::cmd("DEL").arg(&key).query(&mut server.connection().unwrap()).unwrap();
    assert_eq!(deleted, 1);
    let theirs: Vec<u64> = e[2..4].iter().map(|event| old.decide(event, 2).unwrap().version).collect();
    assert_eq!(theirs, [1, 2]);
    let d = new.decide(&e[4], 3).unwrap();
    assert_eq!((d.via, d.retries), (Via::Store, 1), "the remembered version conflicts");
    assert_eq!(one_node(&policy, &e[2..]), ["allow", "allow", "suppress"]);
    assert_eq!(action(&d.decision.unwrap()), "suppress");
}
