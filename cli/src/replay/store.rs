//! `loopguard replay --store URL`: every decision on state kept in a store, as each replica of a
//! scaled-out gateway makes it (host/src/store). Lines are decided one at a time as they arrive
//! (a replica reading its events from a pipe), and each decision line gets
//! `"store":{"key":…,"version":…,"via":"store"|"local"|"refused"}` so that the decisions of
//! several replicas can be put in commit order. At the end one `{"store":{…}}` line of counters
//! and latencies goes to stderr.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Args;
use loopguard_host::store::{
    redacted, Decided, MemoryStore, RedisStore, StateStore, StoreFailure, StoreOptions, StoreTls, StoredGateway, Via,
};
use loopguard_host::Policy;

/// The store options of `replay`.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// Keep the state in a store: `redis://[user:pass@]host:port[/db]` (Valkey or Redis >= 7.0,
    /// shared by replicas) or `memory` (this process, the same decision path). Lines are then
    /// decided one by one and each decision line carries "store":{key,version,via}.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Prefix of every store key.
    #[arg(long, value_name = "PREFIX", default_value = "lg:1:", requires = "store")]
    pub store_prefix: String,
    /// Time to live of a key after its last write (default 3600; longer than any window plus
    /// cooldown of the config).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), requires = "store")]
    pub store_ttl_s: Option<u64>,
    /// How long a decision waits for the store before it is made on local state (default 20).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), requires = "store")]
    pub store_deadline_ms: Option<u64>,
    /// When the store fails, make no decision ("via":"refused") instead of deciding on local state.
    #[arg(long, requires = "store")]
    pub store_fail_closed: bool,
    /// With a rediss:// store: the CA (PEM) the server's certificate must chain to, instead of
    /// the system's roots.
    #[arg(long, value_name = "FILE", requires = "store")]
    pub store_ca: Option<PathBuf>,
    /// With a rediss:// store: a client certificate (PEM) for a server that asks for one.
    #[arg(long, value_name = "FILE", requires_all = ["store", "store_key"])]
    pub store_cert: Option<PathBuf>,
    /// The private key (PEM) of --store-cert.
    #[arg(long, value_name = "FILE", requires_all = ["store", "store_cert"])]
    pub store_key: Option<PathBuf>,
}

/// Latencies in microseconds, one bucket each up to 100 ms (bounded memory for any trace).
struct Latencies(Vec<u64>);

impl Latencies {
    const TOP: usize = 100_000;

    fn add(&mut self, d: Duration) {
        let us = usize::try_from(d.as_micros()).unwrap_or(Self::TOP).min(Self::TOP);
        self.0[us] += 1;
    }

    fn quantile(&self, q: f64) -> usize {
        let total: u64 = self.0.iter().sum();
        let want = ((total as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        self.0
            .iter()
            .position(|&n| {
                seen += n;
                seen >= want
            })
            .unwrap_or(0)
    }
}

/// Replays `trace` (`-` = stdin) with the state in `args.store`.
pub fn replay(
    args: &StoreArgs,
    url: &str,
    policy: &Policy,
    (config, config_path): (&str, &Path),
    trace: &str,
) -> anyhow::Result<()> {
    let mut options = StoreOptions::default();
    if let Some(s) = args.store_ttl_s {
        options.ttl = Duration::from_secs(s);
    }
    if let Some(ms) = args.store_deadline_ms {
        options.deadline = Duration::from_millis(ms);
    }
    if args.store_fail_closed {
        options.failure = StoreFailure::Closed;
    }
    let store: Box<dyn StateStore> = match url {
        "memory" => Box::new(MemoryStore::default()),
        u if ["redis://", "rediss://", "valkey://", "redis+cluster://", "rediss+cluster://"].iter().any(|s| u.starts_with(s)) => {
            let tls =
                StoreTls { ca: args.store_ca.clone(), cert: args.store_cert.clone(), key: args.store_key.clone() };
            Box::new(
                RedisStore::open(u, &args.store_prefix, options.deadline, &tls)
                    .with_context(|| format!("--store {}", redacted(u)))?,
            )
        }
        other => bail!("--store needs `memory`, a redis://host:port URL or a redis+cluster://host:port,host:port one, not {other:?}"),
    };
    let backend = store.describe();
    let built = policy.gateway(config).map_err(|e| anyhow::Error::new(e).context(config_path.display().to_string()))?;
    let mut gateway = StoredGateway::new(built, store, options);
    let input: Box<dyn Read> = if trace == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(trace).with_context(|| format!("cannot read trace {trace}"))?)
    };
    let name = if trace == "-" { "<stdin>" } else { trace };
    let mut input = BufReader::new(input);
    loopguard_transcripts::skip_bom(&mut input);
    let mut stdout = std::io::stdout().lock();
    let mut latencies = Latencies(vec![0; Latencies::TOP + 1]);
    let (mut line, mut n, started) = (String::new(), 0u32, Instant::now());
    while input.read_line(&mut line).with_context(|| format!("reading {name}"))? > 0 {
        n = n.saturating_add(1);
        let event = line.trim_end_matches(['\n', '\r']);
        if !event.trim().is_empty() {
            let t = Instant::now();
            let decided = gateway.decide(event, n).with_context(|| Path::new(name).display().to_string())?;
            latencies.add(t.elapsed());
            stdout.write_all(output(n, &decided).as_bytes()).context("writing to stdout")?;
            stdout.flush().context("writing to stdout")?;
        }
        line.clear();
    }
    let s = gateway.stats();
    let decisions = s.on_store + s.on_local + s.refused;
    let per_s = decisions as f64 / started.elapsed().as_secs_f64().max(1e-9);
    eprintln!(
        "{{\"store\":{{\"backend\":{},\"decisions\":{decisions},\"on_store\":{},\"on_local\":{},\"refused\":{},\
         \"cas_retries\":{},\"store_errors\":{},\"unreadable\":{},\"episodes\":{},\"degraded\":{},\"local_keys\":{},\
         \"p50_us\":{},\"p99_us\":{},\"per_s\":{per_s:.0}}}}}",
        json(&backend),
        s.on_store,
        s.on_local,
        s.refused,
        s.cas_retries,
        s.store_errors,
        s.unreadable,
        s.episodes,
        s.degraded,
        s.local_keys,
        latencies.quantile(0.5),
        latencies.quantile(0.99),
    );
    Ok(())
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The decision line with the store's fields added.
fn output(n: u32, d: &Decided) -> String {
    let via = match d.via {
        Via::Store => "store",
        Via::Local => "local",
        Via::Refused => "refused",
    };
    let store = format!("\"store\":{{\"key\":{},\"version\":{},\"via\":\"{via}\"}}}}\n", json(&d.key), d.version);
    match d.decision.as_deref().and_then(|l| l.trim_end().strip_suffix('}')) {
        Some(open) => format!("{open},{store}"),
        None => format!("{{\"line\":{n},{store}"),
    }
}
