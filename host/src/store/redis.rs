//! The shared backend: Valkey or Redis (≥ 7.0; 6.2 works too), through the `redis` crate's
//! synchronous connection, like the rest of the host.
//!
//! One key per state key, `<prefix>{<state key>}` (the braces make the whole state key the
//! cluster hash tag), holding a 16-digit hex version and the policy's blob (`kv::decode` reads
//! it). Reading is a `GET`; writing is [`CAS_SCRIPT`], which compares the version and sets
//! value, next version and TTL in one atomic step, and returns the current value on a conflict
//! so that a retry needs no second read. The script runs by `EVALSHA` and falls back to `EVAL` when the
//! server lost its script cache (a restart): the crate's `Script` does that.
//!
//! A Valkey/Redis Cluster is `redis+cluster://[user:pass@]host:port,host:port,…` (TLS:
//! `rediss+cluster://`): the crate's cluster client finds the slots from any of the nodes given,
//! follows `MOVED` and `ASK` while slots migrate, and finds the new primary after a failover.
//! Every decision touches one key, so one slot: no command crosses slots.
//!
//! Every command runs under the connection's read and write timeouts; after any failure the
//! connection is dropped (a late reply must never be read as the answer to the next command)
//! and the next call connects again. Passwords and users come in the URL
//! (`redis://user:pass@host:6379/0`), as the crate reads them. `rediss://` speaks TLS (rustls):
//! the server's certificate is checked against the system's roots (`SSL_CERT_FILE` is honoured),
//! or against [`StoreTls::ca`] alone for a private certificate authority; [`StoreTls::cert`] and
//! [`StoreTls::key`] answer a server that asks clients for a certificate (Redis's default
//! `tls-auth-clients yes`).

use std::path::PathBuf;
use std::time::Duration;

use redis::cluster::ClusterClientBuilder;
use redis::{Client, ClientTlsConfig, ConnectionLike, Script, TlsCertificates, Value};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::kv::{decode, Cas, StateStore, StoreError, StoreErrorKind, Versioned};

/// Compares the version header; when it is still `ARGV[1]`, sets the blob `ARGV[2]` under the
/// next version (`kv::next_version` on the server's clock: `TIME` in microseconds, or one more,
/// whichever is larger) with the TTL `ARGV[3]` ms, and returns that version (an integer reply);
/// else returns the current value (empty when the key is absent), a bulk reply. Versions stay
/// below 2^53, where Lua's numbers are exact. No rule of the policy is here.
///
/// The server's clock, not the client's: every replica writing a key then counts on one clock.
/// loopguard 1.0's script (`SET KEYS[1] ARGV[2]` with the client's `expected + 1` header,
/// returning 1) compares the same header, so old and new replicas share keys during an upgrade
/// (docs/SCALING.md, "Upgrading").
pub const CAS_SCRIPT: &str = r"
local cur = redis.call('GET', KEYS[1])
local ver = cur and string.sub(cur, 1, 16) or '0000000000000000'
if ver ~= ARGV[1] then return cur or '' end
local t = redis.call('TIME')
local v = math.max(tonumber(ver, 16) + 1, t[1] * 1000000 + t[2])
redis.call('SET', KEYS[1], string.format('%016x', v) .. ARGV[2], 'PX', ARGV[3])
return v
";

/// The TLS files of a `rediss://` store, each a PEM file.
#[derive(Debug, Clone, Default)]
pub struct StoreTls {
    /// The certificate authority the server's certificate must chain to, instead of the system's.
    pub ca: Option<PathBuf>,
    /// The client certificate, for a server that asks for one (needs `key`).
    pub cert: Option<PathBuf>,
    /// The client certificate's private key (needs `cert`).
    pub key: Option<PathBuf>,
}

impl StoreTls {
    /// No file given: a `rediss://` URL then trusts the system's roots.
    pub fn is_empty(&self) -> bool {
        self.ca.is_none() && self.cert.is_none() && self.key.is_none()
    }

    /// The files read; an error names the file (or the missing half of the client pair). Each
    /// must hold what it is for: the crate would take a file without a certificate as an empty
    /// trust store, and every connection would then fail far from the cause.
    fn load(&self) -> Result<TlsCertificates, StoreError> {
        let has_certificate = |b: &[u8]| CertificateDer::pem_slice_iter(b).any(|c| c.is_ok());
        let has_key = |b: &[u8]| PrivateKeyDer::from_pem_slice(b).is_ok();
        let read = |what: &str, path: &PathBuf, holds: &dyn Fn(&[u8]) -> bool, want: &str| {
            let bytes = std::fs::read(path).map_err(|e| {
                StoreError::new(StoreErrorKind::Refused, format!("cannot read the TLS {what} {}: {e}", path.display()))
            })?;
            if !holds(&bytes) {
                return Err(tls_error(&format!("the TLS {what} {} holds no PEM {want}", path.display())));
            }
            Ok(bytes)
        };
        let client_tls = match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => Some(ClientTlsConfig {
                client_cert: read("certificate", cert, &has_certificate, "certificate")?,
                client_key: read("key", key, &has_key, "private key")?,
            }),
            (None, None) => None,
            (Some(_), None) => return Err(tls_error("a client certificate needs its key file too")),
            (None, Some(_)) => return Err(tls_error("a client key needs its certificate file too")),
        };
        let root_cert = self.ca.as_ref().map(|ca| read("CA file", ca, &has_certificate, "certificate")).transpose()?;
        Ok(TlsCertificates { client_tls, root_cert })
    }
}

/// `url` with its user and password replaced by `***`, for messages and logs.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let authority = rest.split('/').next().unwrap_or_default();
    match authority.rfind('@') {
        Some(at) => format!("{scheme}://***{}", &rest[at..]),
        None => url.to_string(),
    }
}

fn tls_error(reason: &str) -> StoreError {
    StoreError::new(StoreErrorKind::Refused, reason)
}

/// A Valkey/Redis store.
pub struct RedisStore {
    client: Backend,
    url: String,
    conn: Option<Box<dyn ConnectionLike + Send>>,
    prefix: String,
    timeout: Duration,
    script: Script,
}

/// One server, or a cluster.
enum Backend {
    Single(Client),
    Cluster(redis::cluster::ClusterClient),
}

/// The schemes of a cluster URL: each node is then `redis://` or `rediss://` (TLS).
const CLUSTER_SCHEMES: [(&str, &str); 2] = [("redis+cluster://", "redis://"), ("rediss+cluster://", "rediss://")];

impl RedisStore {
    /// A store at `url` (`redis://host:port/db` or `rediss://…` with `tls`; a cluster:
    /// `redis+cluster://host:port,host:port` or `rediss+cluster://…`), keys under `prefix`, each
    /// command bounded by `timeout`. Connects lazily: a store that is down at start is a failure
    /// of the first decision, not of the start. Fails only on a URL the crate cannot read or TLS
    /// files that cannot be read or parsed.
    pub fn open(url: &str, prefix: &str, timeout: Duration, tls: &StoreTls) -> Result<Self, StoreError> {
        let refused = |e: redis::RedisError| StoreError::new(StoreErrorKind::Refused, e.to_string());
        let timeout = timeout.max(Duration::from_millis(1));
        let scheme = url.split_once("://").map_or("redis", |(scheme, _)| scheme);
        let (client, shown) = if let Some((cluster, node)) = CLUSTER_SCHEMES.iter().find(|(c, _)| url.starts_with(c)) {
            let rest = &url[cluster.len()..];
            // `user:pass@` once, before the first node, applies to every node.
            let (credentials, hosts) = match rest.rfind('@') {
                Some(at) => (&rest[..=at], &rest[at + 1..]),
                None => ("", rest),
            };
            let hosts: Vec<&str> =
                hosts.split(',').map(|h| h.trim_end_matches('/')).filter(|h| !h.is_empty()).collect();
            if hosts.is_empty() {
                return Err(StoreError::new(
                    StoreErrorKind::Refused,
                    "a cluster URL names no node (host:port,host:port)",
                ));
            }
            let nodes: Vec<String> = hosts.iter().map(|h| format!("{node}{credentials}{h}")).collect();
            let mut builder = ClusterClientBuilder::new(nodes).connection_timeout(timeout).response_timeout(timeout);
            if !tls.is_empty() {
                if *node != "rediss://" {
                    return Err(tls_error("TLS files need a rediss+cluster:// URL"));
                }
                builder = builder.certs(tls.load()?);
            }
            (Backend::Cluster(builder.build().map_err(refused)?), format!("{scheme}://{}", hosts.join(",")))
        } else {
            let client = if tls.is_empty() {
                Client::open(url).map_err(refused)?
            } else if url.starts_with("rediss://") {
                Client::build_with_tls(url, tls.load()?).map_err(refused)?
            } else {
                return Err(tls_error("TLS files need a rediss:// URL"));
            };
            // The address without the credentials, under the URL's own scheme.
            let shown = format!("{scheme}://{}", client.get_connection_info().addr());
            (Backend::Single(client), shown)
        };
        Ok(Self {
            client,
            url: shown,
            conn: None,
            prefix: prefix.to_string(),
            timeout,
            script: Script::new(CAS_SCRIPT),
        })
    }

    /// The store key of a state key.
    pub fn key(&self, state_key: &str) -> String {
        format!("{}{{{state_key}}}", self.prefix)
    }

    fn connection(&mut self) -> Result<&mut Box<dyn ConnectionLike + Send>, StoreError> {
        if self.conn.is_none() {
            let conn: Box<dyn ConnectionLike + Send> = match &self.client {
                Backend::Single(client) => {
                    let conn = client.get_connection_with_timeout(self.timeout).map_err(classify)?;
                    conn.set_read_timeout(Some(self.timeout)).map_err(classify)?;
                    conn.set_write_timeout(Some(self.timeout)).map_err(classify)?;
                    Box::new(conn)
                }
                // Its timeouts are the builder's (`connection_timeout`, `response_timeout`).
                Backend::Cluster(client) => Box::new(client.get_connection().map_err(classify)?),
            };
            self.conn = Some(conn);
        }
        // Set just above.
        self.conn.as_mut().ok_or_else(|| StoreError::new(StoreErrorKind::Unreachable, "no connection"))
    }

    /// Runs `f` on the connection; drops the connection when it fails.
    fn run<T>(&mut self, f: impl FnOnce(&mut dyn ConnectionLike) -> redis::RedisResult<T>) -> Result<T, StoreError> {
        let result = f(self.connection()?.as_mut());
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
        let ttl_ms = ttl.as_millis().max(1).to_string();
        let expected = format!("{expected:016x}");
        let script = self.script.clone();
        let reply: Value = self.run(|c| script.key(&key).arg(&expected).arg(blob).arg(&ttl_ms).invoke(c))?;
        match reply {
            Value::Int(version) if version > 0 => Ok(Cas::Written(version.unsigned_abs())),
            Value::BulkString(v) if v.is_empty() => Ok(Cas::Conflict(Versioned::default())),
            Value::BulkString(v) => Ok(Cas::Conflict(decode(&v)?)),
            other => {
                Err(StoreError::new(StoreErrorKind::Refused, format!("unexpected reply to the CAS script: {other:?}")))
            }
        }
    }

    fn describe(&self) -> String {
        self.url.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_reach_a_message() {
        assert_eq!(redacted("redis://user:s3cret@cache:6379/0"), "redis://***@cache:6379/0");
        assert_eq!(redacted("rediss://:s3cret@cache:6380"), "rediss://***@cache:6380");
        assert_eq!(redacted("redis://cache:6379/0"), "redis://cache:6379/0");
        assert_eq!(redacted("memory"), "memory");
    }

    #[test]
    fn tls_files_are_checked_when_the_store_is_opened() {
        let open = |url: &str, tls: StoreTls| RedisStore::open(url, "lg:1:", Duration::from_millis(20), &tls).err();
        let missing = StoreTls { ca: Some(PathBuf::from("/nonexistent/ca.pem")), ..StoreTls::default() };
        let e = open("rediss://127.0.0.1:6380", missing).expect("an unreadable CA file is an error");
        assert!(e.reason.contains("cannot read the TLS CA file /nonexistent/ca.pem"), "{e}");

        let half = StoreTls { cert: Some(PathBuf::from("client.pem")), ..StoreTls::default() };
        let e = open("rediss://127.0.0.1:6380", half).expect("a certificate without its key is an error");
        assert!(e.reason.contains("needs its key file"), "{e}");

        let plain = StoreTls { ca: Some(PathBuf::from("ca.pem")), ..StoreTls::default() };
        let e = open("redis://127.0.0.1:6379", plain).expect("TLS files on a plain URL are an error");
        assert!(e.reason.contains("need a rediss:// URL"), "{e}");
    }

    #[test]
    fn a_rediss_url_opens_with_the_system_roots_and_is_shown_without_credentials() {
        let store = RedisStore::open(
            "rediss://u:pw@127.0.0.1:6380/0",
            "lg:1:",
            Duration::from_millis(20),
            &StoreTls::default(),
        )
        .expect("rediss:// is supported");
        assert_eq!(store.describe(), "rediss://127.0.0.1:6380");
    }
}
