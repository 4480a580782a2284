//! The hook's config: read from its file (JSON5 too) and filled with the agent-facing hosts'
//! defaults (`loopguard_host::agent_config`, whose own tests cover the filling rules).

use serde_json::{json, Value};

use super::{config, read_event, HookArgs, Host};
use crate::options::PolicyArgs;

#[test]
fn a_json5_config_file_is_read_and_filled() {
    let dir = std::env::temp_dir().join(format!("loopguard-hook-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.json5");
    std::fs::write(&path, "// mine\n{tools: {loopDetection: {criticalThreshold: 12}}}").unwrap();
    let args = HookArgs {
        host: Host::ClaudeCode,
        event: None,
        state_dir: None,
        policy: PolicyArgs { config: Some(path.clone()), ..PolicyArgs::default() },
        timeout_ms: None,
        max_sessions: 1,
        max_state_bytes: 1,
        expire_hours: 1,
    };
    let (name, text) = config(&args, &dir).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(name, path.display().to_string());
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["tools"]["loopDetection"], json!({"criticalThreshold": 12, "enabled": true}));
    assert_eq!(doc["loopguard"], json!({"preset": "cautious"}));
}

#[test]
fn one_event_is_read_without_waiting_for_the_end_of_stdin() {
    // A reader that fails after the event: the hook must not read past it (Qwen Code keeps stdin open).
    struct Open(std::io::Cursor<Vec<u8>>);
    impl std::io::Read for Open {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self.0.read(buf)? {
                0 => Err(std::io::Error::other("stdin is still open")),
                n => Ok(n),
            }
        }
    }
    let event = Open(std::io::Cursor::new(b"\xEF\xBB\xBF{\"session_id\":\"s\"}\n".to_vec()));
    assert_eq!(read_event(event).unwrap(), json!({"session_id": "s"}));
    assert!(read_event(&b""[..]).unwrap_err().contains("empty"));
    assert!(read_event(&b"{nope"[..]).unwrap_err().contains("not JSON"));
}
