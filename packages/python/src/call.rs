//! A tool call's Python values read into the host's [`ToolCall`], once per call.
//!
//! Why here and not in `_convert.py`: a gateway makes a `ToolCall`, checks it and records its
//! outcome, and reading it in Python (a dozen small functions: the type checks, the arguments'
//! JSON, the tuple the native module took) made a decision 11.4 µs; read here, 9.9 µs
//! (`bench/decision.py`, floor 10 µs). The read call is kept in the `ToolCall` (its
//! `_native_call`), so the outcome of a call uses the arguments text its check used.
//!
//! The rules are the ones `_convert.py` had: `session` and `tool` strings; `run`, `agent`,
//! `call_id` strings or `None`; `args_json` (a string) wins over `args` (any JSON value);
//! a mapping with the same keys is read the same way, and not cached. A failed check raises
//! `LoopGuardError("input", "call.<field>", ...)`.

use loopguard_host::ToolCall;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyMapping, PyString, PyType};

use crate::{input_error, json};

/// A tool call as the policy takes it (the `_native_call` of a `loopguard.ToolCall`).
#[pyclass(module = "loopguard._native", frozen)]
pub(crate) struct Call {
    pub(crate) call: ToolCall,
}

/// `loopguard.ToolCall`, looked up once.
static TOOL_CALL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
/// `loopguard._convert._encode`, the `json` fallback for values [`json::dumps`] leaves.
static ENCODE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The call `call` (a `ToolCall` or a mapping) describes, read once per `ToolCall`.
pub(crate) fn read<'py>(call: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Call>> {
    let py = call.py();
    let tool_call = TOOL_CALL.get_or_try_init(py, || -> PyResult<Py<PyType>> {
        Ok(py.import("loopguard._inputs")?.getattr("ToolCall")?.cast_into::<PyType>()?.unbind())
    })?;
    if call.is_instance(tool_call.bind(py))? {
        let cached = call.getattr(intern!(py, "_native_call"))?;
        if let Ok(read) = cached.cast_into::<Call>() {
            return Ok(read);
        }
        let read = Bound::new(py, Call { call: fields(py, |name| call.getattr(name))? })?;
        // A frozen dataclass refuses `setattr`: the cache goes into the instance's dict, once.
        call.getattr(intern!(py, "__dict__"))?.set_item(intern!(py, "_native_call"), &read)?;
        return Ok(read);
    }
    let Ok(mapping) = call.cast::<PyMapping>() else {
        let name = call.get_type().name()?;
        return Err(input_error(py, "call", format!("must be a ToolCall or a mapping, not {name}")));
    };
    let none = py.None().into_bound(py);
    Bound::new(py, Call { call: fields(py, |name| mapping.call_method1(intern!(py, "get"), (name, &none)))? })
}

/// The call from its fields, each read by `get` (an attribute or a mapping's key).
fn fields<'py>(
    py: Python<'py>,
    get: impl Fn(&Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<ToolCall> {
    let session = require_str(&get(intern!(py, "session"))?, "call.session")?;
    let tool = require_str(&get(intern!(py, "tool"))?, "call.tool")?;
    let args_json = get(intern!(py, "args_json"))?;
    let args_json = if args_json.is_none() {
        to_json(&get(intern!(py, "args"))?, "call.args")?
    } else {
        require_str(&args_json, "call.args_json")?
    };
    Ok(ToolCall {
        session,
        tool,
        args_json,
        run: opt_str(&get(intern!(py, "run"))?, "call.run")?,
        agent: opt_str(&get(intern!(py, "agent"))?, "call.agent")?,
        call_id: opt_str(&get(intern!(py, "call_id"))?, "call.call_id")?,
    })
}

/// `value` as JSON text: natively when [`json::dumps`] can, else with Python's `json`
/// (`_convert._encode`, which raises `LoopGuardError("input", path, ...)` for what it cannot).
pub(crate) fn to_json(value: &Bound<'_, PyAny>, path: &str) -> PyResult<String> {
    if let Some(text) = json::dumps(value) {
        return Ok(text);
    }
    let py = value.py();
    let encode = ENCODE.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py.import("loopguard._convert")?.getattr("_encode")?.unbind())
    })?;
    encode.bind(py).call1((value, path))?.extract()
}

fn require_str(value: &Bound<'_, PyAny>, path: &str) -> PyResult<String> {
    match value.cast::<PyString>() {
        // A `str` with a lone surrogate has no UTF-8 form (the policy's strings are UTF-8).
        Ok(s) => s
            .to_str()
            .map(str::to_owned)
            .map_err(|_| input_error(value.py(), path, "has a lone surrogate (not valid Unicode text)".into())),
        Err(_) => {
            let name = value.get_type().name()?;
            Err(input_error(value.py(), path, format!("must be a string, not {name}")))
        }
    }
}

fn opt_str(value: &Bound<'_, PyAny>, path: &str) -> PyResult<Option<String>> {
    if value.is_none() {
        return Ok(None);
    }
    require_str(value, path).map(Some)
}
