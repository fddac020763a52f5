//! Every output column, declared once: its name, type, unit and meaning (with the formula it
//! is computed by), per file and in file order.
//!
//! The Parquet writer builds each table under these names and checks every frame against
//! the declaration before writing it ([`conform`]), so a file can never drift from it;
//! summary.parquet is written from the declarations alone, each [`SummaryColumn`] computing
//! its value from the run's summary; `placesim report` reads columns by these declarations;
//! and a test checks that docs/output-schema.md lists exactly these columns, with the same
//! types, units and meanings. A new summary metric is a declaration here (with its formula)
//! and, for a time integral, its integral in `occupancy.rs`.

use crate::RunSummary;
use polars::prelude::{Column, DataFrame, DataType, PolarsError, PolarsResult};

/// One output column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnDef {
    /// Its name in the file.
    pub name: &'static str,
    /// Its type: `u64`, `u32`, `f64`, `bool` or `string`, with `, nullable` when it may hold
    /// nulls (the docs' wording).
    pub dtype: &'static str,
    /// Its unit, empty for none.
    pub unit: &'static str,
    /// What it holds and how it is computed, as docs/output-schema.md says it.
    pub meaning: &'static str,
}

impl ColumnDef {
    /// The Parquet type its values have (nullable or not).
    pub fn data_type(&self) -> Option<DataType> {
        Some(match self.dtype.split(',').next()?.trim() {
            "u64" => DataType::UInt64,
            "u32" => DataType::UInt32,
            "f64" => DataType::Float64,
            "bool" => DataType::Boolean,
            "string" => DataType::String,
            _ => return None,
        })
    }
}

/// A summary column: its declaration, and how its one value is computed from a run's
/// summary (for the time-integral metrics, from the occupancy integrals directly).
#[derive(Debug, Clone, Copy)]
pub struct SummaryColumn {
    /// The declaration.
    pub def: ColumnDef,
    /// Its value for a run.
    pub value: fn(&RunSummary) -> Cell<'_>,
}

impl std::ops::Deref for SummaryColumn {
    type Target = ColumnDef;
    fn deref(&self) -> &ColumnDef {
        &self.def
    }
}

impl AsRef<ColumnDef> for SummaryColumn {
    fn as_ref(&self) -> &ColumnDef {
        &self.def
    }
}

impl AsRef<ColumnDef> for ColumnDef {
    fn as_ref(&self) -> &ColumnDef {
        self
    }
}

/// One value of summary.parquet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    /// A count or a time in seconds.
    U64(u64),
    /// A fraction, a mean, a rate.
    F64(f64),
    /// A mean over a time that may be empty, or a wall-clock figure that may be unmeasured.
    NullableF64(Option<f64>),
    /// A count that only some runs have (null for the others).
    NullableU64(Option<u64>),
    /// A name.
    Str(&'a str),
}

impl Cell<'_> {
    /// The one-row column `name` holding this value.
    pub fn column(self, name: &str) -> Column {
        match self {
            Cell::U64(x) => Column::new(name.into(), [x]),
            Cell::F64(x) => Column::new(name.into(), [x]),
            Cell::NullableF64(x) => Column::new(name.into(), [x]),
            Cell::NullableU64(x) => Column::new(name.into(), [x]),
            Cell::Str(x) => Column::new(name.into(), [x]),
        }
    }
}

/// Checks that `frame` has exactly the columns of `table`, in order, with their declared
/// types: what every table goes through before it is written.
pub fn conform<C: AsRef<ColumnDef>>(table: &[C], frame: DataFrame) -> PolarsResult<DataFrame> {
    let names: Vec<&str> = frame
        .get_column_names()
        .iter()
        .map(|n| n.as_str())
        .collect();
    let declared: Vec<&str> = table.iter().map(|c| c.as_ref().name).collect();
    if names != declared {
        return Err(PolarsError::SchemaMismatch(
            format!("columns {names:?} differ from the declared {declared:?}").into(),
        ));
    }
    for (def, column) in table.iter().map(AsRef::as_ref).zip(frame.columns()) {
        if def.data_type().as_ref() != Some(column.dtype()) {
            return Err(PolarsError::SchemaMismatch(
                format!(
                    "column `{}` is {}, declared {}",
                    def.name,
                    column.dtype(),
                    def.dtype
                )
                .into(),
            ));
        }
    }
    Ok(frame)
}

/// The columns of jobs.parquet, in file order.
pub mod jobs {
    use super::ColumnDef;

    /// The `scenario` column.
    pub const SCENARIO: ColumnDef = ColumnDef {
        name: "scenario",
        dtype: "string",
        unit: "",
        meaning: "the scenario name; for `placesim run`, the trace file name without `.swf`/`.gz`, or `--scenario`",
    };
    /// The `policy` column.
    pub const POLICY: ColumnDef = ColumnDef {
        name: "policy",
        dtype: "string",
        unit: "",
        meaning: "the queue discipline (`fcfs`, `easy`, `easy-depthN` for a backfill depth N other than 1, `easy-highest` / `easy-depthN-highest` under Moab's HIGHEST, `greedy` or `conservative`), with `+pbs-psets` under PBS placement sets and `+moab-nodesets` under Moab node sets",
    };
    /// The `seed` column.
    pub const SEED: ColumnDef = ColumnDef {
        name: "seed",
        dtype: "u64",
        unit: "",
        meaning: "the run's seed (`--seed`, default 0)",
    };
    /// The `job_id` column.
    pub const JOB_ID: ColumnDef = ColumnDef {
        name: "job_id",
        dtype: "u64",
        unit: "",
        meaning: "the job's number in the trace (SWF field 1)",
    };
    /// The `submit_s` column.
    pub const SUBMIT_S: ColumnDef = ColumnDef {
        name: "submit_s",
        dtype: "u64",
        unit: "s",
        meaning: "r: submit time (SWF field 2)",
    };
    /// The `start_s` column.
    pub const START_S: ColumnDef = ColumnDef {
        name: "start_s",
        dtype: "u64",
        unit: "s",
        meaning: "s: when the job started (its last start, for a requeued job: its wait includes the runs lost)",
    };
    /// The `end_s` column.
    pub const END_S: ColumnDef = ColumnDef {
        name: "end_s",
        dtype: "u64",
        unit: "s",
        meaning: "c: when the job ended (finished, killed at its walltime, or failed with a vnode)",
    };
    /// The `wait_s` column.
    pub const WAIT_S: ColumnDef = ColumnDef {
        name: "wait_s",
        dtype: "u64",
        unit: "s",
        meaning: "w = s − r",
    };
    /// The `runtime_s` column.
    pub const RUNTIME_S: ColumnDef = ColumnDef {
        name: "runtime_s",
        dtype: "u64",
        unit: "s",
        meaning: "p = c − s, the simulated runtime: min(stretched runtime, estimate) by default, the stretched runtime with `--walltime overrun` (the stretched runtime is the trace runtime without a runtime model)",
    };
    /// The `trace_runtime_s` column.
    pub const TRACE_RUNTIME_S: ColumnDef = ColumnDef {
        name: "trace_runtime_s",
        dtype: "u64",
        unit: "s",
        meaning: "the run time the trace records (SWF field 4)",
    };
    /// The `estimate_s` column.
    pub const ESTIMATE_S: ColumnDef = ColumnDef {
        name: "estimate_s",
        dtype: "u64",
        unit: "s",
        meaning: "p̂: the walltime request (SWF field 9); when field 9 is absent, the queue's or server's `resources_default.walltime`, else the trace runtime; what schedulers plan with",
    };
    /// The `size` column.
    pub const SIZE: ColumnDef = ColumnDef {
        name: "size",
        dtype: "u32",
        unit: "processors",
        meaning: "SWF field 8 if > 0, else field 5",
    };
    /// The `killed` column.
    pub const KILLED: ColumnDef = ColumnDef {
        name: "killed",
        dtype: "bool",
        unit: "",
        meaning: "whether the job was killed at its walltime (stretched runtime > estimate, under the default `--walltime kill`)",
    };
    /// The `bounded_slowdown` column.
    pub const BOUNDED_SLOWDOWN: ColumnDef = ColumnDef {
        name: "bounded_slowdown",
        dtype: "f64",
        unit: "",
        meaning: "max((w + p) / max(p, τ), 1) with τ = 10 s",
    };
    /// The `speed_factor` column.
    pub const SPEED_FACTOR: ColumnDef = ColumnDef {
        name: "speed_factor",
        dtype: "f64",
        unit: "",
        meaning: "H = s_ref / speed of the slowest allocated vnode (the ncpus-weighted mean speed for load-balanced jobs); 1 without a runtime model (`placesim run --trace`)",
    };
    /// The `comm_factor` column.
    pub const COMM_FACTOR: ColumnDef = ColumnDef {
        name: "comm_factor",
        dtype: "f64",
        unit: "",
        meaning: "C = 1 + β·X, X = 1 − Σ_k (a_k / n)² over the groups k of the topology key (a_k: the job's ncpus in group k, n: all its ncpus); or 1 + min(α·(S − 1), cap) for sensitive jobs under `comm = \"groups\"`; 1 for jobs with β = 0 or in one group",
    };
    /// The `noise` column.
    pub const NOISE: ColumnDef = ColumnDef {
        name: "noise",
        dtype: "f64",
        unit: "",
        meaning: "ε, the lognormal noise factor; 1 when σ = 0",
    };
    /// The `sets_spanned` column.
    pub const SETS_SPANNED: ColumnDef = ColumnDef {
        name: "sets_spanned",
        dtype: "u32",
        unit: "sets",
        meaning: "S, the sets spanned: distinct values of the topology key among the job's vnodes (1 without a key)",
    };
    /// The `speed_spread` column.
    pub const SPEED_SPREAD: ColumnDef = ColumnDef {
        name: "speed_spread",
        dtype: "f64",
        unit: "",
        meaning: "(fastest − slowest) / slowest speed among the job's vnodes",
    };
    /// The `cross_set_pairs` column.
    pub const CROSS_SET_PAIRS: ColumnDef = ColumnDef {
        name: "cross_set_pairs",
        dtype: "f64",
        unit: "",
        meaning: "X = 1 − Σ_k (a_k / n)², the share of rank pairs that cross a set boundary under all-to-all traffic (a_k: the job's ncpus in set k of the topology key, n: all its ncpus); 0 in one set (§1.4 item 4)",
    };
    /// The `contiguity_runs` column.
    pub const CONTIGUITY_RUNS: ColumnDef = ColumnDef {
        name: "contiguity_runs",
        dtype: "u32",
        unit: "",
        meaning: "R: maximal runs of consecutive vnode indices (cluster order) in the job's last allocation; 1 is contiguous",
    };
    /// The `size_class` column.
    pub const SIZE_CLASS: ColumnDef = ColumnDef {
        name: "size_class",
        dtype: "string",
        unit: "",
        meaning: "`serial` (size 1), `one set` (size ≤ the ncpus of the largest set of the topology key), `multi-set` (larger); `parallel` instead of the last two when there is one set only (§1.2 convention 4)",
    };
    /// The `requeues` column.
    pub const REQUEUES: ColumnDef = ColumnDef {
        name: "requeues",
        dtype: "u32",
        unit: "",
        meaning: "times a vnode failure sent the job back to the queue (`[failures]`, `on_failure = \"requeue\"`); known for every job",
    };
    /// The `lost_core_s` column.
    pub const LOST_CORE_S: ColumnDef = ColumnDef {
        name: "lost_core_s",
        dtype: "u64",
        unit: "core-seconds",
        meaning: "Σ over its runs cut short by a vnode failure of ncpus × (failure time − that run's start); known for every job",
    };
    /// The `failed` column.
    pub const FAILED: ColumnDef = ColumnDef {
        name: "failed",
        dtype: "bool",
        unit: "",
        meaning: "whether a vnode failure ended the job (`on_failure = \"kill\"`); its `end_s` is the failure time",
    };
    /// The `running_at_start` column.
    pub const RUNNING_AT_START: ColumnDef = ColumnDef {
        name: "running_at_start",
        dtype: "bool",
        unit: "",
        meaning: "whether the job was already running at t = 0 (a scenario's `[[running]]`): submitted and started at 0 on its given vnodes, it counts in every metric like the others",
    };
    /// The `request` column.
    pub const REQUEST: ColumnDef = ColumnDef {
        name: "request",
        dtype: "string, nullable",
        unit: "",
        meaning: "the job's request in PBS's syntax, as the run gave it (a requests file, a rule, or the size mapping: `select=N:ncpus=1` for a plain trace); null where the tables were built without the run's requests",
    };
    /// The `placement_set` column.
    pub const PLACEMENT_SET: ColumnDef = ColumnDef {
        name: "placement_set",
        dtype: "string, nullable",
        unit: "",
        meaning: "where the placement put the job: a PBS placement set (`switch=A`, `switch=\"\"` for vnodes lacking the key), `spanned` when no set could ever hold it and it spanned its vnode pool, `per-chunk: shape=square+any` under the per-chunk `group=` extension (one entry per chunk complex, `any` for complexes without a group); null under first-fit placement",
    };
    /// The `comment` column.
    pub const COMMENT: ColumnDef = ColumnDef {
        name: "comment",
        dtype: "string, nullable",
        unit: "",
        meaning: "the scheduler's last comment on the job before it started, or ever if it never did, in PBS's words: \"Not Running: Placement set switch=A has too few free resources\", \"Not Running: Insufficient amount of resource: ncpus (R: 64 A: 10 T: 100)\", \"Not Running: Not enough free nodes available\", \"Can Never Run: can't fit in the largest placement set, and can't span psets\", ...; under first fit the discipline's own: \"Not Running: Job would break strict sorted order\" (strict order, on the jobs after the blocked one), \"Not Running: Job would conflict with reservation or top job\" (a job that fits now but would delay a reservation), and \"Can Never Run: the request does not fit on the empty cluster\"",
    };

    /// The `exec_vnode` column.
    pub const EXEC_VNODE: ColumnDef = ColumnDef {
        name: "exec_vnode",
        dtype: "string, nullable",
        unit: "",
        meaning: "the vnodes the job ran on (its last start), in PBS's syntax: one chunk per vnode, `(v1:ncpus=2:mem=4gb)+(v2:ncpus=2)`, amounts of 0 left out, sizes in the largest exact unit; null for a job that never started, and unless asked for (`[metrics] exec_vnode = true` or `run --exec-vnode`: a job of thousands of vnodes has tens of kilobytes of them)",
    };
    /// The `estimated_start_s` column.
    pub const ESTIMATED_START_S: ColumnDef = ColumnDef {
        name: "estimated_start_s",
        dtype: "u64, nullable",
        unit: "s",
        meaning: "PBS's `estimated.start_time`: the start the last pass that calendared the job as a top job gave it (a reservation of a backfilling discipline); null if it never was one",
    };
    /// The `estimated_exec_vnode` column.
    pub const ESTIMATED_EXEC_VNODE: ColumnDef = ColumnDef {
        name: "estimated_exec_vnode",
        dtype: "string, nullable",
        unit: "",
        meaning: "PBS's `estimated.exec_vnode`: the vnodes of that last estimate, as `exec_vnode`; null if it never was a top job, unless asked for as `exec_vnode`, or when the pass reasoned on ncpus totals (first fit with one-ncpu chunks: any free vnodes would do)",
    };
    /// The `user` column.
    pub const USER: ColumnDef = ColumnDef {
        name: "user",
        dtype: "u32, nullable",
        unit: "",
        meaning: "the job's user, as the trace numbers it (SWF field 12); null where unknown",
    };
    /// The `group` column.
    pub const GROUP: ColumnDef = ColumnDef {
        name: "group",
        dtype: "u32, nullable",
        unit: "",
        meaning: "the job's group, as the trace numbers it (SWF field 13); null where unknown",
    };
    /// The `project` column.
    pub const PROJECT: ColumnDef = ColumnDef {
        name: "project",
        dtype: "string, nullable",
        unit: "",
        meaning: "the job's project (PBS's `project`, qsub -P), from a request rule; null where none",
    };
    /// The `priority_at_submit` column.
    pub const PRIORITY_AT_SUBMIT: ColumnDef = ColumnDef {
        name: "priority_at_submit",
        dtype: "f64, nullable",
        unit: "",
        meaning: "the value the scheduler first ordered the job by, in the first pass after its submission: PBS's `job_sort_formula`; null when the queue is not ordered by a formula",
    };
    /// The `priority_at_start` column.
    pub const PRIORITY_AT_START: ColumnDef = ColumnDef {
        name: "priority_at_start",
        dtype: "f64, nullable",
        unit: "",
        meaning: "the same value in the pass that (last) started the job (it differs from `priority_at_submit` when the formula uses `eligible_time`); null for a job that never started, and when the queue is not ordered by a formula",
    };

    /// Every column, in file order.
    pub const ALL: &[ColumnDef] = &[
        SCENARIO,
        POLICY,
        SEED,
        JOB_ID,
        SUBMIT_S,
        START_S,
        END_S,
        WAIT_S,
        RUNTIME_S,
        TRACE_RUNTIME_S,
        ESTIMATE_S,
        SIZE,
        KILLED,
        BOUNDED_SLOWDOWN,
        SPEED_FACTOR,
        COMM_FACTOR,
        NOISE,
        SETS_SPANNED,
        SPEED_SPREAD,
        CROSS_SET_PAIRS,
        CONTIGUITY_RUNS,
        SIZE_CLASS,
        REQUEUES,
        LOST_CORE_S,
        FAILED,
        RUNNING_AT_START,
        REQUEST,
        PLACEMENT_SET,
        COMMENT,
        EXEC_VNODE,
        ESTIMATED_START_S,
        ESTIMATED_EXEC_VNODE,
        USER,
        GROUP,
        PROJECT,
        PRIORITY_AT_SUBMIT,
        PRIORITY_AT_START,
    ];
}

/// The columns of events.parquet, in file order.
pub mod events {
    use super::ColumnDef;

    pub use super::jobs::{POLICY, SCENARIO, SEED};

    /// The `job_id` column.
    pub const JOB_ID: ColumnDef = ColumnDef {
        name: "job_id",
        dtype: "u64, nullable",
        unit: "",
        meaning: "the job, as in jobs.parquet; null for an event of the site (a reservation's window, a vnode, a timeline entry)",
    };

    /// The `time_s` column.
    pub const TIME_S: ColumnDef = ColumnDef {
        name: "time_s",
        dtype: "u64",
        unit: "s",
        meaning: "when it happened: the submit, the pass that gave the estimate or the comment, the start, the end, the requeue, the site's event",
    };
    /// The `kind` column.
    pub const KIND: ColumnDef = ColumnDef {
        name: "kind",
        dtype: "string",
        unit: "",
        meaning: "`submit`, `top-job estimate`, `comment`, `start`, `end`, `requeue` or `kill` (an end at the walltime or by a vnode failure); for the site, `reservation start`, `reservation end`, `reservation deleted`, `vnode down`, `vnode up`, `setting` (a timeline's `qmgr`) or `cycle` (a timeline's extra cycle)",
    };
    /// The `text` column.
    pub const TEXT: ColumnDef = ColumnDef {
        name: "text",
        dtype: "string, nullable",
        unit: "",
        meaning: "for a comment its text, in PBS's words; for a start the placement set, if any; for an end `finished`; for a kill `killed at its walltime`, `killed by a vnode failure`, `killed at the end of its reservation`, `killed: its reservation was deleted (pbs_rdel)` or `deleted while it ran (qdel)`; for a requeue `requeued by a vnode failure`; null for a submit; for a site's event what it is about: the reservation's name, the vnode's, the `qmgr` command, `cycle`",
    };

    /// The `estimated_start_s` column.
    pub const ESTIMATED_START_S: ColumnDef = ColumnDef {
        name: "estimated_start_s",
        dtype: "u64, nullable",
        unit: "s",
        meaning: "for a top-job estimate, the start it gives the job (its vnodes, the last time, are jobs.parquet's `estimated_exec_vnode`); null for the other kinds",
    };

    /// Every column, in file order.
    pub const ALL: &[ColumnDef] = &[
        SCENARIO,
        POLICY,
        SEED,
        JOB_ID,
        TIME_S,
        KIND,
        TEXT,
        ESTIMATED_START_S,
    ];
}

/// The columns of reservations.parquet: the site's reservations, one row per reservation in
/// order of start, with the jobs that ran inside each.
pub mod reservations {
    use super::ColumnDef;

    pub use super::jobs::{POLICY, SCENARIO, SEED};

    /// The `reservation` column.
    pub const RESERVATION: ColumnDef = ColumnDef {
        name: "reservation",
        dtype: "string",
        unit: "",
        meaning: "its name (PBS's id, `R123`, `M4`; a Moab reservation's SRCFG name or id)",
    };
    /// The `start_s` column.
    pub const START_S: ColumnDef = ColumnDef {
        name: "start_s",
        dtype: "u64",
        unit: "s",
        meaning: "when its window opens",
    };
    /// The `end_s` column.
    pub const END_S: ColumnDef = ColumnDef {
        name: "end_s",
        dtype: "u64",
        unit: "s",
        meaning: "when it closes: the window is [`start_s`, `end_s`)",
    };
    /// The `state` column.
    pub const STATE: ColumnDef = ColumnDef {
        name: "state",
        dtype: "string",
        unit: "",
        meaning: "`confirmed` (given confirmed, or confirmed by the scheduler on the vnodes below), `denied` (the scheduler found none: no vnodes, and nothing ran) or `deleted` (a timeline's `rdel` deleted it before its end; the window is the one it was booked for)",
    };
    /// The `exclusive` column.
    pub const EXCLUSIVE: ColumnDef = ColumnDef {
        name: "exclusive",
        dtype: "bool",
        unit: "",
        meaning: "whether it holds its vnodes exclusively (`place=excl`, a maintenance reservation of whole hosts); false for a Moab reservation, which holds nothing: it keeps the jobs its ACL does not admit off its hosts",
    };
    /// The `vnodes` column.
    pub const VNODES: ColumnDef = ColumnDef {
        name: "vnodes",
        dtype: "string",
        unit: "",
        meaning: "its vnodes and amounts in PBS's `exec_vnode` syntax (its `resv_nodes`)",
    };
    /// The `acl` column.
    pub const ACL: ColumnDef = ColumnDef {
        name: "acl",
        dtype: "string, nullable",
        unit: "",
        meaning: "a Moab reservation's ACL as `mrsvctl -a` writes it (`CLASS==batch-,USER==12`; `\"\"` for a system reservation, which no job may use); null for a PBS reservation",
    };
    /// The `ncpus` column.
    pub const NCPUS: ColumnDef = ColumnDef {
        name: "ncpus",
        dtype: "u64",
        unit: "processors",
        meaning: "the ncpus it holds",
    };
    /// The `jobs_run` column.
    pub const JOBS_RUN: ColumnDef = ColumnDef {
        name: "jobs_run",
        dtype: "u64",
        unit: "jobs",
        meaning: "jobs of its queue (the PBS queue named as it) that ran inside it; for a Moab reservation, jobs that started on its hosts inside its window (which its ACL admitted)",
    };
    /// The `jobs` column.
    pub const JOBS: ColumnDef = ColumnDef {
        name: "jobs",
        dtype: "string",
        unit: "",
        meaning: "those jobs' `job_id`s, in job order, separated by `,` (`\"\"` for none)",
    };

    /// Every column, in file order.
    pub const ALL: &[ColumnDef] = &[
        SCENARIO,
        POLICY,
        SEED,
        RESERVATION,
        START_S,
        END_S,
        STATE,
        EXCLUSIVE,
        VNODES,
        ACL,
        NCPUS,
        JOBS_RUN,
        JOBS,
    ];
}

/// The columns of vnodes.parquet: the cluster a run ran on, one row per vnode in cluster
/// order, so that where jobs ran (`exec_vnode`) can be drawn by set.
pub mod vnodes {
    use super::ColumnDef;

    pub use super::jobs::{POLICY, SCENARIO, SEED};

    /// The `vnode` column.
    pub const VNODE: ColumnDef = ColumnDef {
        name: "vnode",
        dtype: "string",
        unit: "",
        meaning: "the vnode's name, as `exec_vnode` names it",
    };
    /// The `host` column.
    pub const HOST: ColumnDef = ColumnDef {
        name: "host",
        dtype: "string",
        unit: "",
        meaning: "its host",
    };
    /// The `set` column.
    pub const SET: ColumnDef = ColumnDef {
        name: "set",
        dtype: "string",
        unit: "",
        meaning: "its set under the topology key the metrics measure (`sets_spanned`): the key's value, `\"\"` for a vnode without it or without a key",
    };
    /// The `speed` column.
    pub const SPEED: ColumnDef = ColumnDef {
        name: "speed",
        dtype: "f64",
        unit: "",
        meaning: "its relative speed",
    };
    /// The `ncpus` column.
    pub const NCPUS: ColumnDef = ColumnDef {
        name: "ncpus",
        dtype: "u64",
        unit: "processors",
        meaning: "its ncpus",
    };

    /// Every column, in file order.
    pub const ALL: &[ColumnDef] = &[SCENARIO, POLICY, SEED, VNODE, HOST, SET, SPEED, NCPUS];
}

/// The columns of waits.parquet: the window's wait statistics per user and per queue, one
/// row per group, written beside summary.parquet.
pub mod waits {
    use super::ColumnDef;

    pub use super::jobs::{POLICY, SCENARIO, SEED};

    /// The `by` column.
    pub const BY: ColumnDef = ColumnDef {
        name: "by",
        dtype: "string",
        unit: "",
        meaning: "what the jobs are grouped by: `user` or `queue`",
    };
    /// The `key` column.
    pub const KEY: ColumnDef = ColumnDef {
        name: "key",
        dtype: "string",
        unit: "",
        meaning: "the group: a user's number (SWF field 12; `unknown` for jobs without one), or a PBS queue's name (`default` for jobs in none); users by number, then queues in scenario order",
    };
    /// The `jobs` column.
    pub const JOBS: ColumnDef = ColumnDef {
        name: "jobs",
        dtype: "u64",
        unit: "jobs",
        meaning: "the group's jobs submitted in the measurement window that ran (the population of summary.parquet's `window_*` job statistics)",
    };
    /// The `wait_mean_s` column.
    pub const WAIT_MEAN_S: ColumnDef = ColumnDef {
        name: "wait_mean_s",
        dtype: "f64",
        unit: "s",
        meaning: "their mean wait",
    };
    /// The `wait_median_s` column.
    pub const WAIT_MEDIAN_S: ColumnDef = ColumnDef {
        name: "wait_median_s",
        dtype: "f64",
        unit: "s",
        meaning: "their median wait (the mean of the two middle values for an even count)",
    };
    /// The `wait_p95_s` column.
    pub const WAIT_P95_S: ColumnDef = ColumnDef {
        name: "wait_p95_s",
        dtype: "f64",
        unit: "s",
        meaning: "their 95th percentile wait (nearest rank)",
    };
    /// The `bsd_mean` column.
    pub const BSD_MEAN: ColumnDef = ColumnDef {
        name: "bsd_mean",
        dtype: "f64",
        unit: "",
        meaning: "their mean bounded slowdown, τ = 10 s",
    };

    /// Every column, in file order.
    pub const ALL: &[ColumnDef] = &[
        SCENARIO,
        POLICY,
        SEED,
        BY,
        KEY,
        JOBS,
        WAIT_MEAN_S,
        WAIT_MEDIAN_S,
        WAIT_P95_S,
        BSD_MEAN,
    ];
}

/// The columns of agreement.parquet: how often a run of an imported site placed a job in the
/// set it really ran in, for every key that forms sets, one row per key.
pub mod agreement {
    use super::ColumnDef;

    pub use super::jobs::{POLICY, SCENARIO, SEED};

    /// The `key` column.
    pub const KEY: ColumnDef = ColumnDef {
        name: "key",
        dtype: "string",
        unit: "",
        meaning: "a resource whose values form sets: each string or string-array resource some vnode has, in definition order, but `vnode` (whose sets are single vnodes)",
    };
    /// The `recorded_in_one_set` column.
    pub const RECORDED_IN_ONE_SET: ColumnDef = ColumnDef {
        name: "recorded_in_one_set",
        dtype: "u64",
        unit: "jobs",
        meaning: "compared jobs (as summary.parquet's `fidelity_jobs_compared`) whose recorded vnodes all lie in one set of the key",
    };
    /// The `same_set` column.
    pub const SAME_SET: ColumnDef = ColumnDef {
        name: "same_set",
        dtype: "f64, nullable",
        unit: "fraction",
        meaning: "the share of them the run placed inside that same set; null when there are none",
    };
    /// The `recorded_spanning` column.
    pub const RECORDED_SPANNING: ColumnDef = ColumnDef {
        name: "recorded_spanning",
        dtype: "u64",
        unit: "jobs",
        meaning: "compared jobs whose recorded vnodes span sets of the key, or lack it: left out of `same_set`",
    };

    /// Every column, in file order.
    pub const ALL: &[ColumnDef] = &[
        SCENARIO,
        POLICY,
        SEED,
        KEY,
        RECORDED_IN_ONE_SET,
        SAME_SET,
        RECORDED_SPANNING,
    ];
}

/// The columns of summary.parquet, in file order.
pub mod summary {
    use super::{Cell, ColumnDef, SummaryColumn};

    /// The `scenario` column, as in jobs.parquet.
    pub const SCENARIO: SummaryColumn = SummaryColumn {
        def: super::jobs::SCENARIO,
        value: |s| Cell::Str(&s.meta.scenario),
    };
    /// The `policy` column, as in jobs.parquet.
    pub const POLICY: SummaryColumn = SummaryColumn {
        def: super::jobs::POLICY,
        value: |s| Cell::Str(&s.meta.policy),
    };
    /// The `seed` column, as in jobs.parquet.
    pub const SEED: SummaryColumn = SummaryColumn {
        def: super::jobs::SEED,
        value: |s| Cell::U64(s.meta.seed),
    };
    /// The `trace` column.
    pub const TRACE: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "trace",
            dtype: "string",
            unit: "",
            meaning: "the trace's path as given",
        },
        value: |s| Cell::Str(&s.meta.trace),
    };
    /// The `procs` column.
    pub const PROCS: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "procs",
            dtype: "u64",
            unit: "processors",
            meaning: "the machine size: `--procs`, else the header's `MaxProcs:`, else `MaxNodes:`",
        },
        value: |s| Cell::U64(s.meta.procs),
    };
    /// The `records` column.
    pub const RECORDS: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "records",
            dtype: "u64",
            unit: "",
            meaning: "job lines read from the trace",
        },
        value: |s| Cell::U64(s.records),
    };
    /// The `jobs_run` column.
    pub const JOBS_RUN: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "jobs_run",
            dtype: "u64",
            unit: "",
            meaning: "jobs that ran to their end: `records` = `jobs_run` + `jobs_never_started` + `jobs_rejected` + `jobs_deleted` + Σ `skipped_*`",
        },
        value: |s| Cell::U64(s.jobs_run),
    };
    /// The `jobs_killed` column.
    pub const JOBS_KILLED: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "jobs_killed",
            dtype: "u64",
            unit: "",
            meaning: "jobs killed at their walltime",
        },
        value: |s| Cell::U64(s.jobs_killed),
    };
    /// The `jobs_never_started` column.
    pub const JOBS_NEVER_STARTED: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "jobs_never_started",
            dtype: "u64",
            unit: "",
            meaning: "jobs the policy never started (a request that fits no state of the machine); none for plain traces, whose oversized jobs are skipped at reading",
        },
        value: |s| Cell::U64(s.jobs_never_started),
    };
    /// The `jobs_rejected` column.
    pub const JOBS_REJECTED: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "jobs_rejected",
            dtype: "u64",
            unit: "",
            meaning: "jobs the server refused at submission, over a `max_queued` limit or to the queue of a reservation already ended (each with the server's reply as its `comment`): they never waited",
        },
        value: |s| Cell::U64(s.jobs_rejected),
    };
    /// The `jobs_deleted` column.
    pub const JOBS_DELETED: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "jobs_deleted",
            dtype: "u64",
            unit: "",
            meaning: "jobs deleted while they waited: by the timeline's `qdel`, or a reservation's queue's jobs still waiting when its window closed (each with the reason as its `comment`)",
        },
        value: |s| Cell::U64(s.jobs_deleted),
    };
    /// The `jobs_failed` column.
    pub const JOBS_FAILED: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "jobs_failed",
            dtype: "u64",
            unit: "",
            meaning: "jobs ended by a vnode failure (`on_failure = \"kill\"`; they count in `jobs_run`)",
        },
        value: |s| Cell::U64(s.jobs_failed),
    };
    /// The `requeues` column.
    pub const REQUEUES: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "requeues",
            dtype: "u64",
            unit: "",
            meaning: "Σ `requeues`",
        },
        value: |s| Cell::U64(s.requeues),
    };
    /// The `lost_core_s` column.
    pub const LOST_CORE_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "lost_core_s",
            dtype: "u64",
            unit: "core-seconds",
            meaning: "Σ `lost_core_s`",
        },
        value: |s| Cell::U64(s.lost_core_s),
    };
    /// The `availability` column.
    pub const AVAILABILITY: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "availability",
            dtype: "f64",
            unit: "fraction",
            meaning: "1 − Σ_v ncpus_v × (time v was down) / (cluster ncpus × (last event − first submit)), both over [first submit, last event]; 1 without outages",
        },
        value: |s| Cell::F64(s.availability),
    };
    /// The `skipped_no_size` column.
    pub const SKIPPED_NO_SIZE: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "skipped_no_size",
            dtype: "u64",
            unit: "",
            meaning: "records with neither field 8 nor field 5 positive",
        },
        value: |s| Cell::U64(s.skipped_count("no_size")),
    };
    /// The `skipped_negative_runtime` column.
    pub const SKIPPED_NEGATIVE_RUNTIME: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "skipped_negative_runtime",
            dtype: "u64",
            unit: "",
            meaning: "records with field 4 < 0",
        },
        value: |s| Cell::U64(s.skipped_count("negative_runtime")),
    };
    /// The `skipped_too_large` column.
    pub const SKIPPED_TOO_LARGE: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "skipped_too_large",
            dtype: "u64",
            unit: "",
            meaning: "records asking for more processors than the machine has",
        },
        value: |s| Cell::U64(s.skipped_count("too_large")),
    };
    /// The `skipped_negative_submit` column.
    pub const SKIPPED_NEGATIVE_SUBMIT: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "skipped_negative_submit",
            dtype: "u64",
            unit: "",
            meaning: "records with field 2 < 0",
        },
        value: |s| Cell::U64(s.skipped_count("negative_submit")),
    };
    /// The `skipped_partial_execution` column.
    pub const SKIPPED_PARTIAL_EXECUTION: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "skipped_partial_execution",
            dtype: "u64",
            unit: "",
            meaning: "records with status 2, 3 or 4 (one part of a checkpointed job)",
        },
        value: |s| Cell::U64(s.skipped_count("partial_execution")),
    };
    /// The `skipped_bad_line` column.
    pub const SKIPPED_BAD_LINE: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "skipped_bad_line",
            dtype: "u64",
            unit: "",
            meaning: "malformed lines, counted only under `--skip-bad-lines` (otherwise they are an error)",
        },
        value: |s| Cell::U64(s.skipped_count("bad_line")),
    };
    /// The `makespan_s` column.
    pub const MAKESPAN_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "makespan_s",
            dtype: "u64",
            unit: "s",
            meaning: "C_max = max c − min r over jobs run",
        },
        value: |s| Cell::U64(s.makespan_s),
    };
    /// The `utilization` column.
    pub const UTILIZATION: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "utilization",
            dtype: "f64",
            unit: "fraction",
            meaning: "Σ size × p / (procs × makespan)",
        },
        value: |s| Cell::F64(s.utilization),
    };
    /// The `wait_mean_s` column.
    pub const WAIT_MEAN_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "wait_mean_s",
            dtype: "f64",
            unit: "s",
            meaning: "mean of w",
        },
        value: |s| Cell::F64(s.wait_mean_s),
    };
    /// The `wait_median_s` column.
    pub const WAIT_MEDIAN_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "wait_median_s",
            dtype: "f64",
            unit: "s",
            meaning: "median of w (mean of the two middle values for an even count)",
        },
        value: |s| Cell::F64(s.wait_median_s),
    };
    /// The `wait_p95_s` column.
    pub const WAIT_P95_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "wait_p95_s",
            dtype: "f64",
            unit: "s",
            meaning: "95th percentile of w, nearest rank: the value at rank ⌈0.95 n⌉",
        },
        value: |s| Cell::F64(s.wait_p95_s),
    };
    /// The `bsd_mean` column.
    pub const BSD_MEAN: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "bsd_mean",
            dtype: "f64",
            unit: "",
            meaning: "mean bounded slowdown",
        },
        value: |s| Cell::F64(s.bsd_mean),
    };
    /// The `throughput_jobs_per_hour` column.
    pub const THROUGHPUT_JOBS_PER_HOUR: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "throughput_jobs_per_hour",
            dtype: "f64",
            unit: "jobs/h",
            meaning: "jobs_run × 3600 / makespan",
        },
        value: |s| Cell::F64(s.throughput_jobs_per_hour),
    };
    /// The `window_start_s` column.
    pub const WINDOW_START_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "window_start_s",
            dtype: "u64",
            unit: "s",
            meaning: "the measurement window [t₀, t₁]: t₀ = the first submit, t₁ = the last event, unless a warm-up or cool-down is trimmed (see below)",
        },
        value: |s| Cell::U64(s.window.start_s),
    };
    /// The `window_end_s` column.
    pub const WINDOW_END_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "window_end_s",
            dtype: "u64",
            unit: "s",
            meaning: "the measurement window [t₀, t₁]: t₀ = the first submit, t₁ = the last event, unless a warm-up or cool-down is trimmed (see below)",
        },
        value: |s| Cell::U64(s.window.end_s),
    };
    /// The `window_jobs` column.
    pub const WINDOW_JOBS: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "window_jobs",
            dtype: "u64",
            unit: "",
            meaning: "jobs run whose submit lies in [t₀, t₁]: the population of the `window_*` job statistics",
        },
        value: |s| Cell::U64(s.window.jobs),
    };
    /// The `window_wait_mean_s` column.
    pub const WINDOW_WAIT_MEAN_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "window_wait_mean_s",
            dtype: "f64",
            unit: "s",
            meaning: "w over those jobs: mean, median, nearest-rank 95th and 99th percentiles",
        },
        value: |s| Cell::F64(s.window.wait_mean_s),
    };
    /// The `window_wait_median_s` column.
    pub const WINDOW_WAIT_MEDIAN_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "window_wait_median_s",
            dtype: "f64",
            unit: "s",
            meaning: "w over those jobs: mean, median, nearest-rank 95th and 99th percentiles",
        },
        value: |s| Cell::F64(s.window.wait_median_s),
    };
    /// The `window_wait_p95_s` column.
    pub const WINDOW_WAIT_P95_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "window_wait_p95_s",
            dtype: "f64",
            unit: "s",
            meaning: "w over those jobs: mean, median, nearest-rank 95th and 99th percentiles",
        },
        value: |s| Cell::F64(s.window.wait_p95_s),
    };
    /// The `window_wait_p99_s` column.
    pub const WINDOW_WAIT_P99_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "window_wait_p99_s",
            dtype: "f64",
            unit: "s",
            meaning: "w over those jobs: mean, median, nearest-rank 95th and 99th percentiles",
        },
        value: |s| Cell::F64(s.window.wait_p99_s),
    };
    /// The `window_bsd_mean` column.
    pub const WINDOW_BSD_MEAN: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "window_bsd_mean",
            dtype: "f64",
            unit: "",
            meaning: "bounded slowdown (τ = 10 s) over those jobs",
        },
        value: |s| Cell::F64(s.window.bsd_mean),
    };
    /// The `window_bsd_median` column.
    pub const WINDOW_BSD_MEDIAN: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "window_bsd_median",
            dtype: "f64",
            unit: "",
            meaning: "bounded slowdown (τ = 10 s) over those jobs",
        },
        value: |s| Cell::F64(s.window.bsd_median),
    };
    /// The `window_bsd_p95` column.
    pub const WINDOW_BSD_P95: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "window_bsd_p95",
            dtype: "f64",
            unit: "",
            meaning: "bounded slowdown (τ = 10 s) over those jobs",
        },
        value: |s| Cell::F64(s.window.bsd_p95),
    };
    /// The `window_bsd_p99` column.
    pub const WINDOW_BSD_P99: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "window_bsd_p99",
            dtype: "f64",
            unit: "",
            meaning: "bounded slowdown (τ = 10 s) over those jobs",
        },
        value: |s| Cell::F64(s.window.bsd_p99),
    };
    /// The `killed_fraction` column.
    pub const KILLED_FRACTION: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "killed_fraction",
            dtype: "f64",
            unit: "fraction",
            meaning: "share of those jobs killed at their walltime",
        },
        value: |s| Cell::F64(s.window.killed_fraction),
    };
    /// The `spanning_fraction` column.
    pub const SPANNING_FRACTION: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "spanning_fraction",
            dtype: "f64",
            unit: "fraction",
            meaning: "share of those jobs with S > 1",
        },
        value: |s| Cell::F64(s.window.spanning_fraction),
    };
    /// The `sets_spanned_mean` column.
    pub const SETS_SPANNED_MEAN: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "sets_spanned_mean",
            dtype: "f64",
            unit: "sets",
            meaning: "mean S over those jobs",
        },
        value: |s| Cell::F64(s.window.sets_spanned_mean),
    };
    /// The `cross_set_pairs_mean` column.
    pub const CROSS_SET_PAIRS_MEAN: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "cross_set_pairs_mean",
            dtype: "f64",
            unit: "",
            meaning: "mean X over those jobs",
        },
        value: |s| Cell::F64(s.window.cross_set_pairs_mean),
    };
    /// The `window_throughput_jobs_per_hour` column.
    pub const WINDOW_THROUGHPUT_JOBS_PER_HOUR: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "window_throughput_jobs_per_hour",
            dtype: "f64",
            unit: "jobs/h",
            meaning: "X = jobs whose end lies in [t₀, t₁] × 3600 / (t₁ − t₀)",
        },
        value: |s| Cell::F64(s.window.throughput_jobs_per_hour),
    };
    /// The `work_core_hours_per_hour` column.
    pub const WORK_CORE_HOURS_PER_HOUR: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "work_core_hours_per_hour",
            dtype: "f64",
            unit: "cores",
            meaning: "work throughput: Σ_j size_j × |[s_j, c_j] ∩ [t₀, t₁]| / (H_j C_j ε_j) / (t₁ − t₀), the trace-runtime core-seconds done per second (job-count-neutral; the measure for the Moab throughput claim)",
        },
        value: |s| Cell::F64(s.window.work_core_hours_per_hour),
    };
    /// The `utilization_allocated` column.
    pub const UTILIZATION_ALLOCATED: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "utilization_allocated",
            dtype: "f64",
            unit: "fraction",
            meaning: "U_alloc = ∫_{t₀}^{t₁} (ncpus held by jobs) dt / (N (t₁ − t₀)), N the cluster's ncpus",
        },
        value: |s| Cell::F64(s.window.utilization_allocated),
    };
    /// The `utilization_useful` column.
    pub const UTILIZATION_USEFUL: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "utilization_useful",
            dtype: "f64",
            unit: "fraction",
            meaning: "U_useful = `work_core_hours_per_hour` / N: allocated time discounted by the runtime model's stretch, so work on slow or remote vnodes counts for less (it can exceed U_alloc when vnodes are faster than the reference speed)",
        },
        value: |s| Cell::F64(s.window.utilization_useful),
    };
    /// The `efficiency` column.
    pub const EFFICIENCY: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "efficiency",
            dtype: "f64",
            unit: "",
            meaning: "η = U_useful / U_alloc",
        },
        value: |s| Cell::F64(s.window.efficiency),
    };
    /// The `loss_of_capacity` column.
    pub const LOSS_OF_CAPACITY: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "loss_of_capacity",
            dtype: "f64",
            unit: "fraction",
            meaning: "LoC = ∫ e(t) δ(t) dt / (N (t₁ − t₀)): e(t) the ncpus of idle vnodes (up, no job), δ(t) = 1 while a job waits (Zhang et al. 2003)",
        },
        value: |s| {
            let o = &s.window.occupancy;
            Cell::F64(o.of_capacity(o.idle_while_waiting_ncpu_seconds))
        },
    };
    /// The `loss_of_capacity_frag` column.
    pub const LOSS_OF_CAPACITY_FRAG: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "loss_of_capacity_frag",
            dtype: "f64",
            unit: "fraction",
            meaning: "LoC_frag: the same, counted only while some waiting job asks for at most e(t) ncpus (Cobalt qsim's variant: the job fits by count but not by shape)",
        },
        value: |s| {
            let o = &s.window.occupancy;
            Cell::F64(o.of_capacity(o.idle_while_fitting_ncpu_seconds))
        },
    };
    /// The `head_blocked_idle` column.
    pub const HEAD_BLOCKED_IDLE: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "head_blocked_idle",
            dtype: "f64",
            unit: "fraction",
            meaning: "B = ∫ 1[h blocked] F(t) dt / (N (t₁ − t₀)); F(t) = Σ_k f_k(t), f_k the free ncpus in set k on vnodes that can take a job (up, not held exclusively); the head h is the first job of the queue, blocked when it still waits after the instant's pass",
        },
        value: |s| {
            let o = &s.window.occupancy;
            Cell::F64(o.of_capacity(o.head_blocked_free_ncpu_seconds))
        },
    };
    /// The `set_fragmentation_time` column.
    pub const SET_FRAGMENTATION_TIME: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "set_fragmentation_time",
            dtype: "f64",
            unit: "fraction",
            meaning: "E_set = ∫ 1[h blocked ∧ F(t) ≥ n_h ∧ max_k f_k(t) < n_h] dt / (t₁ − t₀), n_h the head's ncpus: enough free ncpus in total, but in no one set",
        },
        value: |s| {
            let o = &s.window.occupancy;
            Cell::F64(o.per_second(o.set_blocked_seconds as f64))
        },
    };
    /// The `set_fragmentation_ncpu` column.
    pub const SET_FRAGMENTATION_NCPU: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "set_fragmentation_ncpu",
            dtype: "f64",
            unit: "fraction",
            meaning: "E_set weighted by F(t)/N: ∫ 1[…] F(t) dt / (N (t₁ − t₀))",
        },
        value: |s| {
            let o = &s.window.occupancy;
            Cell::F64(o.of_capacity(o.set_blocked_free_ncpu_seconds))
        },
    };
    /// The `fragmentation_mean` column.
    pub const FRAGMENTATION_MEAN: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "fragmentation_mean",
            dtype: "f64, nullable",
            unit: "",
            meaning: "Φ = 1 − Σ_k f_k² / F² (Gehr & Schneider 2009; evalys), averaged over the time in [t₀, t₁] with F > 0; null if F was always 0. 0 when all free ncpus lie in one set, up to 1 − 1/K when they are spread evenly over K sets",
        },
        value: |s| {
            let o = &s.window.occupancy;
            Cell::NullableF64(o.while_free(o.fragmentation_seconds))
        },
    };
    /// The `largest_free_share_mean` column.
    pub const LARGEST_FREE_SHARE_MEAN: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "largest_free_share_mean",
            dtype: "f64, nullable",
            unit: "",
            meaning: "L = max_k f_k / F, averaged over the same time",
        },
        value: |s| {
            let o = &s.window.occupancy;
            Cell::NullableF64(o.while_free(o.largest_free_share_seconds))
        },
    };
    /// The `queue_length_mean` column.
    pub const QUEUE_LENGTH_MEAN: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "queue_length_mean",
            dtype: "f64",
            unit: "jobs",
            meaning: "∫ (jobs waiting) dt / (t₁ − t₀)",
        },
        value: |s| {
            let o = &s.window.occupancy;
            Cell::F64(o.per_second(o.queue_job_seconds as f64))
        },
    };
    /// The `events` column.
    pub const EVENTS: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "events",
            dtype: "u64",
            unit: "",
            meaning: "simulated events processed (one submit and one end per job run, one per vnode going down or up, one per scheduler wake-up)",
        },
        value: |s| Cell::U64(s.events),
    };
    /// The `passes` column.
    pub const PASSES: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "passes",
            dtype: "u64",
            unit: "",
            meaning: "scheduling passes run (at most one per distinct event instant)",
        },
        value: |s| Cell::U64(s.passes),
    };
    /// The `wall_seconds` column.
    pub const WALL_SECONDS: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "wall_seconds",
            dtype: "f64, nullable",
            unit: "s",
            meaning: "wall-clock time of the simulation loop (not reading the trace or writing the summary; it includes handing finished row groups of jobs.parquet to the writer thread); null under `--no-timing`",
        },
        value: |s| Cell::NullableF64(s.timing.map(|t| t.wall_seconds)),
    };
    /// The `events_per_second` column.
    pub const EVENTS_PER_SECOND: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "events_per_second",
            dtype: "f64, nullable",
            unit: "events/s",
            meaning: "events / wall_seconds; null under `--no-timing`",
        },
        value: |s| Cell::NullableF64(s.events_per_second()),
    };
    /// The `fidelity_jobs` column.
    pub const FIDELITY_JOBS: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "fidelity_jobs",
            dtype: "u64, nullable",
            unit: "",
            meaning: "recorded jobs that started in the run too (jobs running at time 0 left out); null without a recorded file (`[workload] recorded`, written by `placesim import pbs`)",
        },
        value: |s| Cell::NullableU64(s.fidelity.as_ref().map(|f| f.jobs_compared)),
    };
    /// The `fidelity_jobs_not_compared` column.
    pub const FIDELITY_JOBS_NOT_COMPARED: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "fidelity_jobs_not_compared",
            dtype: "u64, nullable",
            unit: "",
            meaning: "jobs of the run or of the record not compared: never started in the run, or missing from the other side",
        },
        value: |s| Cell::NullableU64(s.fidelity.as_ref().map(|f| f.jobs_not_compared)),
    };
    /// The `start_error_p10_s` column.
    pub const START_ERROR_P10_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "start_error_p10_s",
            dtype: "f64, nullable",
            unit: "s",
            meaning: "10th percentile (nearest rank, as `wait_p95_s`) of simulated start − recorded start over the compared jobs",
        },
        value: |s| Cell::NullableF64(s.fidelity.as_ref().and_then(|f| f.start_error_p10_s)),
    };
    /// The `start_error_p50_s` column.
    pub const START_ERROR_P50_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "start_error_p50_s",
            dtype: "f64, nullable",
            unit: "s",
            meaning: "median (nearest rank) of simulated start − recorded start",
        },
        value: |s| Cell::NullableF64(s.fidelity.as_ref().and_then(|f| f.start_error_p50_s)),
    };
    /// The `start_error_p90_s` column.
    pub const START_ERROR_P90_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "start_error_p90_s",
            dtype: "f64, nullable",
            unit: "s",
            meaning: "90th percentile (nearest rank) of simulated start − recorded start",
        },
        value: |s| Cell::NullableF64(s.fidelity.as_ref().and_then(|f| f.start_error_p90_s)),
    };
    /// The `start_error_mean_abs_s` column.
    pub const START_ERROR_MEAN_ABS_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "start_error_mean_abs_s",
            dtype: "f64, nullable",
            unit: "s",
            meaning: "mean of |simulated start − recorded start|",
        },
        value: |s| Cell::NullableF64(s.fidelity.as_ref().and_then(|f| f.start_error_mean_abs_s)),
    };
    /// The `wait_error_mean_s` column.
    pub const WAIT_ERROR_MEAN_S: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "wait_error_mean_s",
            dtype: "f64, nullable",
            unit: "s",
            meaning: "mean of simulated wait − recorded wait (recorded wait from the replay's submission: a job queued before time 0 is submitted at 0)",
        },
        value: |s| Cell::NullableF64(s.fidelity.as_ref().and_then(|f| f.wait_error_mean_s)),
    };
    /// The `wait_mape_2w` column.
    pub const WAIT_MAPE_2W: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "wait_mape_2w",
            dtype: "f64, nullable",
            unit: "%",
            meaning: "mean absolute percentage error of the two-week moving-average wait: for each hour from a week after the first submission to a week before the last, the mean wait of the compared jobs submitted within a week either side, |simulated − recorded| / recorded, hours with a recorded mean of 0 left out; under two weeks, one window of every job (FastSim's measure, site-inputs.md §10)",
        },
        value: |s| Cell::NullableF64(s.fidelity.as_ref().and_then(|f| f.wait_mape_2w)),
    };
    /// The `placement_same_vnodes` column.
    pub const PLACEMENT_SAME_VNODES: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "placement_same_vnodes",
            dtype: "f64, nullable",
            unit: "fraction",
            meaning: "share of compared jobs with recorded vnodes that the run placed on exactly those vnodes (needs `exec_vnode` kept)",
        },
        value: |s| Cell::NullableF64(s.fidelity.as_ref().and_then(|f| f.placement_same_vnodes)),
    };
    /// The `placement_same_set` column.
    pub const PLACEMENT_SAME_SET: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "placement_same_set",
            dtype: "f64, nullable",
            unit: "fraction",
            meaning: "share of compared jobs recorded inside one set of the topology key (the key `sets_spanned` counts) that the run placed inside that same set",
        },
        value: |s| Cell::NullableF64(s.fidelity.as_ref().and_then(|f| f.placement_same_set)),
    };
    /// The `placement_recorded_spanning` column.
    pub const PLACEMENT_RECORDED_SPANNING: SummaryColumn = SummaryColumn {
        def: ColumnDef {
            name: "placement_recorded_spanning",
            dtype: "u64, nullable",
            unit: "",
            meaning: "compared jobs whose recorded vnodes span sets of the topology key, left out of `placement_same_set`",
        },
        value: |s| Cell::NullableU64(s.fidelity.as_ref().map(|f| f.placement_recorded_spanning)),
    };

    /// Every column, in file order.
    pub const ALL: &[SummaryColumn] = &[
        SCENARIO,
        POLICY,
        SEED,
        TRACE,
        PROCS,
        RECORDS,
        JOBS_RUN,
        JOBS_KILLED,
        JOBS_NEVER_STARTED,
        JOBS_REJECTED,
        JOBS_DELETED,
        JOBS_FAILED,
        REQUEUES,
        LOST_CORE_S,
        AVAILABILITY,
        SKIPPED_NO_SIZE,
        SKIPPED_NEGATIVE_RUNTIME,
        SKIPPED_TOO_LARGE,
        SKIPPED_NEGATIVE_SUBMIT,
        SKIPPED_PARTIAL_EXECUTION,
        SKIPPED_BAD_LINE,
        MAKESPAN_S,
        UTILIZATION,
        WAIT_MEAN_S,
        WAIT_MEDIAN_S,
        WAIT_P95_S,
        BSD_MEAN,
        THROUGHPUT_JOBS_PER_HOUR,
        WINDOW_START_S,
        WINDOW_END_S,
        WINDOW_JOBS,
        WINDOW_WAIT_MEAN_S,
        WINDOW_WAIT_MEDIAN_S,
        WINDOW_WAIT_P95_S,
        WINDOW_WAIT_P99_S,
        WINDOW_BSD_MEAN,
        WINDOW_BSD_MEDIAN,
        WINDOW_BSD_P95,
        WINDOW_BSD_P99,
        KILLED_FRACTION,
        SPANNING_FRACTION,
        SETS_SPANNED_MEAN,
        CROSS_SET_PAIRS_MEAN,
        WINDOW_THROUGHPUT_JOBS_PER_HOUR,
        WORK_CORE_HOURS_PER_HOUR,
        UTILIZATION_ALLOCATED,
        UTILIZATION_USEFUL,
        EFFICIENCY,
        LOSS_OF_CAPACITY,
        LOSS_OF_CAPACITY_FRAG,
        HEAD_BLOCKED_IDLE,
        SET_FRAGMENTATION_TIME,
        SET_FRAGMENTATION_NCPU,
        FRAGMENTATION_MEAN,
        LARGEST_FREE_SHARE_MEAN,
        QUEUE_LENGTH_MEAN,
        EVENTS,
        PASSES,
        WALL_SECONDS,
        EVENTS_PER_SECOND,
        FIDELITY_JOBS,
        FIDELITY_JOBS_NOT_COMPARED,
        START_ERROR_P10_S,
        START_ERROR_P50_S,
        START_ERROR_P90_S,
        START_ERROR_MEAN_ABS_S,
        WAIT_ERROR_MEAN_S,
        WAIT_MAPE_2W,
        PLACEMENT_SAME_VNODES,
        PLACEMENT_SAME_SET,
        PLACEMENT_RECORDED_SPANNING,
    ];
}

/// The columns of timeseries.parquet, in file order.
pub mod timeseries {
    use super::ColumnDef;

    /// The `scenario` column, as in jobs.parquet.
    pub const SCENARIO: ColumnDef = super::jobs::SCENARIO;
    /// The `policy` column, as in jobs.parquet.
    pub const POLICY: ColumnDef = super::jobs::POLICY;
    /// The `seed` column, as in jobs.parquet.
    pub const SEED: ColumnDef = super::jobs::SEED;
    /// The `time_s` column.
    pub const TIME_S: ColumnDef = ColumnDef {
        name: "time_s",
        dtype: "u64",
        unit: "s",
        meaning: "the sample's simulated time",
    };
    /// The `set` column.
    pub const SET: ColumnDef = ColumnDef {
        name: "set",
        dtype: "string, nullable",
        unit: "",
        meaning: "null for the whole cluster, else the set's value of the topology key",
    };
    /// The `free_ncpus` column.
    pub const FREE_NCPUS: ColumnDef = ColumnDef {
        name: "free_ncpus",
        dtype: "u64",
        unit: "ncpus",
        meaning: "F(t) on the cluster row, f_k(t) on a set's row",
    };
    /// The `ncpus` column.
    pub const NCPUS: ColumnDef = ColumnDef {
        name: "ncpus",
        dtype: "u64",
        unit: "ncpus",
        meaning: "N on the cluster row, the set's ncpus on a set's row",
    };
    /// The `utilization` column.
    pub const UTILIZATION: ColumnDef = ColumnDef {
        name: "utilization",
        dtype: "f64, nullable",
        unit: "fraction",
        meaning: "ncpus held by jobs / N (cluster rows)",
    };
    /// The `queue_length` column.
    pub const QUEUE_LENGTH: ColumnDef = ColumnDef {
        name: "queue_length",
        dtype: "u64, nullable",
        unit: "jobs",
        meaning: "jobs waiting (cluster rows)",
    };
    /// The `down_ncpus` column.
    pub const DOWN_NCPUS: ColumnDef = ColumnDef {
        name: "down_ncpus",
        dtype: "u64, nullable",
        unit: "ncpus",
        meaning: "ncpus of vnodes down (cluster rows)",
    };
    /// The `fragmentation` column.
    pub const FRAGMENTATION: ColumnDef = ColumnDef {
        name: "fragmentation",
        dtype: "f64, nullable",
        unit: "",
        meaning: "Φ(t) (cluster rows; null when F = 0)",
    };
    /// The `largest_free_share` column.
    pub const LARGEST_FREE_SHARE: ColumnDef = ColumnDef {
        name: "largest_free_share",
        dtype: "f64, nullable",
        unit: "",
        meaning: "L(t) (cluster rows; null when F = 0)",
    };
    /// The `head_blocked` column.
    pub const HEAD_BLOCKED: ColumnDef = ColumnDef {
        name: "head_blocked",
        dtype: "bool, nullable",
        unit: "",
        meaning: "whether a job waits (cluster rows)",
    };

    /// Every column, in file order.
    pub const ALL: &[ColumnDef] = &[
        SCENARIO,
        POLICY,
        SEED,
        TIME_S,
        SET,
        FREE_NCPUS,
        NCPUS,
        UTILIZATION,
        QUEUE_LENGTH,
        DOWN_NCPUS,
        FRAGMENTATION,
        LARGEST_FREE_SHARE,
        HEAD_BLOCKED,
    ];
}
