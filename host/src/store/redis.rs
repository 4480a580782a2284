//! The shared backend: Valkey or Redis (≥ 7.0; 6.2 works too), through the `redis` crate's
//! synchronous connection, like the rest of the host.
//!
//! One key per state key, `<prefix>{<state key>}` (the braces make the whole state key the
//! cluster hash tag), holding the value `kv::encode` writes: a 16-digit hex version and the policy's
//! blob. Reading is a `GET`; writing is [`CAS_SCRIPT`], which compares the version and sets
//! value and TTL in one atomic step, and returns the current value on a conflict so that a
//! retry needs no second read. The script runs by `EVALSHA` and falls back to `EVAL` when the
//! server lost its script cache (a restart): the crate's `Script` does that.
//!
//! Every command runs under the connection's read and write timeouts; after any failure the
//! connection is dropped (a late reply must never be read as the answer to the next command)
//! and the next call connects again. Passwords and users come in the URL
//! (`redis://user:pass@host:6379/0`), as the crate reads them; `rediss://` needs a build of the
//! crate with TLS, which this host does not enable (the connection error says so).

use std::time::Duration;

use redis::{Client, Connection, Script, Value};

use super::kv::{decode, encode, Cas, StateStore, StoreError, StoreErrorKind, Versioned};

/// Compares the version header and sets value + TTL; 1 when written, else the current value
/// (empty when the key is absent). No rule of the policy is here.
pub const CAS_SCRIPT: &str = r"
local cur = redis.call('GET', KEYS[1])
local ver = cur and string.sub(cur, 1, 16) or '0000000000000000'
if ver ~= ARGV[1] then return cur or '' end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
";

/// A Valkey/Redis store.
pub struct RedisStore {
    client: Client,
    url: String,
    conn: Option<Connection>,
    prefix: String,
    timeout: Duration,
    script: Script,
}

impl RedisStore {
    /// A store at `url` (`redis://host:port/db`), keys under `prefix`, each command bounded by
    /// `timeout`. Connects lazily: a store that is down at start is a failure of the first
    /// decision, not of the start. Fails only on a URL the crate cannot read.
    pub fn open(url: &str, prefix: &str, timeout: Duration) -> Result<Self, StoreError> {
        let client = Client::open(url).map_err(|e| StoreError::new(StoreErrorKind::Unreachable, e.to_string()))?;
        let info = client.get_connection_info();
        let shown = format!("{}", info.addr());
        Ok(Self {
            client,
            url: shown,
            conn: None,
            prefix: prefix.to_string(),
            timeout: timeout.max(Duration::from_millis(1)),
            script: Script::new(CAS_SCRIPT),
        })
    }

    /// The store key of a state key.
    pub fn key(&self, state_key: &str) -> String {
        format!("{}{{{state_key}}}", self.prefix)
    }

    fn connection(&mut self) -> Result<&mut Connection, StoreError> {
        if self.conn.is_none() {
            let conn = self.client.get_connection_with_timeout(self.timeout).map_err(classify)?;
            conn.set_read_timeout(Some(self.timeout)).map_err(classify)?;
            conn.set_write_timeout(Some(self.timeout)).map_err(classify)?;
            self.conn = Some(conn);
        }
        // Set just above.
        self.conn.as_mut().ok_or_else(|| StoreError::new(StoreErrorKind::Unreachable, "no connection"))
    }

    /// Runs `f` on the connection; drops the connection when it fails.
    fn run<T>(&mut self, f: impl FnOnce(&mut Connection) -> redis::RedisResult<T>) -> Result<T, StoreError> {
        let result = f(self.connection()?);
        result.map_err(|e| {
            self.conn = None;
            classify(e)
        })
    }
}

fn classify(e: redis::RedisError) -> StoreError {
    let kind = if e.is_timeout() {
        StoreErrorKind::Timeout
    } else if e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() {
        StoreErrorKind::Unreachable
    } else {
        StoreErrorKind::Refused
    };
    StoreError::new(kind, e.to_string())
}

impl StateStore for RedisStore {
    fn get(&mut self, key: &str) -> Result<Versioned, StoreError> {
        let key = self.key(key);
        let value: Option<Vec<u8>> = self.run(|c| redis::cmd("GET").arg(&key).query(c))?;
        value.map_or(Ok(Versioned::default()), |v| decode(&v))
    }

    fn cas(&mut self, key: &str, expected: u64, blob: &[u8], ttl: Duration) -> Result<Cas, StoreError> {
        let key = self.key(key);
        let version = expected + 1;
        let value = encode(version, blob);
        let ttl_ms = ttl.as_millis().max(1).to_string();
        let expected = format!("{expected:016x}");
        let script = self.script.clone();
        let reply: Value = self.run(|c| script.key(&key).arg(&expected).arg(&value).arg(&ttl_ms).invoke(c))?;
        match reply {
            Value::Int(1) => Ok(Cas::Written(version)),
            Value::BulkString(v) if v.is_empty() => Ok(Cas::Conflict(Versioned::default())),
            Value::BulkString(v) => Ok(Cas::Conflict(decode(&v)?)),
            other => {
                Err(StoreError::new(StoreErrorKind::Refused, format!("unexpected reply to the CAS script: {other:?}")))
            }
        }
    }

    fn describe(&self) -> String {
        format!("redis://{}", self.url)
    }
}
