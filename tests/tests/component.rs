//! The built component is valid and exports exactly the interface in `wit/policy.wit`.

use loopguard_tests::{policy_wasm, require_tool, workspace_root, Run};

#[test]
fn component_validates() {
    let tools = require_tool("wasm-tools");
    Run::new(
        &tools,
        [
            "validate".as_ref(),
            "--features".as_ref(),
            "component-model".as_ref(),
            policy_wasm().as_os_str(),
        ],
        None,
    )
    .success();
}

/// The `package loopguard:policy@…` block of `wasm-tools component wit` output, without doc
/// comments and blank lines (a component keeps no docs), so the WIT source and the component
/// compare equal exactly when their interfaces are the same.
fn policy_package(wit: &str) -> String {
    let lines: Vec<&str> = wit.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("package loopguard:policy@"))
        .unwrap_or_else(|| panic!("no loopguard:policy package in:\n{wit}"));
    let mut out = String::new();
    let nested = lines[start].trim_end().ends_with('{');
    for line in &lines[start + 1..] {
        let t = line.trim();
        if nested && *line == "}" {
            break;
        }
        if t.is_empty() || t.starts_with("///") || t.starts_with("//") {
            continue;
        }
        out.push_str(t);
        out.push('\n');
    }
    out
}

#[test]
fn component_exports_the_wit_interface() {
    let tools = require_tool("wasm-tools");
    let from_source = Run::new(
        &tools,
        [
            "component".as_ref(),
            "wit".as_ref(),
            workspace_root().join("wit").as_os_str(),
        ],
        None,
    )
    .success()
    .stdout();
    let from_wasm = Run::new(
        &tools,
        [
            "component".as_ref(),
            "wit".as_ref(),
            policy_wasm().as_os_str(),
        ],
        None,
    )
    .success()
    .stdout();
    let (source, wasm) = (policy_package(&from_source), policy_package(&from_wasm));
    // The world itself is renamed `root` in a component; its interfaces must match line for line.
    let interfaces = |pkg: &str| -> String {
        let mut keep = true;
        pkg.lines()
            .filter(|l| {
                if l.starts_with("world ") {
                    keep = false;
                }
                let k = keep;
                if !keep && *l == "}" {
                    keep = true;
                }
                k
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        interfaces(&source),
        interfaces(&wasm),
        "the component's interfaces differ from wit/policy.wit"
    );
    let guard = format!(
        "export loopguard:policy/guard@{};",
        loopguard_host::INTERFACE_VERSION
    );
    for export in [
        "export version: func() -> string;",
        "export interface-version: func() -> string;",
        guard.as_str(),
    ] {
        assert!(
            from_wasm.contains(export),
            "the component does not `{export}`:\n{from_wasm}"
        );
    }
}
