//! `gpu16._native.Machine`: a live machine (`gpu16::live`) that Python steps cycle by
//! cycle beside a testbench. Inputs are checked as `run_json` checks them; reports and
//! objects come as the JSON the CLI's own functions build, which `gpu16.Machine`
//! (python/gpu16/__init__.py) decodes and documents.

use crate::{byte_string, run_inputs, RunInputs};
use gpu16::machine::live::{Live, Status};
use gpu16_asm::SourceMap;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::json;

/// A run that pauses between cycles. Not shared between threads, and it keeps the GIL
/// while it runs: compiled code is bound to the thread that made it.
#[pyclass(unsendable, module = "gpu16._native")]
pub(crate) struct Machine {
    live: Box<dyn Live>,
    map: Option<SourceMap>,
}

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Paused(_) => "paused",
        Status::Ended => "ended",
        Status::Failed => "failed",
    }
}

#[pymethods]
impl Machine {
    #[new]
    #[pyo3(signature = (program, memory, backend, dialect, timing, issue, bank_conflicts,
                        max_cycles, name, memory_format = None, tasks = "all"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        program: &Bound<'_, PyAny>,
        memory: &Bound<'_, PyAny>,
        backend: &str,
        dialect: &str,
        timing: Option<&str>,
        issue: &str,
        bank_conflicts: bool,
        max_cycles: Option<u64>,
        name: &str,
        memory_format: Option<&str>,
        tasks: &str,
    ) -> PyResult<Self> {
        let RunInputs {
            runner,
            program,
            source_map,
            memory,
            config,
        } = run_inputs(
            program,
            memory,
            backend,
            dialect,
            timing,
            issue,
            bank_conflicts,
            max_cycles,
            name,
            memory_format,
            tasks,
        )?;
        let live = gpu16::live::machine(runner, program, &memory, &config)
            .map_err(|e| PyRuntimeError::new_err(format!("the JIT cannot start: {e}")))?;
        Ok(Machine {
            live,
            map: source_map,
        })
    }

    /// Run `cycles` more cycles; the status after: `paused`, `ended` or `failed`.
    fn step(&mut self, cycles: u64) -> &'static str {
        status_name(self.live.step(cycles))
    }

    /// Run until `cycle` begins (to the end of the run with `None`); the status after.
    #[pyo3(signature = (cycle = None))]
    fn run_until(&mut self, cycle: Option<u64>) -> &'static str {
        status_name(self.live.run_until(cycle.unwrap_or(u64::MAX)))
    }

    #[getter]
    fn cycle(&self) -> u64 {
        self.live.cycle()
    }

    #[getter]
    fn finished(&self) -> bool {
        !matches!(self.live.status(), Status::Paused(_))
    }

    /// Every core's registers: 16 lists of 16 ints.
    fn registers(&self) -> Vec<Vec<u8>> {
        self.live.registers().iter().map(|r| r.to_vec()).collect()
    }

    /// The 4096 bytes of shared memory, by byte address.
    fn memory<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.live.memory()[..])
    }

    /// Write `data` (bytes or bytearray) at byte address `addr`.
    fn write_memory(&mut self, addr: &Bound<'_, PyAny>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let addr: i128 = addr.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "addr must be an int, not {}",
                addr.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        let Some(bytes) = byte_string(data) else {
            return Err(PyTypeError::new_err(format!(
                "data must be bytes or bytearray, not {}",
                data.get_type().name()?
            )));
        };
        let addr = usize::try_from(addr).unwrap_or(usize::MAX);
        self.live
            .write_memory(addr, &bytes)
            .map_err(|e| PyValueError::new_err(format!("write_memory: {e}")))
    }

    /// The open atomic sequences as JSON: a list of {bank, core, addr}.
    fn locks_json(&self) -> String {
        let locks: Vec<_> = self
            .live
            .locks()
            .into_iter()
            .map(|(bank, core, addr)| json!({"bank": bank, "core": core, "addr": addr}))
            .collect();
        serde_json::Value::from(locks).to_string()
    }

    /// Each of the 16 cores as JSON: `idle` (no part of a task), or the object `run --json`
    /// gives an unfinished core (`core`, `frame`, `ip`, `state` and what the state has).
    fn cores_json(&mut self) -> String {
        let unfinished = self.live.unfinished();
        let listed = gpu16::output::json::unfinished(&unfinished);
        let mut cores: Vec<serde_json::Value> = (0..16)
            .map(|c| json!({"core": c, "state": "idle"}))
            .collect();
        for (c, v) in unfinished
            .iter()
            .zip(listed.as_array().into_iter().flatten())
        {
            cores[usize::from(c.core)] = v.clone();
        }
        serde_json::Value::from(cores).to_string()
    }

    /// The events since the last call as JSON: {"events": [...], "dropped": N}.
    fn events_json(&mut self) -> String {
        let (events, dropped) = self.live.take_events();
        let events: Vec<_> = events.iter().map(gpu16::output::json::event).collect();
        json!({"events": events, "dropped": dropped}).to_string()
    }

    /// The object `gpu16 run --json` prints for the run so far (or the whole run, once over).
    fn report_json(&mut self) -> String {
        let outcome = self.live.report();
        gpu16::output::json::run_document_text(&outcome, self.map.as_ref())
    }
}
