//! Metrics an operator scrapes: what the guard decided, how long it took, what the supervisor and
//! the store had to do. Names, labels and meanings are one table for every host, docs/METRICS.md.
//!
//! Why here and not counted per command: every long-running host of the CLI (the MCP proxy over
//! HTTP and stdio, `replay -`) answers the same questions, and an operator's dashboard must not
//! care which one it scrapes. The counts the library already keeps (the supervisor's
//! [`loopguard_host::Health`], the store loop's [`loopguard_host::store::StoreStats`]) are read
//! at scrape time, never counted a second time.
//!
//! Bounded labels: a label value is one of a fixed list ([`DETECTORS`], [`ACTIONS`], [`KINDS`]);
//! a word the policy says that is not on the list (a newer policy's detector) is `other`. No
//! session, tool or argument is ever a label, so the number of series has a fixed ceiling.
//!
//! The text is OpenMetrics, written by `prometheus-client` (the Prometheus project's crate) rather
//! than by hand: escaping, `_total` suffixes, histogram buckets and `# EOF` are its job.

pub mod lines;
pub mod serve;

use std::sync::Arc;
use std::time::Duration;

use loopguard_host::{Health, OutcomeVerdict, ToolAction, ToolVerdict};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

pub use loopguard_host::metrics::{bounded, ACTIONS, DETECTORS, KINDS, LATENCY_BUCKETS};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Decision {
    host: &'static str,
    kind: &'static str,
    action: &'static str,
    detector: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Timed {
    host: &'static str,
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Host {
    host: &'static str,
}

type Latency = Family<Timed, Histogram, fn() -> Histogram>;

/// The metrics of one host process.
#[derive(Debug)]
pub struct Metrics {
    host: &'static str,
    registry: Registry,
    decisions: Family<Decision, Counter>,
    latency: Latency,
}

impl Metrics {
    /// Empty metrics for `host` (the `host` label: `mcp`, `replay`).
    pub fn new(host: &'static str) -> Self {
        let mut registry = Registry::default();
        let decisions = Family::<Decision, Counter>::default();
        registry.register("loopguard_decisions", "Decisions by host, kind, action and detector", decisions.clone());
        let latency: Latency = Family::new_with_constructor(|| Histogram::new(LATENCY_BUCKETS));
        registry.register_with_unit(
            "loopguard_decision_duration",
            "Time to a decision, as the host waited for it",
            Unit::Seconds,
            latency.clone(),
        );
        Metrics { host, registry, decisions, latency }
    }

    /// Counts one decision (its words as the policy said them) and, when timed, its latency.
    pub fn decided(&self, kind: &str, action: &str, detector: Option<&str>, took: Option<Duration>) {
        let kind = bounded(kind, &KINDS);
        let detector = detector.map_or("none", |d| bounded(d, &DETECTORS));
        let labels = Decision { host: self.host, kind, action: bounded(action, &ACTIONS), detector };
        self.decisions.get_or_create(&labels).inc();
        if let Some(took) = took {
            self.latency.get_or_create(&Timed { host: self.host, kind }).observe(took.as_secs_f64());
        }
    }

    /// A tool call's verdict.
    pub fn tool_call(&self, verdict: &ToolVerdict, took: Duration) {
        let action = match verdict.action {
            ToolAction::Allow => "allow",
            ToolAction::Warn => "warn",
            ToolAction::Block => "block",
        };
        self.decided("tool_call", action, verdict.detector.as_deref(), Some(took));
    }

    /// A tool outcome's verdict.
    pub fn tool_result(&self, verdict: &OutcomeVerdict, took: Duration) {
        let (action, detector) = match verdict {
            OutcomeVerdict::Recorded => ("recorded", None),
            OutcomeVerdict::Ignored => ("ignored", None),
            OutcomeVerdict::Abort(info) => ("abort", Some(info.detector.as_str())),
        };
        self.decided("tool_result", action, detector, Some(took));
    }

    /// Reads the supervisor's counters from `source` at every scrape. Held weakly: the metrics
    /// must not keep a gateway alive, and a gateway gone reads as no series.
    pub fn watch_policy<T: Send + Sync + 'static>(&mut self, source: &Arc<T>, health: fn(&T) -> Health) {
        let read = {
            let source = Arc::downgrade(source);
            Box::new(move || source.upgrade().map(|s| health(&s))) as Box<dyn Fn() -> Option<Health> + Send + Sync>
        };
        self.registry.register_collector(Box::new(PolicyWatch { host: self.host, read }));
    }

    /// The OpenMetrics text of every series, in the same order for the same counts.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        in_order(&text)
    }
}

/// `text` with each family's series sorted by their labels. `prometheus-client` keeps a family in a
/// hash map, so its series come out in an order that changes from run to run; a scraper does not
/// care, but the same counts must give the same bytes (a diff, a golden file). A series is one
/// sample line, or for a histogram its `_sum`, `_count` and bucket lines, which the crate writes
/// together, `_sum` first.
fn in_order(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut series: Vec<Vec<&str>> = Vec::new();
    let flush = |series: &mut Vec<Vec<&str>>, out: &mut String| {
        series.sort_by(|a, b| a[0].cmp(b[0]));
        for line in series.drain(..).flatten() {
            out.push_str(line);
            out.push('\n');
        }
    };
    for line in text.lines() {
        if line.starts_with('#') {
            flush(&mut series, &mut out);
            out.push_str(line);
            out.push('\n');
        } else if line.contains("_bucket{") || line.contains("_count{") {
            match series.last_mut() {
                Some(group) => group.push(line),
                None => series.push(vec![line]),
            }
        } else {
            series.push(vec![line]);
        }
    }
    flush(&mut series, &mut out);
    out
}

/// The supervisor's counters, as counters named in docs/METRICS.md.
struct PolicyWatch {
    host: &'static str,
    read: Box<dyn Fn() -> Option<Health> + Send + Sync>,
}

impl std::fmt::Debug for PolicyWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyWatch").field("host", &self.host).finish_non_exhaustive()
    }
}

impl Collector for PolicyWatch {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(h) = (self.read)() else { return Ok(()) };
        let host = Host { host: self.host };
        for (name, help, value) in [
            ("loopguard_policy_swaps", "Policy versions swapped in", h.swaps),
            ("loopguard_policy_traps", "Policy calls that trapped or ran out of memory", h.traps + h.oom),
            ("loopguard_policy_timeouts", "Policy calls stopped at their deadline", h.timeouts),
            ("loopguard_policy_recoveries", "Broken policy instances replaced", h.recoveries),
        ] {
            let counter = ConstCounter::new(value);
            let mut family = encoder.encode_descriptor(name, help, None, counter.metric_type())?;
            counter.encode(family.encode_family(&host)?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_off_the_lists_is_other_so_the_series_stay_bounded() {
        let m = Metrics::new("mcp");
        for i in 0..1000 {
            m.decided("tool_call", "block", Some(&format!("new_detector_{i}")), None);
            m.decided(&format!("kind_{i}"), &format!("action_{i}"), Some("ping_pong"), None);
        }
        m.decided("tool_call", "warn", Some("ping_pong"), None);
        m.decided("tool_result", "recorded", None, Some(Duration::from_micros(30)));
        m.decided("tool_call", "allow", None, Some(Duration::from_micros(30)));
        let text = m.encode();
        // Sorted by labels, whatever the hash map's order; a histogram's lines stay together.
        let histogram: Vec<&str> = text.lines().filter(|l| l.starts_with("loopguard_decision_duration")).collect();
        assert!(histogram[0].starts_with(r#"loopguard_decision_duration_seconds_sum{host="mcp",kind="tool_call"}"#));
        assert!(histogram[15].starts_with(r#"loopguard_decision_duration_seconds_sum{host="mcp",kind="tool_result"}"#));
        assert_eq!(text, m.encode());
        let series: Vec<&str> = text.lines().filter(|l| l.starts_with("loopguard_decisions_total")).collect();
        assert_eq!(
            series,
            [
                r#"loopguard_decisions_total{host="mcp",kind="other",action="other",detector="ping_pong"} 1000"#,
                r#"loopguard_decisions_total{host="mcp",kind="tool_call",action="allow",detector="none"} 1"#,
                r#"loopguard_decisions_total{host="mcp",kind="tool_call",action="block",detector="other"} 1000"#,
                r#"loopguard_decisions_total{host="mcp",kind="tool_call",action="warn",detector="ping_pong"} 1"#,
                r#"loopguard_decisions_total{host="mcp",kind="tool_result",action="recorded",detector="none"} 1"#,
            ],
            "{text}"
        );
    }
}
