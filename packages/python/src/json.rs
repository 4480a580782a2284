//! The JSON text of a Python value (a tool call's arguments, a result), written natively.
//!
//! Why not `json.JSONEncoder` alone: on the benchmark's workload (`bench/decision.py`, ~300-byte
//! arguments, results of a few hundred bytes) encoding the two values was 8.4 µs of a 27.5 µs
//! decision, more than the policy's own check. Only exact built-in types are written here:
//! anything else (a subclass, a key that is not a string, a string with a lone surrogate, a
//! float that is not finite, nesting deeper than [`MAX_DEPTH`]) returns `None`, and the Python
//! layer encodes that value with `json` as before, so a text made here and one made there
//! always parse to the same value and the policy decides alike. Strings are written as UTF-8
//! (`json` escapes non-ASCII as `\uXXXX`: the same string once read), floats with Python's own
//! `repr` (what `json` writes). String literals are escaped by the policy's own writer
//! (`loopguard_policy::canonical::write_string`, `JSON.stringify`'s escapes), which skips runs
//! that need no escape eight bytes at a time: on the benchmark's workload the two values' strings
//! took 4.3 k instructions this way and 6.1 k with serde_json's escaper, one byte at a time
//! (callgrind, of ~103 k a Python decision).

use std::fmt::Write;

use loopguard_policy::canonical::write_string;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// Deeper values are left to `json`, which names the problem (the policy refuses nesting
/// deeper than 128 levels in any case).
const MAX_DEPTH: usize = 128;

/// `value` as JSON text, or `None` when it holds anything but exact `dict` (string keys),
/// `list`, `tuple`, `str`, `int`, finite `float`, `bool` and `None`, or when Python refuses
/// a piece (an `int` past `sys.get_int_max_str_digits()`): `json` then says what is wrong.
pub(crate) fn dumps(value: &Bound<'_, PyAny>) -> Option<String> {
    let mut out = String::with_capacity(256);
    write(value, &mut out, 0).unwrap_or(false).then_some(out)
}

/// Appends `v`; `false` when it (or something in it) is left to `json`.
fn write(v: &Bound<'_, PyAny>, out: &mut String, depth: usize) -> PyResult<bool> {
    if v.is_none() {
        out.push_str("null");
    } else if v.is_exact_instance_of::<PyString>() {
        return Ok(string(v.cast::<PyString>()?, out));
    } else if v.is_exact_instance_of::<PyBool>() {
        out.push_str(if v.is_truthy()? { "true" } else { "false" });
    } else if v.is_exact_instance_of::<PyInt>() {
        match v.extract::<i64>() {
            // Writing to a `String` cannot fail.
            Ok(n) => drop(write!(out, "{n}")),
            Err(_) => out.push_str(v.str()?.to_str()?), // past 64 bits
        }
    } else if v.is_exact_instance_of::<PyFloat>() {
        if !v.extract::<f64>()?.is_finite() {
            return Ok(false); // `json` refuses it (allow_nan=False) with its own message
        }
        out.push_str(v.repr()?.to_str()?);
    } else if depth >= MAX_DEPTH {
        return Ok(false);
    } else if v.is_exact_instance_of::<PyDict>() {
        out.push('{');
        for (i, (key, value)) in v.cast::<PyDict>()?.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if !key.is_exact_instance_of::<PyString>() || !string(key.cast::<PyString>()?, out) {
                return Ok(false); // `json` turns numbers, booleans and None into key strings
            }
            out.push(':');
            if !write(&value, out, depth + 1)? {
                return Ok(false);
            }
        }
        out.push('}');
    } else if v.is_exact_instance_of::<PyList>() {
        return items(v.cast::<PyList>()?.iter(), out, depth);
    } else if v.is_exact_instance_of::<PyTuple>() {
        return items(v.cast::<PyTuple>()?.iter(), out, depth);
    } else {
        return Ok(false);
    }
    Ok(true)
}

fn items<'py>(values: impl Iterator<Item = Bound<'py, PyAny>>, out: &mut String, depth: usize) -> PyResult<bool> {
    out.push('[');
    for (i, value) in values.enumerate() {
        if i > 0 {
            out.push(',');
        }
        if !write(&value, out, depth + 1)? {
            return Ok(false);
        }
    }
    out.push(']');
    Ok(true)
}

/// A string literal; `false` for a string with a lone surrogate (not UTF-8: `json` writes it
/// as a `\udXXX` escape, which the policy reads as JavaScript does).
fn string(s: &Bound<'_, PyString>, out: &mut String) -> bool {
    let Ok(text) = s.to_str() else { return false };
    write_string(text, out);
    true
}
