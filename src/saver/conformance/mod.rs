//! The conformance kit: every case of Python's `langgraph-checkpoint-conformance==0.0.2`
//! spec (put, put_writes, get_tuple, list, delete_thread, delete_for_runs, copy_thread,
//! prune), plus delta-channel history cases, runnable against any [`CheckpointSaver`].
//!
//! One call runs it all and returns a per-capability [`Report`]; capabilities a saver
//! does not claim in [`CheckpointSaver::capabilities`] are reported as skipped, not
//! failed. As in Python, each capability's cases share one fresh saver from the
//! factory, so cases must (and do) use their own random thread ids.
//!
//! ```
//! use langgraph_codec::saver::{conformance, InMemorySaver};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let report = conformance::run_conformance(|| async { InMemorySaver::new() }).await;
//! println!("{report}");
//! assert!(report.is_success());
//! # });
//! ```
//!
//! Cases can also be run one at a time ([`cases`], [`run_case`]); the
//! [`conformance_tests!`](crate::conformance_tests) macro generates one `#[test]` per
//! case. A panic inside a case (a `todo!()` in one saver method) fails that case, named,
//! and the run goes on.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use super::traits::{Capability, CheckpointSaver};

mod copy_thread;
mod delete_for_runs;
mod delete_thread;
mod delta;
mod get_tuple;
mod list;
mod per_test;
mod prune;
mod put;
mod put_writes;
mod stated_rules;
pub mod util;

use util::CaseResult;

pub use per_test::run_one_test;

/// The future a case returns.
pub type CaseFuture<'a> = Pin<Box<dyn Future<Output = CaseResult> + Send + 'a>>;

/// One conformance case.
#[derive(Clone, Copy)]
pub struct Case {
    /// The capability it checks.
    pub capability: Capability,
    /// Its name, as in the Python spec (`test_put_roundtrip`, …).
    pub name: &'static str,
    /// Other capabilities it needs (e.g. a delta case that prunes); when the saver
    /// lacks one, the case is skipped.
    pub requires: &'static [Capability],
    run: for<'a> fn(&'a dyn CheckpointSaver) -> CaseFuture<'a>,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Case")
            .field("capability", &self.capability)
            .field("name", &self.name)
            .field("requires", &self.requires)
            .finish()
    }
}

impl Case {
    pub(crate) const fn new(
        capability: Capability,
        name: &'static str,
        requires: &'static [Capability],
        run: for<'a> fn(&'a dyn CheckpointSaver) -> CaseFuture<'a>,
    ) -> Self {
        Case {
            capability,
            name,
            requires,
            run,
        }
    }

    /// Runs the case against `saver` (ignoring [`requires`](Self::requires)).
    pub fn run<'a>(&self, saver: &'a dyn CheckpointSaver) -> CaseFuture<'a> {
        (self.run)(saver)
    }
}

/// Builds the case list of one spec file.
macro_rules! case_list {
    ($cap:expr; $($f:ident $([$($req:expr),*])?),* $(,)?) => {
        vec![$(
            $crate::saver::conformance::Case::new($cap, stringify!($f), &[$($($req),*)?], {
                fn run<'a>(
                    s: &'a dyn $crate::saver::CheckpointSaver,
                ) -> $crate::saver::conformance::CaseFuture<'a> {
                    Box::pin($f(s))
                }
                run
            })
        ),*]
    };
}
pub(crate) use case_list;

/// Every case of one capability, in the Python spec's order.
pub fn cases_for(capability: Capability) -> Vec<Case> {
    match capability {
        Capability::Put => put::cases(),
        Capability::PutWrites => put_writes::cases(),
        Capability::GetTuple => get_tuple::cases(),
        Capability::List => list::cases(),
        Capability::DeleteThread => delete_thread::cases(),
        Capability::DeleteForRuns => delete_for_runs::cases(),
        Capability::CopyThread => copy_thread::cases(),
        Capability::Prune => prune::cases(),
        Capability::DeltaChannelHistory => delta::cases(),
    }
}

/// Every case of every capability.
pub fn cases() -> Vec<Case> {
    Capability::ALL.iter().flat_map(|c| cases_for(*c)).collect()
}

/// The case with this capability and name.
pub fn find_case(capability: Capability, name: &str) -> Option<Case> {
    cases_for(capability).into_iter().find(|c| c.name == name)
}

/// What happened to one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every expectation held.
    Passed,
    /// An expectation failed or the saver returned an error: why.
    Failed(String),
    /// Not run: why (the saver lacks a capability).
    Skipped(String),
}

/// One case's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseReport {
    /// The case name.
    pub name: &'static str,
    /// What happened.
    pub outcome: Outcome,
}

/// Runs one case against `saver`, honouring its [`requires`](Case::requires): skipped
/// when the saver lacks the case's capability or one it requires.
pub async fn run_case(saver: &dyn CheckpointSaver, case: &Case) -> Outcome {
    let caps = saver.capabilities();
    if let Some(missing) = std::iter::once(&case.capability)
        .chain(case.requires)
        .find(|c| !caps.has(**c))
    {
        return Outcome::Skipped(format!("the saver does not implement {missing}"));
    }
    match (CatchPanic {
        inner: case.run(saver),
    })
    .await
    {
        Ok(Ok(())) => Outcome::Passed,
        Ok(Err(f)) => Outcome::Failed(f.0),
        Err(why) => Outcome::Failed(format!("panicked: {why}")),
    }
}

/// Polls a case's future, turning a panic inside it (a `todo!()` in one saver method,
/// an `unwrap` on a bug) into `Err(message)`, so one broken method fails its cases and
/// the run goes on. The panic hook still prints the panic as usual.
struct CatchPanic<'a> {
    inner: CaseFuture<'a>,
}

impl Future for CatchPanic<'_> {
    type Output = Result<CaseResult, String>;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let inner = &mut self.inner;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(std::task::Poll::Ready(r)) => std::task::Poll::Ready(Ok(r)),
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Err(payload) => std::task::Poll::Ready(Err(panic_message(payload.as_ref()))),
        }
    }
}

/// The text of a panic payload (`panic!("…")` gives a `&str` or a `String`).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_owned()
    }
}

/// The results of one capability.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapabilityReport {
    /// The capability.
    pub capability: Capability,
    /// Whether the saver claims it (base capabilities always are).
    pub detected: bool,
    /// Every case's result (empty when not detected).
    pub cases: Vec<CaseReport>,
}

impl CapabilityReport {
    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.cases.iter().filter(|c| f(&c.outcome)).count()
    }

    /// Cases passed.
    pub fn passed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Passed))
    }

    /// Cases failed.
    pub fn failed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Failed(_)))
    }

    /// Cases skipped.
    pub fn skipped(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Skipped(_)))
    }

    /// Not detected, or detected with no failed case.
    pub fn is_success(&self) -> bool {
        !self.detected || self.failed() == 0
    }

    /// Python's `CapabilityResult.passed is True`: detected, and no case failed.
    pub fn passed_all(&self) -> bool {
        self.detected && self.failed() == 0
    }
}

/// The report of a conformance run. `Display` prints a readable summary with every
/// failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The saver's name as given to [`run_conformance_named`].
    pub saver_name: String,
    /// One entry per capability, base ones first.
    pub capabilities: Vec<CapabilityReport>,
}

impl Report {
    /// Every detected capability passed all its cases.
    pub fn is_success(&self) -> bool {
        self.capabilities.iter().all(CapabilityReport::is_success)
    }

    /// The report of one capability.
    pub fn capability(&self, capability: Capability) -> Option<&CapabilityReport> {
        self.capabilities
            .iter()
            .find(|c| c.capability == capability)
    }

    /// `(capability, case, why)` of every failed case.
    pub fn failures(&self) -> Vec<(Capability, &'static str, &str)> {
        self.capabilities
            .iter()
            .flat_map(|c| {
                c.cases.iter().filter_map(move |r| match &r.outcome {
                    Outcome::Failed(why) => Some((c.capability, r.name, why.as_str())),
                    _ => None,
                })
            })
            .collect()
    }

    /// Total cases passed.
    pub fn passed(&self) -> usize {
        self.capabilities.iter().map(CapabilityReport::passed).sum()
    }

    /// Python's `passed_all()`: every detected capability passed all its cases.
    /// The same as [`is_success`](Self::is_success).
    pub fn passed_all(&self) -> bool {
        self.is_success()
    }

    /// Python's `passed_all_base()`: every base capability (put, put_writes,
    /// get_tuple, list, delete_thread) was run and passed all its cases. `false` when a
    /// base capability was left out of the run ([`run_capabilities`]).
    pub fn passed_all_base(&self) -> bool {
        Capability::ALL.iter().filter(|c| c.is_base()).all(|cap| {
            self.capability(*cap)
                .is_some_and(CapabilityReport::passed_all)
        })
    }

    /// The capabilities the saver does not implement (reported as skipped).
    pub fn not_implemented(&self) -> Vec<Capability> {
        self.capabilities
            .iter()
            .filter(|c| !c.detected)
            .map(|c| c.capability)
            .collect()
    }

    /// Python's conformance level (`CapabilityReport.conformance_level`):
    /// - `FULL`: every capability the saver *implements* passed ([`passed_all`](Self::passed_all)).
    ///   Capabilities it does not implement do not count against it: a saver with only
    ///   the base capabilities is `FULL`; [`not_implemented`](Self::not_implemented)
    ///   lists what it lacks, and `Display` prints both.
    /// - `BASE+PARTIAL`: every base capability passed ([`passed_all_base`](Self::passed_all_base)),
    ///   some extended one failed.
    /// - `BASE`: some base capability passed.
    /// - `NONE`: no base capability passed.
    ///
    /// The base capabilities are Python's five (see [`Capability::is_base`]); the delta
    /// history cases, which Python's suite does not have, count as extended.
    pub fn conformance_level(&self) -> &'static str {
        if self.passed_all() {
            "FULL"
        } else if self.passed_all_base() {
            "BASE+PARTIAL"
        } else if self
            .capabilities
            .iter()
            .any(|c| c.capability.is_base() && c.passed_all())
        {
            "BASE"
        } else {
            "NONE"
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let border = "=".repeat(56);
        writeln!(f, "{border}")?;
        writeln!(f, "  Checkpointer conformance: {}", self.saver_name)?;
        writeln!(f, "{border}")?;
        for (title, base) in [
            ("BASE CAPABILITIES (required)", true),
            ("EXTENDED CAPABILITIES (optional)", false),
        ] {
            writeln!(f, "  {title}")?;
            for c in self
                .capabilities
                .iter()
                .filter(|c| c.capability.is_base() == base)
            {
                let status = if !c.detected {
                    "SKIP".to_owned()
                } else if c.failed() > 0 {
                    "FAIL".to_owned()
                } else {
                    "PASS".to_owned()
                };
                let detail = if !c.detected {
                    "(not implemented)".to_owned()
                } else {
                    let mut d = format!("{}/{} passed", c.passed(), c.cases.len());
                    if c.failed() > 0 {
                        d.push_str(&format!(", {} failed", c.failed()));
                    }
                    if c.skipped() > 0 {
                        d.push_str(&format!(", {} skipped", c.skipped()));
                    }
                    d
                };
                writeln!(f, "    {status}  {:<22} {detail}", c.capability.as_str())?;
            }
        }
        let failures = self.failures();
        if !failures.is_empty() {
            writeln!(f, "  FAILURES")?;
            for (cap, name, why) in &failures {
                writeln!(f, "    {cap}::{name}: {why}")?;
            }
        }
        let detected = self.capabilities.iter().filter(|c| c.detected).count();
        let ok = self
            .capabilities
            .iter()
            .filter(|c| c.detected && c.failed() == 0)
            .count();
        let base_total = self
            .capabilities
            .iter()
            .filter(|c| c.capability.is_base())
            .count();
        let base_ok = self
            .capabilities
            .iter()
            .filter(|c| c.capability.is_base() && c.passed_all())
            .count();
        write!(
            f,
            "  Result: {}: {ok} of {detected} implemented capabilities passed (base: {base_ok} of {base_total})",
            self.conformance_level()
        )?;
        let missing = self.not_implemented();
        if missing.is_empty() {
            writeln!(f)?;
        } else {
            let names: Vec<&str> = missing.iter().map(|c| c.as_str()).collect();
            writeln!(f, "; not implemented: {}", names.join(", "))?;
        }
        write!(f, "{border}")
    }
}

/// Runs every case against savers made by `factory` (one fresh saver per capability)
/// and reports per capability.
pub async fn run_conformance<F, Fut, S>(factory: F) -> Report
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: CheckpointSaver,
{
    run_conformance_named("saver", factory).await
}

/// [`run_conformance`] with a name for the report.
pub async fn run_conformance_named<F, Fut, S>(name: &str, factory: F) -> Report
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: CheckpointSaver,
{
    run_capabilities(name, factory, &Capability::ALL).await
}

/// Runs the cases of the given capabilities only.
pub async fn run_capabilities<F, Fut, S>(
    name: &str,
    mut factory: F,
    capabilities: &[Capability],
) -> Report
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: CheckpointSaver,
{
    let mut report = Report {
        saver_name: name.to_owned(),
        capabilities: Vec::new(),
    };
    for cap in Capability::ALL.iter().filter(|c| capabilities.contains(c)) {
        let saver = factory().await;
        let detected = saver.capabilities().has(*cap);
        let mut results = Vec::new();
        if detected {
            for case in cases_for(*cap) {
                let outcome = run_case(&saver, &case).await;
                results.push(CaseReport {
                    name: case.name,
                    outcome,
                });
            }
        }
        report.capabilities.push(CapabilityReport {
            capability: *cap,
            detected,
            cases: results,
        });
    }
    report
}
