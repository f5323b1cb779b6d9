//! `gpu16._native.Machine`: a live machine (`gpu16::live`) that Python steps cycle by
//! cycle beside a testbench. Inputs are checked as `run_json` checks them; reports and
//! objects come as the JSON the CLI's own functions build, which `gpu16.Machine`
//! (python/gpu16/__init__.py) decodes and documents.

use crate::{args, run_inputs, Held, RunInputs};
use gpu16::machine::live::{Live, Status, WriteError};
use gpu16::machine::{Dialect, Snapshot, MEMORY_BYTES};
use gpu16_asm::SourceMap;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::json;

/// A run that pauses between cycles. Not shared between threads, and it keeps the GIL
/// while it runs: compiled code is bound to the thread that made it.
#[pyclass(unsendable, module = "gpu16._native")]
pub(crate) struct Machine {
    live: Box<dyn Live>,
    map: Option<SourceMap>,
    /// The MCST dialect keeps no snapshots, so it cannot go back.
    mcst: bool,
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
    #[allow(clippy::too_many_arguments)]
    fn new(
        program: &Bound<'_, PyAny>,
        memory: &Bound<'_, PyAny>,
        backend: &Bound<'_, PyAny>,
        dialect: &Bound<'_, PyAny>,
        timing: &Bound<'_, PyAny>,
        issue: &Bound<'_, PyAny>,
        bank_conflicts: &Bound<'_, PyAny>,
        max_cycles: &Bound<'_, PyAny>,
        name: &Bound<'_, PyAny>,
        memory_format: &Bound<'_, PyAny>,
        tasks: &Bound<'_, PyAny>,
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
            Held::Whole,
        )?;
        let program = program.whole()?;
        let mcst = program.dialect() == Dialect::Mcst;
        let mut live = gpu16::live::machine(runner, program, &memory, &config)
            .map_err(|e| PyRuntimeError::new_err(format!("the JIT cannot start: {e}")))?;
        // Bounded (64 snapshots, 64 MiB) and cheap beside the run; what `go_back` needs.
        live.keep_snapshots(Snapshot::FIRST_SPACING);
        Ok(Machine {
            live,
            map: source_map,
            mcst,
        })
    }

    /// Run `cycles` more cycles; the status after: `paused`, `ended` or `failed`.
    fn step(&mut self, cycles: &Bound<'_, PyAny>) -> PyResult<&'static str> {
        let cycles = args::count(cycles, "cycles")?;
        Ok(status_name(self.live.step(cycles)))
    }

    /// Run until `until_cycle` begins (to the end of the run with `None`); the status after.
    fn run_until(&mut self, until_cycle: &Bound<'_, PyAny>) -> PyResult<&'static str> {
        let cycle = args::optional_count(until_cycle, "until_cycle")?;
        Ok(status_name(self.live.run_until(cycle.unwrap_or(u64::MAX))))
    }

    /// Go back to where the run stood as `cycle` begins; the status there. The events not
    /// yet taken belong to the cycles undone and are dropped.
    fn go_back(&mut self, cycle: &Bound<'_, PyAny>) -> PyResult<&'static str> {
        let (cycle, given) = args::count_and_text(cycle, "cycle")?;
        if self.mcst {
            return Err(PyValueError::new_err(
                "go_back: the mcst dialect keeps no snapshots, so its machine cannot go back",
            ));
        }
        let now = self.live.cycle();
        let paused = matches!(self.live.status(), Status::Paused(_));
        if cycle > now || (cycle == now && paused) {
            let bound = if paused {
                format!("before {now}, the cycle the machine is paused at")
            } else {
                format!("at most {now}, the cycle the run ended at")
            };
            return Err(PyValueError::new_err(format!(
                "cycle: must be {bound}, got {given}"
            )));
        }
        let status = self.live.go_back(cycle).ok_or_else(|| {
            PyRuntimeError::new_err(format!("go_back: the machine cannot go back to {cycle}"))
        })?;
        self.live.take_events();
        Ok(status_name(status))
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

    /// Write `data` (bytes or bytearray) at byte address `addr` (0..4096).
    fn write_memory(&mut self, addr: &Bound<'_, PyAny>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let addr = args::index(addr, "addr", MEMORY_BYTES)?;
        let bytes = args::bytes(data, "data")?;
        self.live.write_memory(addr, &bytes).map_err(|e| {
            // Bytes that run past the end are the data's fault: the address is in range.
            let what = match e {
                WriteError::OutOfRange { .. } => "data",
                WriteError::Finished | WriteError::TooMuch => "write_memory",
            };
            PyValueError::new_err(format!("{what}: {e}"))
        })
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
