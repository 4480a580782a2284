//! The readers every config section uses: a path lookup, strict keys and typed optional values,
//! each error naming the path of the offending key.

use serde_json::Value;

use super::error::{type_name, ConfigError};

/// Walks `doc` along `path` (object keys), returning the value there if every step exists.
pub fn lookup<'a>(doc: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(doc, |v, k| v.as_object()?.get(*k))
}

/// Reads an optional object at `path`: `None` when absent, an error naming the path when it is
/// present with another type.
pub fn object_at<'a>(doc: &'a Value, path: &[&str]) -> Result<Option<&'a serde_json::Map<String, Value>>, ConfigError> {
    match lookup(doc, path) {
        None => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(other) => Err(ConfigError::new(path.join("."), format!("must be an object, not {}", type_name(other)))),
    }
}

/// Rejects keys of `obj` that are not in `allowed` (zod `.strict()`).
pub fn strict_keys(obj: &serde_json::Map<String, Value>, path: &str, allowed: &[&str]) -> Result<(), ConfigError> {
    for key in obj.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(ConfigError::new(
                format!("{path}.{key}"),
                format!("unknown key; the keys allowed here are: {}", allowed.join(", ")),
            ));
        }
    }
    Ok(())
}

/// Reads an optional boolean (absent → `None`); `null` and other types are errors.
pub fn opt_bool(obj: &serde_json::Map<String, Value>, path: &str, key: &str) -> Result<Option<bool>, ConfigError> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => {
            Err(ConfigError::new(format!("{path}.{key}"), format!("must be true or false, not {}", type_name(other))))
        }
    }
}

/// Reads an optional integer in `min..=max` (absent → `None`). `5.0` counts as 5; fractions,
/// strings, `null` and out-of-range values are errors naming the path and the bounds.
pub fn opt_int(
    obj: &serde_json::Map<String, Value>,
    path: &str,
    key: &str,
    min: i64,
    max: i64,
) -> Result<Option<i64>, ConfigError> {
    let Some(v) = obj.get(key) else { return Ok(None) };
    let bounds =
        if max == i64::MAX { format!("an integer ≥ {min}") } else { format!("an integer from {min} to {max}") };
    let n = match v {
        Value::Number(n) => {
            n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15).map(|f| f as i64))
        }
        _ => None,
    };
    match n {
        Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
        _ => Err(ConfigError::new(format!("{path}.{key}"), format!("must be {bounds}, not {v}"))),
    }
}

/// [`opt_int`] for a limit that cannot be zero: validated here, once, so the core takes the
/// `NonZero` as it is.
pub fn opt_nonzero(
    obj: &serde_json::Map<String, Value>,
    path: &str,
    key: &str,
    max: i64,
) -> Result<Option<std::num::NonZeroU64>, ConfigError> {
    let n = opt_int(obj, path, key, 1, max)?;
    // `opt_int` checked 1 ≤ n, so the conversion never fails.
    Ok(n.and_then(|n| u64::try_from(n).ok()).and_then(std::num::NonZeroU64::new))
}
