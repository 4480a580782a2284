//! The store loop on a clock and a store that the test drives: the store can be down, slow (it
//! takes the whole deadline and times out, as the Redis backend's command timeout does), lose
//! writes to another replica N times, or hold a value the policy cannot read; the clock moves
//! only when the test (or the store's latency) moves it, so every time below is exact.

mod fixture;

use log::Level;

use super::*;
use fixture::{fixture, ms, reports, with, Fault, DEADLINE};

fn action(d: &Decided) -> String {
    let line: serde_json::Value = serde_json::from_str(d.decision.as_deref().expect("a decision")).unwrap();
    line["action"].as_str().expect("an action").to_string()
}

#[test]
fn with_a_store_that_answers_every_decision_is_one_write_and_versions_grow() {
    let mut f = fixture(with(StoreFailure::Open));
    let decided: Vec<Decided> = (0..3).map(|_| f.decide()).collect();
    assert!(decided.iter().all(|d| (d.via, d.retries) == (Via::Store, 0)), "{decided:?}");
    let versions: Vec<u64> = decided.iter().map(|d| d.version).collect();
    assert!(versions[0] >= COUNTED_BELOW && versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
    assert_eq!(
        f.script.lock().unwrap().calls.iter().map(|c| c.1).collect::<Vec<_>>(),
        ["cas", "cas", "cas"],
        "a new key is written without a read; then at the version this replica wrote"
    );
    assert_eq!(f.gateway.stats(), StoreStats { on_store: 3, ..StoreStats::default() });
    assert!(reports().is_empty());
}

#[test]
fn a_key_another_replica_wrote_costs_one_conflict_then_is_written_at_the_version_it_returned() {
    let mut f = fixture(with(StoreFailure::Open));
    let first = f.decide();
    let theirs = f.event("c");
    let key = f.gateway.gateway().state_key(&theirs).unwrap();
    // Another replica decides two events of the key: this replica's remembered version is stale.
    f.script(|s| {
        let v = s.values.get(&key).unwrap();
        let Ok(Cas::Written(v2)) = s.values.cas(&key, v.version, &v.blob, Duration::from_secs(60)) else { panic!() };
        s.values.cas(&key, v2, &v.blob, Duration::from_secs(60)).unwrap();
    });
    let d = f.decide();
    assert_eq!((d.via, d.retries), (Via::Store, 1));
    assert!(d.version > first.version);
    let next = f.decide();
    assert_eq!((next.via, next.retries), (Via::Store, 0), "the conflict's value is remembered");
    assert_eq!(f.script.lock().unwrap().calls.iter().filter(|c| c.1 == "get").count(), 0, "never a read");
}

#[test]
fn a_key_that_expired_and_was_written_again_never_meets_a_remembered_version() {
    let mut f = fixture(with(StoreFailure::Open));
    let mine = f.decide();
    let key = mine.key.clone();
    // The key expires (or is evicted) and another replica writes it anew: versions do not start
    // over, so the stale remembered version conflicts instead of winning.
    f.script(|s| {
        s.values.forget(&key);
        let Ok(Cas::Written(v)) = s.values.cas(&key, 0, b"", Duration::from_secs(60)) else { panic!() };
        assert!(v > mine.version, "{v} after {}", mine.version);
    });
    let d = f.decide();
    assert_eq!((d.via, d.retries), (Via::Store, 1), "decided again on the other replica's state");
}

#[test]
fn a_version_counted_by_loopguard_1_0_is_never_remembered() {
    let mut f = fixture(with(StoreFailure::Open));
    let event = f.event("c");
    let key = f.gateway.gateway().state_key(&event).unwrap();
    // A 1.0 replica wrote the key at version 7 (an empty state will do).
    f.script(|s| s.values.remember(&key, Versioned { version: 7, blob: Vec::new() }, Duration::from_secs(60)));
    let d = f.decide();
    assert_eq!((d.via, d.retries), (Via::Store, 1), "a conflict at version 0, then written at 7");
    assert!(d.version >= COUNTED_BELOW, "the next version is the clock's: {}", d.version);
    f.script(|s| s.values.remember(&key, Versioned { version: 3, blob: Vec::new() }, Duration::from_secs(60)));
    let d = f.decide();
    assert_eq!(d.retries, 1, "a conflict: the 1.0 replica's version is not the one this replica wrote");
}

#[test]
fn a_store_that_keeps_failing_is_tried_at_once_then_after_5_20_80_ms_then_every_retry_after() {
    let mut f = fixture(with(StoreFailure::Open));
    f.script(|s| s.fault = Some(Fault::Down));
    for _ in 0..900 {
        assert_eq!(f.decide().via, Via::Local);
        f.clock.advance(ms(1));
    }
    // 250 ms is StoreOptions::retry_after's default: 80 ms × 4 would pass it.
    assert_eq!(f.tries(), [0, 1, 6, 26, 106, 356, 606, 856].map(ms));
    let s = f.gateway.stats();
    assert_eq!((s.on_local, s.store_errors, s.episodes, s.degraded), (900, 8, 1, true));
}

#[test]
fn a_store_back_up_is_found_at_its_next_try_and_not_before() {
    let mut f = fixture(with(StoreFailure::Open));
    f.script(|s| s.fault = Some(Fault::Down));
    for _ in 0..100 {
        f.decide();
        f.clock.advance(ms(1));
    }
    f.script(|s| s.fault = None);
    let mut vias = Vec::new();
    while vias.last() != Some(&Via::Store) {
        vias.push(f.decide().via);
        f.clock.advance(ms(1));
    }
    assert_eq!(vias.len(), 7, "local at 100..105 ms, the store tried again at 106 ms: {vias:?}");
}

#[test]
fn an_episode_is_reported_once_when_it_begins_and_once_when_the_store_answers() {
    let mut f = fixture(with(StoreFailure::Open));
    f.decide();
    f.script(|s| s.fault = Some(Fault::Down));
    for _ in 0..100 {
        f.decide();
        f.clock.advance(ms(1));
    }
    assert_eq!(
        reports(),
        [(
            Level::Warn,
            "scripted failed (store unreachable: connection refused); deciding on local state until it answers".into()
        )]
    );
    f.script(|s| s.fault = None);
    f.clock.advance(ms(10));
    assert_eq!(f.decide().via, Via::Store);
    assert_eq!(
        reports(),
        [(Level::Info, "scripted answers again after 0.1 s; 100 decisions were made without it".into())]
    );
    let s = f.gateway.stats();
    assert_eq!((s.episodes, s.degraded, s.local_keys), (1, false, 0), "the local state is dropped");

    f.script(|s| s.fault = Some(Fault::Down));
    f.decide();
    f.decide();
    assert_eq!(reports().len(), 1, "a second episode is reported again");
    assert_eq!(f.gateway.stats().episodes, 2);
}

#[test]
fn a_lone_failure_sends_one_decision_local_and_the_next_tries_the_store() {
    let mut f = fixture(with(StoreFailure::Open));
    f.script(|s| s.fault = Some(Fault::Slow));
    assert_eq!(f.decide().via, Via::Local);
    f.script(|s| s.fault = None);
    assert_eq!(f.decide().via, Via::Store, "no wait after one failure");
    let said = reports();
    assert_eq!(said.len(), 2, "{said:?}");
    assert_eq!(said[1].1, "scripted answers again after 0.0 s; 1 decisions were made without it");
}

#[test]
fn after_an_episode_the_stores_counts_are_the_truth_and_the_local_ones_are_forgotten() {
    let mut f = fixture(with(StoreFailure::Open));
    for _ in 0..10 {
        assert_eq!(f.decide().via, Via::Store);
    }
    f.script(|s| s.fault = Some(Fault::Down));
    for _ in 0..15 {
        let d = f.decide();
        assert_eq!((d.via, action(&d)), (Via::Local, "allow".into()), "the local count starts at 0");
    }
    f.script(|s| s.fault = None);
    f.clock.advance(ms(100));
    let after: Vec<Decided> = (0..11).map(|_| f.decide()).collect();
    assert!(after.iter().all(|d| d.via == Via::Store));
    let actions: Vec<String> = after.iter().map(action).collect();
    assert_eq!(actions, [vec!["allow"; 10], vec!["suppress"]].concat(), "the store's 10 and 10 more reach 20");
}

#[test]
fn a_decision_that_cannot_reach_the_store_within_the_deadline_is_made_on_local_state() {
    let mut f = fixture(with(StoreFailure::Open));
    f.script(|s| s.fault = Some(Fault::Slow));
    let d = f.decide();
    assert_eq!((d.via, action(&d).as_str()), (Via::Local, "allow"));
    let s = f.gateway.stats();
    assert_eq!((s.on_local, s.store_errors, s.episodes), (1, 1, 1));
}

#[test]
fn failing_closed_a_decision_that_cannot_reach_the_store_within_the_deadline_is_refused() {
    let mut f = fixture(with(StoreFailure::Closed));
    f.script(|s| s.fault = Some(Fault::Slow));
    let d = f.decide();
    assert_eq!((d.via, d.decision), (Via::Refused, None));
    let s = f.gateway.stats();
    assert_eq!((s.refused, s.on_local, s.store_errors, s.episodes), (1, 0, 1, 1));
    assert_eq!(
        reports(),
        [(
            Level::Warn,
            "scripted failed (store timed out: no answer); refusing decisions (fail closed) until it answers".into()
        )]
    );
}

#[test]
fn a_conflict_is_decided_again_on_the_value_the_other_writer_left() {
    let mut f = fixture(with(StoreFailure::Open));
    f.script(|s| s.conflicts = 1);
    let d = f.decide();
    assert_eq!((d.via, d.retries), (Via::Store, 1));
    let theirs = f.script.lock().unwrap().values.get(&d.key).unwrap().version;
    assert_eq!(d.version, theirs, "written after the other replica's version");
    assert_eq!(f.gateway.stats().cas_retries, 1);
    assert!(reports().is_empty());
}

#[test]
fn conflicts_are_retried_at_most_max_retries_times_then_the_decision_is_local_and_an_episode_begins() {
    let mut f = fixture(StoreOptions { max_retries: 3, ..with(StoreFailure::Open) });
    f.script(|s| s.conflicts = u32::MAX);
    let d = f.decide();
    assert_eq!(d.via, Via::Local);
    let calls: Vec<&str> = f.script.lock().unwrap().calls.iter().map(|c| c.1).collect();
    assert_eq!(calls, ["cas", "cas", "cas", "cas"], "the first write and 3 retries");
    let s = f.gateway.stats();
    assert_eq!((s.cas_retries, s.store_errors, s.episodes), (4, 1, 1), "the 4th conflict is counted, not retried");
    let said = reports();
    assert_eq!(said.len(), 1);
    assert!(said[0].1.starts_with("scripted failed (store timed out: 4 conflicting writes in "), "{said:?}");
}

#[test]
fn conflicts_stop_being_retried_once_the_deadline_has_passed() {
    let mut f = fixture(with(StoreFailure::Open));
    f.script(|s| {
        s.conflicts = u32::MAX;
        s.latency = ms(2);
    });
    assert_eq!(f.decide().via, Via::Local);
    let spent = f.clock.elapsed();
    // Each call takes 2 ms; the pauses between conflicts add at most 1 ms in all.
    assert!(spent > DEADLINE && spent <= DEADLINE + ms(2) + ms(1), "{spent:?}");
    assert!(f.gateway.stats().cas_retries < 15, "{:?}", f.gateway.stats());
}

#[test]
fn a_value_this_policy_cannot_read_is_decided_locally_counted_left_alone_and_starts_no_episode() {
    let mut f = fixture(with(StoreFailure::Open));
    let event = f.event("c");
    let key = f.gateway.gateway().state_key(&event).unwrap();
    let hello = Versioned { version: 1, blob: b"hello".to_vec() };
    f.script(|s| s.values.remember(&key, hello.clone(), Duration::from_secs(60)));
    let d = f.decide();
    assert_eq!((d.via, action(&d).as_str()), (Via::Local, "allow"));
    let s = f.gateway.stats();
    assert_eq!((s.unreadable, s.store_errors, s.episodes, s.degraded), (1, 0, 0, false));
    f.script(|s| assert_eq!(s.values.get(&key), Ok(hello)));
    let said = reports();
    assert_eq!(said.len(), 1);
    assert_eq!(said[0].0, Level::Warn);
    assert!(said[0].1.starts_with(&format!("scripted key {key}: store holds an unreadable value: ")), "{said:?}");
    assert!(said[0].1.ends_with("; this decision is made on local state"), "{said:?}");
    assert_eq!(f.decide_in("another").via, Via::Store, "other keys still go to the store");
}
