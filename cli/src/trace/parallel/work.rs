//! The workers of a parallel replay, fed parts of chunks in trace order, and the merge of their
//! decisions by line number.
//!
//! Worker 0 runs on the calling thread, which also reads, routes and merges: the others are one
//! thread each, fed through bounded queues. Why not a thread for every worker: with `--jobs 2` on
//! two cores, a third thread (the router) kept waking up on a core a worker was using, and
//! `replay --jobs 2` of the bench's tool trace took 269 ms against 244 ms with worker 0 inline
//! (medians of 11 alternating runs, 2026-12-05; `--jobs 1` 419 ms).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::Scope;

use loopguard_host::SwappableGateway;
use loopguard_host::{Error, Result};

/// Chunks sent ahead of the one being written: enough that no worker waits for another.
pub(super) const IN_FLIGHT: usize = 4;

/// One chunk of the trace and where its lines go, shared by the workers: each copies its own
/// lines out of it.
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
    /// numbers the lines as the trace does. Runs of lines with one owner are copied at once.
    fn part(&self, me: u8, out: &mut String) {
        out.clear();
        let mut start = 0;
        let mut lines = self.ends.iter().zip(&self.owners).peekable();
        while let Some((end, owner)) = lines.next() {
            let mut end = *end as usize;
            let mine = *owner == me;
            let mut run = 1;
            while let Some((next_end, _)) = lines.next_if(|(_, next)| (**next == me) == mine) {
                end = *next_end as usize;
                run += 1;
            }
            if mine {
                out.push_str(&self.text[start..end]);
            } else {
                out.extend(std::iter::repeat_n('\n', run));
            }
            start = end;
        }
    }
}

/// A chunk in flight, which workers got a part of it, and worker 0's decisions (made when it was
/// sent).
pub(super) struct Job {
    pub chunk: Arc<Chunk>,
    sent: Vec<bool>,
    inline: Option<Result<Decided>>,
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
            let end = memchr::memchr(b'\n', &text.as_bytes()[at..]).map_or(text.len(), |i| at + i + 1);
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

/// Worker 0 (on the calling thread), the other workers' threads and their queues.
pub(super) struct Pool<'env> {
    first: &'env SwappableGateway,
    /// Worker 0's part of a chunk (one buffer for all).
    first_part: RefCell<String>,
    /// The queues of workers 1, 2, ….
    parts: Vec<SyncSender<Arc<Chunk>>>,
    results: Vec<Receiver<Result<Decided>>>,
    stop: Arc<AtomicBool>,
}

impl<'env> Pool<'env> {
    /// Worker 0 on `gateways[0]`, and one thread inside `scope` for each other gateway.
    pub(super) fn start<'scope>(scope: &'scope Scope<'scope, 'env>, gateways: &'env [SwappableGateway]) -> Pool<'env> {
        let stop = Arc::new(AtomicBool::new(false));
        let (mut parts, mut results) = (Vec::new(), Vec::new());
        for (me, gateway) in gateways.iter().enumerate().skip(1) {
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
        Pool { first: &gateways[0], first_part: RefCell::default(), parts, results, stop }
    }

    /// Workers, worker 0 included.
    fn workers(&self) -> usize {
        self.parts.len() + 1
    }

    /// Sends the chunk to the workers that own a line of it (the others get nothing), then
    /// decides worker 0's part on this thread.
    pub(super) fn send(&self, chunk: Chunk) -> Job {
        let mut sent = vec![false; self.workers()];
        for owner in &chunk.owners {
            if let Some(s) = sent.get_mut(usize::from(*owner)) {
                *s = true;
            }
        }
        let chunk = Arc::new(chunk);
        for (queue, owns) in self.parts.iter().zip(&sent[1..]) {
            if *owns {
                // A worker that stopped has its result channel closed too: `collect` reports it.
                let _ = queue.send(chunk.clone());
            }
        }
        let inline = sent[0].then(|| {
            let mut part = self.first_part.borrow_mut();
            chunk.part(0, &mut part);
            self.first.apply_events(&part, chunk.first_line).map(Decided::new)
        });
        Job { chunk, sent, inline }
    }

    /// Waits for every part of `job`: the decisions, and the errors in worker order.
    pub(super) fn collect(&self, job: &mut Job) -> (Vec<Decided>, Vec<Error>) {
        let (mut decided, mut errors) = (Vec::new(), Vec::new());
        for (w, sent) in job.sent.iter().enumerate() {
            if !*sent {
                continue;
            }
            let result = match w.checked_sub(1) {
                None => job.inline.take(),
                Some(queue) => self.results[queue].recv().ok(),
            };
            match result {
                Some(Ok(d)) => decided.push(d),
                Some(Err(e)) => errors.push(e),
                None => errors.push(Error::Trap { message: format!("replay worker {w} stopped") }),
            }
        }
        (decided, errors)
    }

    /// Stops the worker threads (they finish the part at hand and exit).
    pub(super) fn stop(self) {
        self.stop.store(true, Ordering::Release);
        drop(self.parts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_keeps_its_lines_and_leaves_the_others_empty() {
        let text = "a\nb\nc\n\t\nd\ne".to_string();
        let ends = vec![2, 4, 6, 8, 10, 11];
        let chunk = Chunk { text, first_line: 1, ends, owners: vec![0, 0, 1, NOBODY, 0, 1] };
        let mut part = String::from("stale");
        chunk.part(0, &mut part);
        assert_eq!(part, "a\nb\n\n\nd\n\n");
        chunk.part(1, &mut part);
        assert_eq!(part, "\n\nc\n\n\ne");
        chunk.part(2, &mut part);
        assert_eq!(part, "\n".repeat(6));
    }

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
