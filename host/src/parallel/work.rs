//! The workers of a parallel replay: one thread and one gateway each, fed parts of chunks in
//! trace order through bounded queues, and the merge of their decisions by line number.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::Scope;

use crate::error::{Error, Result};
use crate::swap::SwappableGateway;

/// Chunks sent ahead of the one being written: enough that no worker waits for another.
pub(super) const IN_FLIGHT: usize = 4;

/// One chunk of the trace and where its lines go, shared by the workers: each copies its own
/// lines out of it (in parallel), the main thread only routes.
pub(super) struct Chunk {
    /// The chunk's text: whole lines, valid UTF-8.
    pub text: String,
    /// The trace line number of its first line.
    pub first_line: u32,
    /// The end offset (after its `\n`) of each line.
    pub ends: Vec<u32>,
    /// The worker of each line ([`NOBODY`] for a blank line).
    pub owners: Vec<u8>,
}

/// The owner of a line that no worker needs (blank).
pub(super) const NOBODY: u8 = u8::MAX;

/// Most workers (a line's owner is a byte).
pub(super) const MAX_WORKERS: usize = 64;

impl Chunk {
    /// Worker `me`'s part, into `out`: its lines, every other line left empty so that the policy
    /// numbers the lines as the trace does.
    fn part(&self, me: u8, out: &mut String) {
        out.clear();
        let mut start = 0;
        for (end, owner) in self.ends.iter().zip(&self.owners) {
            let end = *end as usize;
            if *owner == me {
                out.push_str(&self.text[start..end]);
            } else {
                out.push('\n');
            }
            start = end;
        }
    }
}

/// A chunk in flight, and which workers got a part of it.
pub(super) struct Job {
    pub chunk: Arc<Chunk>,
    sent: Vec<bool>,
}

/// One worker's decisions for its part of a chunk, with the trace line and end offset of each.
pub(super) struct Decided {
    text: String,
    index: Vec<(u32, usize)>,
}

impl Decided {
    fn new(text: String) -> Self {
        let mut index = Vec::with_capacity(text.len() / 64 + 1);
        let (mut at, mut line) = (0, 0u32);
        while at < text.len() {
            let end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
            line = number(&text[at..end]).unwrap_or(line);
            index.push((line, end));
            at = end;
        }
        Decided { text, index }
    }
}

/// The `line` of a decision line (`{"line":N,…`).
fn number(decision: &str) -> Option<u32> {
    let rest = decision.strip_prefix("{\"line\":")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest[..digits].parse().ok()
}

/// The decisions of every worker's part of a chunk, in trace-line order, into `out`.
pub(super) fn merge(parts: &[Decided], out: &mut String) {
    out.clear();
    let mut next: Vec<(usize, usize)> = vec![(0, 0); parts.len()]; // (index position, byte offset)
    loop {
        let mut best: Option<(u32, usize)> = None;
        for (w, p) in parts.iter().enumerate() {
            if let Some(&(line, _)) = p.index.get(next[w].0) {
                if best.is_none_or(|(l, _)| line < l) {
                    best = Some((line, w));
                }
            }
        }
        let Some((line, w)) = best else { return };
        // Every decision of this worker for the same line (a line has one, but keep them together).
        let p = &parts[w];
        let (mut i, start) = next[w];
        while let Some(&(l, end)) = p.index.get(i) {
            if l != line {
                break;
            }
            i += 1;
            next[w] = (i, end);
        }
        out.push_str(&p.text[start..next[w].1]);
    }
}

/// The worker threads and their queues.
pub(super) struct Pool {
    parts: Vec<SyncSender<Arc<Chunk>>>,
    results: Vec<Receiver<Result<Decided>>>,
    stop: Arc<AtomicBool>,
}

impl Pool {
    /// One thread per gateway, inside `scope`.
    pub(super) fn start<'scope, 'env>(scope: &'scope Scope<'scope, 'env>, gateways: &'env [SwappableGateway]) -> Pool {
        let stop = Arc::new(AtomicBool::new(false));
        let (mut parts, mut results) = (Vec::new(), Vec::new());
        for (me, gateway) in gateways.iter().enumerate() {
            let me = u8::try_from(me).unwrap_or(NOBODY);
            let (part_tx, part_rx) = sync_channel::<Arc<Chunk>>(IN_FLIGHT);
            let (result_tx, result_rx) = channel();
            let stop = stop.clone();
            scope.spawn(move || {
                let mut part = String::new();
                for chunk in part_rx {
                    if stop.load(Ordering::Acquire) {
                        return;
                    }
                    chunk.part(me, &mut part);
                    let first_line = chunk.first_line;
                    // The chunk's buffer goes back to the reader as soon as every worker is done.
                    drop(chunk);
                    let decided = gateway.apply_events(&part, first_line).map(Decided::new);
                    if result_tx.send(decided).is_err() {
                        return;
                    }
                }
            });
            parts.push(part_tx);
            results.push(result_rx);
        }
        Pool { parts, results, stop }
    }

    /// Sends the chunk to the workers that own a line of it (the others get nothing).
    pub(super) fn send(&self, chunk: Chunk) -> Job {
        let mut sent = vec![false; self.parts.len()];
        for owner in &chunk.owners {
            if let Some(s) = sent.get_mut(usize::from(*owner)) {
                *s = true;
            }
        }
        let chunk = Arc::new(chunk);
        for (w, owns) in sent.iter().enumerate() {
            if *owns {
                // A worker that stopped has its result channel closed too: `collect` reports it.
                let _ = self.parts[w].send(chunk.clone());
            }
        }
        Job { chunk, sent }
    }

    /// Waits for every part of `job`: the decisions, and the errors in worker order.
    pub(super) fn collect(&self, job: &Job) -> (Vec<Decided>, Vec<Error>) {
        let (mut decided, mut errors) = (Vec::new(), Vec::new());
        for (w, sent) in job.sent.iter().enumerate() {
            if !*sent {
                continue;
            }
            match self.results[w].recv() {
                Ok(Ok(d)) => decided.push(d),
                Ok(Err(e)) => errors.push(e),
                Err(_) => errors.push(Error::Trap { message: format!("replay worker {w} stopped") }),
            }
        }
        (decided, errors)
    }

    /// Stops the workers (they finish the part at hand and exit).
    pub(super) fn stop(self) {
        self.stop.store(true, Ordering::Release);
        drop(self.parts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_orders_decisions_by_line() {
        let a = Decided::new("{\"line\":1,\"a\":1}\n{\"line\":4,\"a\":4}\n".into());
        let b = Decided::new("{\"line\":2,\"b\":2}\n{\"line\":3,\"b\":3}\n{\"line\":9,\"b\":9}\n".into());
        let mut merged = String::from("stale");
        merge(&[a, b], &mut merged);
        let lines: Vec<u32> = merged.lines().filter_map(number).collect();
        assert_eq!(lines, [1, 2, 3, 4, 9]);
        merge(&[Decided::new(String::new())], &mut merged);
        assert_eq!(merged, "");
    }
}
