//! The built component is valid and implements exactly the interfaces in `wit/`.

use std::collections::BTreeMap;

use loopguard_tests::{policy_wasm, require_tool, workspace_root, Run};

fn wasm_tools(args: &[&std::ffi::OsStr]) -> String {
    Run::new(&require_tool("wasm-tools"), args, None).success().stdout()
}

#[test]
fn component_validates() {
    wasm_tools(&["validate".as_ref(), policy_wasm().as_os_str()]);
}

/// The interfaces of the `loopguard:policy` package in `wasm-tools component wit` output, by name,
/// each body with indentation, blank lines and comments removed (a component keeps no docs).
/// Handles both the single-package form (`package p;` then items) and the nested form
/// (`package p { … }`) that a component's output uses.
fn policy_interfaces(wit: &str) -> BTreeMap<String, String> {
    let (mut package, mut depth) = (String::new(), 0i32);
    let mut current: Option<(String, String, i32)> = None;
    let mut found = BTreeMap::new();
    for line in wit.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        if depth == 0 {
            if let Some(name) = line.strip_prefix("package ") {
                package = name.trim_end_matches([';', '{', ' ']).to_string();
            }
        }
        let opens_interface = current.is_none()
            && package.starts_with("loopguard:policy@")
            && line.starts_with("interface ")
            && line.ends_with('{');
        if opens_interface {
            let name = line["interface ".len()..line.len() - 1].trim().to_string();
            current = Some((name, String::new(), depth));
        } else if let Some((_, body, _)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
        depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
        if let Some((name, body, at)) = current.take() {
            if depth == at {
                let body = body.strip_suffix("}\n").unwrap_or(&body).to_string();
                found.insert(name, body);
            } else {
                current = Some((name, body, at));
            }
        }
    }
    found
}

#[test]
fn component_implements_the_wit_interfaces() {
    let from_source = wasm_tools(&["component".as_ref(), "wit".as_ref(), workspace_root().join("wit").as_os_str()]);
    let from_wasm = wasm_tools(&["component".as_ref(), "wit".as_ref(), policy_wasm().as_os_str()]);
    let (source, wasm) = (policy_interfaces(&from_source), policy_interfaces(&from_wasm));
    assert!(
        source.contains_key("types") && source.contains_key("guard"),
        "wit/ must define interfaces `types` and `guard`; found {:?}",
        source.keys()
    );
    for (name, body) in &source {
        assert_eq!(Some(body), wasm.get(name), "interface `{name}` of the component differs from wit/");
    }
    // The world is renamed `root` in a component; its exports must all be there.
    let version = loopguard_host::INTERFACE_VERSION;
    for export in [
        "export version: func() -> string;".to_string(),
        "export interface-version: func() -> string;".to_string(),
        "export replay: func(config: string, trace: string) -> result<string, policy-error>;".to_string(),
        format!("export loopguard:policy/guard@{version};"),
    ] {
        assert!(from_wasm.contains(&export), "the component does not `{export}`:\n{from_wasm}");
    }
}

#[test]
fn interface_parser_sees_a_difference() {
    let a = "package loopguard:policy@1.0.0;\ninterface types {\n  record r {\n    a: u32,\n  }\n}\n";
    let b = "package root:component;\nworld root {}\npackage loopguard:policy@1.0.0 {\n  interface types {\n    record r {\n      a: u64,\n    }\n  }\n}\npackage wasi:x@1.0.0 {\n  interface types {\n  }\n}\n";
    let (pa, pb) = (policy_interfaces(a), policy_interfaces(b));
    assert_eq!(pa["types"], "record r {\na: u32,\n}\n");
    assert_eq!(pb["types"], "record r {\na: u64,\n}\n");
}
