//! The README's Rust quick start, runnable: an agent polls `make test` and gets the same failing
//! output every time. The embedded default policy warns once 10 identical calls are on record
//! (call 11) and blocks once 20 identical outcomes are (call 21), with the text a gateway hands
//! to the model.
//!
//!     cargo run -p loopguard-host --example quickstart

use loopguard_host::{OutcomeVerdict, Policy, ToolAction, ToolCall, ToolOutcome};

fn main() -> loopguard_host::Result<()> {
    let policy = Policy::embedded()?;
    let mut gw = policy.gateway(r#"{"tools":{"loopDetection":{"enabled":true}}}"#)?;
    let call = ToolCall {
        session: "agent:main:s1".into(),
        tool: "exec".into(),
        args_json: r#"{"command":"make test"}"#.into(),
        run: Some("r1".into()),
        agent: None,
        call_id: None,
    };
    let failed = ToolOutcome::Returned(r#"{"content":[{"type":"text","text":"1 test FAILED"}]}"#.into());
    for n in 1..=25 {
        let v = gw.check_tool_call(&call)?;
        match v.action {
            ToolAction::Allow => {}
            ToolAction::Warn if v.notify => println!("call {n}: warn ({})", v.detector.unwrap_or_default()),
            ToolAction::Warn => {}
            ToolAction::Block => {
                println!("call {n}: block\n{}", v.message.unwrap_or_default());
                return Ok(());
            }
        }
        if let OutcomeVerdict::Abort(a) = gw.record_tool_outcome(&call, &failed)? {
            println!("call {n}: abort the run: {}", a.message);
            return Ok(());
        }
    }
    println!("no block in 25 calls");
    Ok(())
}
