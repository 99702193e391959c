//! `planewave._native`: one planewave calculation from Python.
//!
//! The input is planewave's TOML (the format of `planewave run`, documented in the
//! planewave-input crate), read as `planewave run` reads a file: parsed with
//! [`planewave_core::input::parse_toml_str`], set up with [`planewave_core::setup::build`] and run
//! with [`planewave_core::workflow::run`]. The answer is a [`Calculation`] object that holds the
//! converged state: the results document (the CLI's results JSON, as text), the density on the
//! FFT grid (numpy), and the bands and density that the next calculation of a nearby geometry
//! starts from ([`planewave_core::restart::ScfStart::from_previous`], as `planewave relax` does).
//!
//! Contract:
//! - errors of the input and of the set-up are `ValueError`s with the CLI's message text; an
//!   SCF that fails is a `RuntimeError` with the CLI's message (`error: SOURCE: ...`); a panic
//!   inside planewave is caught and becomes a `RuntimeError` (nothing unwinds into Python);
//! - the GIL is released while the SCF, forces and stress run; Python's signal handlers are
//!   run after every SCF iteration, and an exception they raise (Ctrl-C: `KeyboardInterrupt`)
//!   stops the SCF cleanly after that iteration and is raised to the caller.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use numpy::{PyArray1, PyArrayMethods};
use planewave_core::input;
use planewave_core::restart::ScfStart;
use planewave_core::scf::IterationInfo;
use planewave_core::setup::{self, Setup};
use planewave_core::stop::StopWhen;
use planewave_core::workflow;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// The number planewave's stop flag gets for an exception raised by a Python signal handler
/// (SIGINT's).
const SIGINT: usize = 2;

/// A finished calculation: its set-up and converged state, kept for the results, the density
/// and as the start of the next calculation.
#[pyclass(module = "planewave._native", frozen)]
pub struct Calculation {
    setup: Setup,
    calc: workflow::Calculation,
    json: String,
    restarted: bool,
}

#[pymethods]
impl Calculation {
    /// The results document of `planewave run` (the CLI's results JSON, without its
    /// `parallel` report), as JSON text.
    #[getter]
    fn results_json(&self) -> &str {
        &self.json
    }

    /// Whether the SCF started from a previous calculation's density and bands.
    #[getter]
    fn restarted(&self) -> bool {
        self.restarted
    }

    /// Whether the SCF converged.
    #[getter]
    fn converged(&self) -> bool {
        self.calc.scf.converged
    }

    /// The FFT grid (points along a1, a2, a3).
    #[getter]
    fn fft_grid(&self) -> (usize, usize, usize) {
        let [a, b, c] = self.setup.basis.grid.dims;
        (a, b, c)
    }

    /// The valence density on the FFT grid, electrons/bohr^3, shape (nspin, n1, n2, n3)
    /// (one channel without spin, (up, down) with collinear spin), index (s, i, j, k) at the
    /// fractional point (i/n1, j/n2, k/n3).
    fn density<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let basis = &self.setup.basis;
        let channels = &self.calc.scf.density.g;
        let values: Vec<f64> = py.detach(|| {
            catch_unwind(AssertUnwindSafe(|| {
                channels
                    .iter()
                    .flat_map(|g| planewave_core::grid_files::on_grid(basis, g))
                    .collect()
            }))
            .map_err(panic_message)
        })?;
        let [a, b, c] = basis.grid.dims;
        let array = PyArray1::from_vec(py, values).reshape([channels.len(), a, b, c])?;
        Ok(array.into_any())
    }
}

/// What went wrong, before it becomes a Python exception (built with the GIL held).
enum Failure {
    Input(String),
    Run(String),
    Interrupted(PyErr),
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Input(m) => PyValueError::new_err(m),
            Failure::Run(m) => PyRuntimeError::new_err(m),
            Failure::Interrupted(e) => e,
        }
    }
}

/// The message of a caught panic.
fn panic_message(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    PyRuntimeError::new_err(format!("planewave panicked (a bug): {what}"))
}

/// Run the calculation of the TOML input `toml`, as `planewave run SOURCE` would with that
/// text in the file SOURCE = `directory/name` (relative pseudopotential paths are resolved
/// against `directory`; the file need not exist). With `previous`, the SCF starts from its
/// density and bands, carried to this geometry (the species, cutoffs and k-point grid may be
/// anything, but the start helps only for a nearby structure).
///
/// Raises ValueError for an input or set-up error (the CLI's message), RuntimeError when the
/// SCF fails, KeyboardInterrupt (or what a signal handler raised) when interrupted.
#[pyfunction]
#[pyo3(signature = (toml, directory, name = "planewave.toml", previous = None))]
fn run(
    py: Python<'_>,
    toml: &str,
    directory: PathBuf,
    name: &str,
    previous: Option<Py<Calculation>>,
) -> PyResult<Calculation> {
    let source = directory.join(name);
    let previous = previous.as_ref().map(|p| p.get());
    let interrupt: Mutex<Option<PyErr>> = Mutex::new(None);
    let outcome = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            calculate(toml, source, previous, &interrupt)
        }))
    });
    let outcome = outcome.map_err(panic_message)?;
    Ok(outcome?)
}

/// The work of [`run`], without the GIL.
fn calculate(
    toml: &str,
    source: PathBuf,
    previous: Option<&Calculation>,
    interrupt: &Mutex<Option<PyErr>>,
) -> Result<Calculation, Failure> {
    let spec = input::parse_toml_str(toml, &source).map_err(|e| Failure::Input(e.to_string()))?;
    let mut s = setup::build(spec).map_err(|e| Failure::Input(e.to_string()))?;
    let stop = StopWhen::default();
    let flag = stop.signal.clone();
    s.params.stop = Some(stop);
    let start = previous.map(|p| {
        ScfStart::from_previous(
            &p.setup.model,
            &p.setup.basis,
            &p.calc.scf,
            &s.model,
            &s.basis,
        )
    });
    let restarted = start.is_some();
    // After every iteration: run Python's signal handlers; an exception stops the SCF.
    let observer = |_: &IterationInfo| {
        if let Err(e) = Python::attach(|py| py.check_signals()) {
            flag.store(SIGINT, Ordering::Relaxed);
            if let Ok(mut slot) = interrupt.lock() {
                slot.get_or_insert(e);
            }
        }
    };
    let calc = workflow::run(&s, start, observer)
        .map_err(|e| Failure::Run(format!("error: {}: {e}", source.display())))?;
    if let Some(e) = interrupt.lock().ok().and_then(|mut slot| slot.take()) {
        return Err(Failure::Interrupted(e));
    }
    let json = serde_json::to_string(&calc.to_json(&s))
        .map_err(|e| Failure::Run(format!("error: the results do not serialise: {e}")))?;
    Ok(Calculation {
        setup: s,
        calc,
        json,
        restarted,
    })
}

/// planewave's native module: [`run`] and [`Calculation`], and the unit constants the results
/// use (CODATA 2018).
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_class::<Calculation>()?;
    m.add("EV_PER_HARTREE", input::units::EV_PER_HARTREE)?;
    m.add("ANGSTROM_PER_BOHR", input::units::ANGSTROM_PER_BOHR)?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
