//! Replaying one trace on several cores, with output identical to one worker's.
//!
//! The trace is read in the same chunks as [`crate::trace::stream::stream`] (whole lines, about
//! [`crate::trace::stream::DEFAULT_CHUNK_BYTES`] each). Each chunk is split by `route`: a worker gets
//! the chunk with every line that is not its own replaced by an empty line, so the policy numbers
//! the lines as the trace does and skips the others. Each worker has its own policy instance
//! ([`SwappableGateway`]) and applies its parts in trace order; the decisions of a chunk are merged
//! back by line number and written only when every worker has decided its part, so stdout is byte
//! for byte what one worker writes. Worker 0 is the calling thread, between chunks (`work`).
//!
//! Why this is the same replay: tool events touch only their session's state, and a session's
//! events all go to one worker (chosen at its first line: the one given the fewest bytes so far),
//! in trace order; bot and group events all go to the global lane (the last worker), in trace
//! order. Two things still span sessions and are handled here:
//!
//! - the session cap (`loopguard.maxSessions`): past it one gateway evicts the least recently
//!   used session, which a worker holding fewer sessions would not. Before a chunk brings the
//!   number of distinct sessions past what the policy is known to keep (asked of a scratch
//!   instance, [`keeps_sessions`]), the replay goes on with one gateway: it reads the trace
//!   again up to that chunk (decisions dropped), then carries on from it. So does a line that
//!   `serde_json` does not read as the policy does (`route`: duplicate keys, lone surrogates,
//!   malformed lines), so that the policy reads it, or names its error, as with one worker.
//! - bad input: the policy checks a whole batch before applying any of it, so with one worker a
//!   bad line fails its chunk and nothing of it is written. Here a failed chunk is checked whole
//!   on a scratch instance (checking does not depend on state), which names exactly the line and
//!   reason one worker would have named.

mod route;
mod work;

use std::io::{BufRead, Write};

use super::read::{input_error, Chunks};
use super::stream as replay;
use loopguard_host::Policy;
use loopguard_host::{Error, Result};
use loopguard_host::{Health, Supervision, SwappableGateway};
use route::Route;
use work::{Chunk, Job, Pool};

pub(crate) use route::worker_of;

/// How to open the trace again from its start, for the fall-back to one gateway. Without it
/// (a trace on stdin) the replay runs on one worker from the start.
pub type Reopen<'a> = &'a dyn Fn() -> std::io::Result<Box<dyn BufRead>>;

/// What a parallel replay did, whether it succeeded or not.
#[derive(Debug)]
pub struct Replayed {
    /// Trace lines read, or the error that ended the replay.
    pub result: Result<u64>,
    /// The supervisors' counters, added over all workers.
    pub health: Health,
    /// The last failure a supervisor reported, if any.
    pub last_failure: Option<String>,
}

/// Sessions a policy is first asked to keep; then twice as many each time a trace needs more.
const FIRST_PROBE: usize = 1024;

/// Replays `trace` on `jobs` workers (the first is `first`, the others are made of `policy` and
/// `config` with the same supervision) and writes the decisions to `out`, exactly as
/// [`replay::stream`] on `first` alone would.
pub fn stream(
    first: SwappableGateway,
    policy: &Policy,
    config: &str,
    jobs: usize,
    trace: &mut dyn BufRead,
    reopen: Option<Reopen<'_>>,
    out: &mut dyn Write,
) -> Replayed {
    let supervision = first.supervision();
    let mut gateways = vec![first];
    if reopen.is_some() {
        while gateways.len() < jobs.clamp(1, work::MAX_WORKERS) {
            match SwappableGateway::new(policy.clone(), config, supervision) {
                Ok(g) => gateways.push(g),
                Err(e) => return finish(&gateways, Err(e)),
            }
        }
    }
    if gateways.len() == 1 {
        let mut sink = &gateways[0];
        let result = replay::stream(&mut sink, trace, out, replay::DEFAULT_CHUNK_BYTES);
        return finish(&gateways, result);
    }
    let mut run = Run {
        policy,
        config,
        supervision,
        known_sessions: 0,
        sessions: Default::default(),
        load: vec![0; gateways.len()],
        global: u8::try_from(gateways.len() - 1).unwrap_or(0),
        merged: String::new(),
    };
    let outcome = std::thread::scope(|scope| {
        let pool = Pool::start(scope, &gateways);
        let outcome = run.parallel(&pool, trace, out);
        pool.stop();
        outcome
    });
    match (outcome, reopen) {
        (Ok(Parallel::Done(lines)), _) => finish(&gateways, Ok(lines)),
        (Err(e), _) => finish(&gateways, Err(e)),
        (Ok(Parallel::Single { .. }), None) => {
            // Only a trace that can be reopened runs on several workers.
            let e = Error::io("reading the trace again", std::io::ErrorKind::Unsupported.into());
            finish(&gateways, Err(e))
        }
        (Ok(Parallel::Single { first_line }), Some(reopen)) => {
            let (result, gateway) = run.single(reopen, first_line, out);
            gateways.extend(gateway);
            finish(&gateways, result)
        }
    }
}

fn finish(gateways: &[SwappableGateway], result: Result<u64>) -> Replayed {
    let mut health = Health::default();
    let mut last_failure = None;
    for g in gateways {
        let h = g.health();
        health.recoveries += h.recoveries;
        health.standby_recoveries += h.standby_recoveries;
        health.timeouts += h.timeouts;
        health.traps += h.traps;
        health.oom += h.oom;
        health.swaps += h.swaps;
        health.failed_swaps += h.failed_swaps;
        health.snapshots += h.snapshots;
        health.standbys += h.standbys;
        last_failure = last_failure.or_else(|| g.last_failure());
    }
    Replayed { result, health, last_failure }
}

/// How the parallel part ended: at the end of the trace, or before a chunk that must run on one
/// gateway (it is handed back with its first line number).
enum Parallel {
    Done(u64),
    Single { first_line: u64 },
}

struct Run<'a> {
    policy: &'a Policy,
    config: &'a str,
    supervision: Supervision,
    /// Sessions the policy is known to keep without evicting.
    known_sessions: usize,
    /// The worker of every session seen so far. As many as the policy keeps at most: past that
    /// the replay goes on with one gateway.
    sessions: std::collections::HashMap<Box<str>, u8>,
    /// Trace bytes given to each worker so far (the global lane's included).
    load: Vec<u64>,
    /// The worker of bot and group events: the last, a thread of its own, so that with bot
    /// events in a trace the thread that routes has time for tool sessions.
    global: u8,
    /// The merged decisions of a chunk (one buffer for all).
    merged: String,
}

fn line_number(line: u64) -> Result<u32> {
    u32::try_from(line).map_err(|_| input_error(line, "the trace has more lines than a u32 can number; split it"))
}

impl Run<'_> {
    fn parallel(&mut self, pool: &Pool, trace: &mut dyn BufRead, out: &mut dyn Write) -> Result<Parallel> {
        let mut first_line: u64 = 1;
        let mut pending = std::collections::VecDeque::new();
        let mut chunks = Chunks::new(trace);
        let mut drain =
            |run: &mut Self, pending: &mut std::collections::VecDeque<Job>, keep: usize, chunks: &mut Chunks| {
                while pending.len() > keep {
                    if let Some(job) = pending.pop_front() {
                        if let Some(text) = run.collect(pool, job, out)? {
                            chunks.recycle(text);
                        }
                    }
                }
                Ok::<(), Error>(())
            };
        loop {
            let chunk = chunks.next(first_line, replay::DEFAULT_CHUNK_BYTES);
            // One worker reads a bad line before it applies the chunk it is in: that chunk is
            // never applied, and the chunks before it decide first.
            if let Some(e) = chunk.error {
                drain(self, &mut pending, 0, &mut chunks)?;
                return Err(e);
            }
            let full = chunk.text.len() >= replay::DEFAULT_CHUNK_BYTES;
            if !chunk.text.is_empty() {
                let number = line_number(first_line)?;
                let Some(routed) = self.split(chunk.text, number) else {
                    drain(self, &mut pending, 0, &mut chunks)?;
                    // Read again: the chunk is whole lines, as one gateway will read it.
                    return Ok(Parallel::Single { first_line });
                };
                pending.push_back(pool.send(routed));
                drain(self, &mut pending, work::IN_FLIGHT, &mut chunks)?;
            }
            first_line += chunk.lines;
            if !full {
                drain(self, &mut pending, 0, &mut chunks)?;
                out.flush().map_err(|source| Error::io("writing the decisions", source))?;
                return Ok(Parallel::Done(first_line - 1));
            }
        }
    }

    /// Routes every line of a chunk, or `None` if the chunk must run on one gateway.
    fn split(&mut self, text: String, first_line: u32) -> Option<Chunk> {
        let lines = text.len() / 128 + 16;
        let (mut ends, mut owners) = (Vec::with_capacity(lines), Vec::with_capacity(lines));
        let mut start = 0;
        while start < text.len() {
            let end = memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i + 1);
            let line = &text[start..end];
            start = end;
            let body = line.strip_suffix('\n').unwrap_or(line);
            let owner = match route::route(body) {
                Route::Unreadable => return None,
                Route::Blank => work::NOBODY,
                Route::Global => self.global,
                Route::Session(s) => match self.sessions.get(&*s) {
                    Some(w) => *w,
                    None => {
                        let w = least_loaded(&self.load);
                        self.sessions.insert(s.into_owned().into_boxed_str(), w);
                        w
                    }
                },
            };
            if let Some(load) = self.load.get_mut(usize::from(owner)) {
                *load += line.len() as u64;
            }
            ends.push(u32::try_from(end).ok()?);
            owners.push(owner);
        }
        // Past the sessions the policy keeps, one gateway would evict and the workers would not.
        let needed = self.sessions.len();
        if needed > self.known_sessions {
            let probe = needed.max(FIRST_PROBE).next_power_of_two();
            if !keeps_sessions(self.policy, self.config, probe) {
                return None;
            }
            self.known_sessions = probe;
        }
        Some(Chunk { text, first_line, ends, owners })
    }

    /// Waits for every part of `job`, then writes its decisions or returns its error. Gives the
    /// chunk's buffer back when no worker holds it any more.
    fn collect(&mut self, pool: &Pool, mut job: Job, out: &mut dyn Write) -> Result<Option<String>> {
        let (decided, errors) = pool.collect(&mut job);
        if !errors.is_empty() {
            return Err(self.chunk_error(&job, errors));
        }
        work::merge(&decided, &mut self.merged);
        out.write_all(self.merged.as_bytes()).map_err(|source| Error::io("writing the decisions", source))?;
        Ok(std::sync::Arc::try_unwrap(job.chunk).ok().map(|c| c.text))
    }

    /// The error one worker would have met on this chunk: a bad line found by checking the whole
    /// chunk on a scratch instance, else the first worker's error.
    fn chunk_error(&self, job: &Job, mut errors: Vec<Error>) -> Error {
        let first_line = job.chunk.first_line;
        let mut text = job.chunk.text.clone();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let sentinel = u64::from(first_line) + text.bytes().filter(|b| *b == b'\n').count() as u64;
        // A line that cannot be an event, after all the others: if it is the one named, every
        // line of the chunk passed the check (and nothing is applied either way).
        text.push_str("{}\n");
        let checked = self.policy.gateway(self.config).and_then(|mut g| g.apply_events(&text, first_line));
        match checked {
            Err(e @ Error::Policy { .. }) if !names_line(&e, sentinel) => e,
            _ => errors.remove(0),
        }
    }

    /// Goes on with one gateway: replays the trace up to `chunk` again (decisions dropped), then
    /// the chunk and the rest of the trace.
    fn single(
        &self,
        reopen: Reopen<'_>,
        first_line: u64,
        out: &mut dyn Write,
    ) -> (Result<u64>, Option<SwappableGateway>) {
        let gateway = match SwappableGateway::new(self.policy.clone(), self.config, self.supervision) {
            Ok(g) => g,
            Err(e) => return (Err(e), None),
        };
        let result = (|| {
            let mut again = reopen().map_err(|source| Error::io("reading the trace again", source))?;
            let (mut sink, before) = (&gateway, first_line - 1);
            let chunk_bytes = replay::DEFAULT_CHUNK_BYTES;
            replay::stream_until(&mut sink, &mut *again, &mut std::io::sink(), chunk_bytes, 0, before)?;
            let lines = replay::stream_until(&mut sink, &mut *again, out, chunk_bytes, before, u64::MAX)?;
            Ok(before + lines)
        })();
        (result, Some(gateway))
    }
}

/// The worker for a new session: the one given the fewest trace bytes so far (the first of them
/// on a tie), so that the order of the trace alone decides it.
///
/// Why not a hash of the session: a session's share of the work is unknown when it starts, but
/// the running totals are known, and keeping them level leaves the workers closer to an even
/// split. On the bench's tool trace (400 sessions of 96 to 1,063 lines) the busier of two workers
/// got 51.2 % of the bytes with a hash and 50.4 % this way: with two workers the wall time is the
/// busier one's.
fn least_loaded(load: &[u64]) -> u8 {
    let least = load.iter().enumerate().min_by_key(|(w, bytes)| (**bytes, *w));
    least.map_or(0, |(w, _)| w as u8)
}

/// True if `e` is about trace line `line`.
fn names_line(e: &Error, line: u64) -> bool {
    match e {
        Error::Policy { path, .. } => {
            let name = format!("line {line}");
            path == &name || path.starts_with(&format!("{name}:"))
        }
        _ => false,
    }
}

/// True if one gateway of `policy` under `config` keeps `sessions` sessions without evicting
/// any, asked of a scratch instance (the cap is the policy's and the config's business).
pub fn keeps_sessions(policy: &Policy, config: &str, sessions: usize) -> bool {
    let Ok(mut gateway) = policy.gateway(config) else { return false };
    let mut batch = String::with_capacity(64 * sessions.min(1 << 16));
    let mut made = 0;
    while made < sessions {
        batch.clear();
        let end = sessions.min(made + (1 << 16));
        for i in made..end {
            batch.push_str(&format!("{{\"kind\":\"compaction\",\"session\":\"\\u0001loopguard-probe-{i}\"}}\n"));
        }
        if gateway.apply_events(&batch, 1).is_err() {
            return false;
        }
        made = end;
    }
    gateway.stats().is_ok_and(|s| s.sessions as usize == sessions && s.evicted_sessions == 0)
}

#[cfg(test)]
mod tests {
    use super::least_loaded;

    #[test]
    fn a_new_session_goes_to_the_worker_given_the_fewest_bytes() {
        assert_eq!(least_loaded(&[500, 120, 340]), 1);
        assert_eq!(least_loaded(&[120, 500, 120]), 0, "the first on a tie");
        assert_eq!(least_loaded(&[0, 0]), 0);
    }
}
