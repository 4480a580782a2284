//! `--set KEY=VALUE` overrides on a config document, for quick what-ifs without editing files.
//!
//! `KEY` is a dotted path (`tools.loopDetection.warningThreshold`); a segment that is a number
//! indexes an array when the value there is an array (`agents.list.0.tools.loopDetection.enabled`).
//! `VALUE` is JSON if it parses as JSON (`8`, `true`, `{"genericRepeat":false}`, `"8"`), else
//! the text itself as a string. Missing objects on the way are created. The document may be
//! JSON or JSON5 (as OpenClaw's config is); the result is JSON.

use std::fmt;

use serde_json::{Map, Value};

/// Why an override could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OverrideError {
    /// The config document is not JSON or JSON5.
    BadDocument(String),
    /// The document is not an object at the top.
    NotAnObject,
    /// An override is not of the form `KEY=VALUE`.
    MissingEquals(String),
    /// A path has an empty segment (`a..b`, a leading or trailing dot, or an empty key).
    EmptySegment(String),
    /// A path goes through a value that is neither an object nor an array.
    NotAContainer {
        /// The override's path.
        path: String,
        /// The part of it that holds a scalar.
        at: String,
        /// The scalar's JSON type.
        found: &'static str,
    },
    /// A path indexes an array with something that is not an index, or past its end.
    BadIndex {
        /// The override's path.
        path: String,
        /// The part of it that is the array.
        at: String,
        /// The segment.
        segment: String,
        /// The array's length.
        len: usize,
    },
}

impl fmt::Display for OverrideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OverrideError::BadDocument(e) => write!(f, "the config is neither JSON nor JSON5: {e}"),
            OverrideError::NotAnObject => write!(f, "the config must be an object at the top, like {{\"tools\":{{…}}}}"),
            OverrideError::MissingEquals(s) => write!(f, "--set {s}: expected KEY=VALUE, e.g. tools.loopDetection.warningThreshold=8"),
            OverrideError::EmptySegment(p) => write!(f, "--set {p}: a path segment is empty; write dotted keys like a.b.c"),
            OverrideError::NotAContainer { path, at, found } => {
                write!(f, "--set {path}: `{at}` is a {found}, not an object; set `{at}` itself or remove the rest of the path")
            }
            OverrideError::BadIndex { path, at, segment, len } => write!(
                f,
                "--set {path}: `{at}` is an array of {len}; `{segment}` is not an index in 0..={len} (use {len} to append)"
            ),
        }
    }
}

impl std::error::Error for OverrideError {}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Parses `KEY=VALUE`.
fn parse_set(set: &str) -> Result<(Vec<&str>, Value), OverrideError> {
    let (key, raw) = set.split_once('=').ok_or_else(|| OverrideError::MissingEquals(set.to_string()))?;
    let segments: Vec<&str> = key.split('.').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(OverrideError::EmptySegment(key.to_string()));
    }
    let value = serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()));
    Ok((segments, value))
}

fn set_path(root: &mut Value, key: &str, segments: &[&str], value: Value) -> Result<(), OverrideError> {
    let mut node = root;
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        let at = segments[..i].join(".");
        let here = if at.is_empty() { "(top)".to_string() } else { at };
        node = match node {
            Value::Object(map) => {
                if last {
                    map.insert(seg.to_string(), value);
                    return Ok(());
                }
                map.entry(seg.to_string()).or_insert_with(|| Value::Object(Map::new()))
            }
            Value::Array(items) => {
                let len = items.len();
                let bad = || OverrideError::BadIndex {
                    path: key.to_string(),
                    at: here.clone(),
                    segment: seg.to_string(),
                    len,
                };
                let index: usize = seg.parse().map_err(|_| bad())?;
                if index > len {
                    return Err(bad());
                }
                if index == len {
                    items.push(if last { Value::Null } else { Value::Object(Map::new()) });
                }
                if last {
                    items[index] = value;
                    return Ok(());
                }
                &mut items[index]
            }
            other => {
                return Err(OverrideError::NotAContainer { path: key.to_string(), at: here, found: type_name(other) })
            }
        };
    }
    Ok(())
}

/// Applies `sets` (each `KEY=VALUE`, in order) to the config document `config` (JSON or JSON5)
/// and returns the result as JSON.
pub fn apply_overrides<S: AsRef<str>>(config: &str, sets: &[S]) -> Result<String, OverrideError> {
    let config = crate::strip_bom(config);
    let mut doc: Value = match serde_json::from_str(config) {
        Ok(v) => v,
        Err(_) => json5::from_str(config).map_err(|e| OverrideError::BadDocument(e.to_string()))?,
    };
    if !doc.is_object() {
        return Err(OverrideError::NotAnObject);
    }
    for set in sets {
        let set = set.as_ref();
        let (segments, value) = parse_set(set)?;
        let key = set.split_once('=').map(|(k, _)| k).unwrap_or(set);
        set_path(&mut doc, key, &segments, value)?;
    }
    serde_json::to_string(&doc).map_err(|e| OverrideError::BadDocument(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(doc: &str, sets: &[&str]) -> Result<Value, OverrideError> {
        apply_overrides(doc, sets).map(|s| serde_json::from_str(&s).unwrap_or(Value::Null))
    }

    #[test]
    fn values_are_json_when_they_parse() {
        let v = apply(
            "{}",
            &["tools.loopDetection.warningThreshold=8", "tools.loopDetection.enabled=true", "a.b=hello", "a.c=\"8\""],
        );
        assert_eq!(
            v,
            Ok(
                serde_json::json!({"tools":{"loopDetection":{"warningThreshold":8,"enabled":true}},"a":{"b":"hello","c":"8"}})
            )
        );
    }

    #[test]
    fn json5_documents_are_read_and_json_written() {
        let v = apply(
            "{ tools: { loopDetection: { enabled: true, }, }, // on\n}",
            &["tools.loopDetection.criticalThreshold=30"],
        );
        assert_eq!(v, Ok(serde_json::json!({"tools":{"loopDetection":{"enabled":true,"criticalThreshold":30}}})));
    }

    #[test]
    fn arrays_are_indexed() {
        let v = apply(r#"{"agents":{"list":[{"id":"main"}]}}"#, &["agents.list.0.tools.loopDetection.enabled=false"]);
        assert_eq!(
            v,
            Ok(serde_json::json!({"agents":{"list":[{"id":"main","tools":{"loopDetection":{"enabled":false}}}]}}))
        );
    }

    #[test]
    fn bad_paths_say_where() {
        assert!(matches!(apply("{}", &["novalue"]), Err(OverrideError::MissingEquals(_))));
        assert!(matches!(apply("{}", &["a..b=1"]), Err(OverrideError::EmptySegment(_))));
        let e = apply(r#"{"tools":{"loopDetection":{"enabled":true}}}"#, &["tools.loopDetection.enabled.x=1"]);
        assert_eq!(
            e,
            Err(OverrideError::NotAContainer {
                path: "tools.loopDetection.enabled.x".into(),
                at: "tools.loopDetection.enabled".into(),
                found: "boolean"
            })
        );
        assert!(matches!(apply(r#"{"l":[1]}"#, &["l.5=1"]), Err(OverrideError::BadIndex { len: 1, .. })));
        assert!(matches!(apply("[1]", &["a=1"]), Err(OverrideError::NotAnObject)));
        assert!(matches!(apply("{nope", &["a=1"]), Err(OverrideError::BadDocument(_))));
    }
}
