//! A validated run: everything [`crate::execute`] needs, built before the first event.

use crate::RunError;
use placesim_core::{Cluster, NodeFailurePolicy, Outage, RunConfig, WalltimePolicy};
use placesim_policy::{Discipline, PlacementSpec};
use placesim_scenario::{MetricsSettings, Scenario, TraceTexts};
use placesim_workload::Trace;
use std::path::Path;

/// A run, validated: the workload is read, the cluster built, and every request checked
/// against the placement.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The workload, and how its records were accounted for.
    pub trace: Trace,
    /// The machine.
    pub cluster: Cluster,
    /// The queue discipline.
    pub discipline: Discipline,
    /// Per PBS queue (by index): its own `backfill_depth`, if it has one.
    pub queue_depths: Vec<Option<u32>>,
    /// Per PBS queue (by index): its name, for waits.parquet.
    pub queue_names: Vec<String>,
    /// The order of the queue (PBS's `job_sort_key`, `by_queue`, `round_robin`).
    pub order: placesim_policy::queue::JobOrder,
    /// Walltime handling.
    pub config: RunConfig,
    /// The scenario name recorded in every output row.
    pub name: String,
    /// The seed recorded in every output row.
    pub seed: u64,
    /// Stretches runtimes by placement; none for a plain trace replay.
    pub runtime: Option<placesim_core::RuntimeModel>,
    /// The placement: first fit, PBS placement sets or Moab node sets.
    pub placement: PlacementSpec,
    /// Vnode outages, and what they do to running jobs.
    pub outages: Vec<Outage>,
    /// What an outage does to the jobs on its vnode.
    pub on_failure: NodeFailurePolicy,
    /// Check the kernel's invariants at every event (always, in debug builds).
    pub check_invariants: bool,
    /// Samples and the measurement window.
    pub metrics: MetricsSettings,
    /// The sets fragmentation is measured over: the runtime model's topology key.
    pub topology: Option<placesim_core::ResourceId>,
    /// Where the jobs' requests came from (a scenario's requests file and rules).
    pub request_sources: RequestSources,
    /// Each request's text in PBS's syntax, by request id, for jobs.parquet's `request`.
    pub request_texts: std::sync::Arc<Vec<String>>,
    /// Limits (PBS `max_run`, `max_run_res`, `max_queued`, `max_queued_res`): their values
    /// and texts; the workload's requests say which ones each job counts against.
    pub limits: placesim_policy::limits::Limits,
    /// Moab's throttling limits, if the scenario sets any.
    pub throttling: Option<std::sync::Arc<placesim_policy::queue::MoabLimits>>,
    /// The jobs running at t = 0 (the workload's first jobs), each with its vnodes and
    /// amounts.
    pub running_at_start: Vec<(placesim_core::JobId, placesim_scenario::VnodeAmounts)>,
    /// Reservations the site confirmed on named vnodes: held over their windows, and kept
    /// free of other jobs by every discipline.
    pub reservations: Vec<placesim_core::SiteReservation>,
    /// Reservations requested of the scheduler during the run, confirmed or denied by it.
    pub reservation_requests: Vec<placesim_core::ReservationRequest>,
    /// The timeline's job deletions (`qdel`) and extra scheduling cycles.
    pub deletions: Vec<(placesim_core::SimTime, placesim_core::JobId)>,
    /// Extra scheduling cycles.
    pub cycles: Vec<placesim_core::SimTime>,
    /// The timeline's reservation deletions (`pbs_rdel`), by name.
    pub reservation_deletions: Vec<(placesim_core::SimTime, std::sync::Arc<str>)>,
    /// The timeline's entries the outputs list without the kernel acting on them (its
    /// `qmgr` settings, its cycles).
    pub site_notes: Vec<(
        placesim_core::SimTime,
        placesim_core::SiteEvent,
        std::sync::Arc<str>,
    )>,
    /// What really happened to the jobs (`[workload] recorded`), to measure the run against.
    pub recorded: Option<Vec<placesim_metrics::Recorded>>,
    /// Each recorded job's start and vnodes with their amounts (none when the record has
    /// none), for a replay of the record itself.
    pub recorded_runs: Vec<RecordedRun>,
    /// The recorded file `recorded` and `recorded_runs` were read from, to name in errors.
    pub recorded_file: Option<std::path::PathBuf>,
    /// Replay the record itself rather than schedule (`placesim run --as-recorded`): each
    /// job starts when and where it really started.
    pub as_recorded: bool,
    /// The schedulers of `[[pbs.sched]]` besides the default one (which has `discipline`,
    /// `placement` and what is in no partition); none: one scheduler.
    pub partitions: Vec<PartitionPlan>,
}

/// A scheduler of its own, with its partition.
#[derive(Debug, Clone)]
pub struct PartitionPlan {
    /// Its name.
    pub scheduler: String,
    /// Its partition's vnodes.
    pub vnodes: Vec<placesim_core::VnodeId>,
    /// Its partition's queues, by index.
    pub queues: Vec<u32>,
    /// Its discipline.
    pub discipline: Discipline,
    /// Its placement, with its own settings.
    pub placement: PlacementSpec,
    /// The order it walks its jobs in (its own `job_sort_key`).
    pub order: placesim_policy::queue::JobOrder,
}

/// One recorded job as the record's replay starts it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRun {
    /// The job in the workload.
    pub job: placesim_core::JobId,
    /// Its recorded first start, simulated seconds (after 0: jobs running at 0 are
    /// `[[running]]` jobs).
    pub start_s: u64,
    /// Its vnodes and amounts, if the record has them.
    pub vnodes: Option<placesim_scenario::VnodeAmounts>,
}

/// How many jobs got their request from where, for the front end to report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestSources {
    /// From the scenario's requests file.
    pub from_file: u64,
    /// From the jobs' own extended SWF field (`request_field`).
    pub from_field: u64,
    /// Per rule, in file order: how many jobs it gave a request.
    pub by_rule: Vec<u64>,
}

/// Reads and checks a scenario file.
pub fn read_scenario(path: &Path) -> Result<Scenario, RunError> {
    let text = placesim_workload::read_text(path)?;
    Ok(placesim_scenario::load_scenario(&text, path)?)
}

/// [`read_scenario`] for a single run with `seed` (the scenario's own when `None`): a
/// generated workload starts being made while the cluster is built
/// ([`placesim_scenario::load_scenario_generating`]).
pub fn read_scenario_for_run(path: &Path, seed: Option<u64>) -> Result<Scenario, RunError> {
    let text = placesim_workload::read_text(path)?;
    Ok(placesim_scenario::load_scenario_generating(
        &text, path, seed,
    )?)
}

/// A plain replay of `trace` on its machine (`procs_per_node` processors per vnode, first
/// fit, no runtime model, no outages), walltimes killed, seed 0.
pub fn plain_plan(
    trace: Trace,
    procs_per_node: u64,
    discipline: Discipline,
    name: String,
) -> Result<Plan, RunError> {
    let cluster = Cluster::homogeneous(trace.procs, procs_per_node).map_err(RunError::Machine)?;
    Ok(Plan {
        name,
        cluster,
        discipline,
        queue_depths: Vec::new(),
        queue_names: Vec::new(),
        order: Default::default(),
        config: RunConfig {
            cycles: placesim_core::Cycles::EventExact,
            walltime: WalltimePolicy::Kill,
        },
        seed: 0,
        runtime: None,
        placement: PlacementSpec::FirstFit(Default::default()),
        outages: Vec::new(),
        on_failure: NodeFailurePolicy::default(),
        check_invariants: false,
        metrics: MetricsSettings::default(),
        topology: None,
        request_sources: RequestSources::default(),
        request_texts: std::sync::Arc::new(
            trace
                .workload
                .requests()
                .iter()
                .map(plain_request_text)
                .collect(),
        ),
        limits: Default::default(),
        throttling: None,
        running_at_start: Vec::new(),
        reservations: Vec::new(),
        reservation_requests: Vec::new(),
        deletions: Vec::new(),
        cycles: Vec::new(),
        reservation_deletions: Vec::new(),
        site_notes: Vec::new(),
        recorded: None,
        recorded_runs: Vec::new(),
        recorded_file: None,
        as_recorded: false,
        partitions: Vec::new(),
        trace,
    })
}

/// A plain trace's request as PBS writes it: `select=N:ncpus=1`, each chunk complex by its
/// count and ncpus.
fn plain_request_text(request: &placesim_core::Request) -> String {
    let chunks: Vec<String> = request
        .chunks
        .iter()
        .map(|c| {
            format!(
                "{}:ncpus={}",
                c.count,
                c.amounts
                    .get(placesim_core::ConsumableIdx::NCPUS.index())
                    .copied()
                    .unwrap_or(0)
            )
        })
        .collect();
    format!("select={}", chunks.join("+"))
}

/// The plan of a loaded scenario (read from `path`): its workload, placement, discipline
/// (unless `discipline` overrides it), runtime model and outages. Traces already in `texts`
/// are parsed from there. A job whose request the placement cannot honour is refused here,
/// before any run.
pub fn plan_of_scenario(
    scenario: Scenario,
    path: &Path,
    discipline: Option<Discipline>,
    texts: &TraceTexts,
) -> Result<Plan, RunError> {
    let loaded = scenario.workload_with(texts)?;
    let mut trace = loaded.trace;
    let mut request_texts = loaded.request_texts;
    let (workload, copied_from, limits) = placesim_policy::limits::apply_limits(
        std::mem::take(&mut trace.workload),
        &scenario.pbs.limits,
    );
    trace.workload = workload;
    for origin in copied_from {
        let text = request_texts
            .get(origin.index())
            .cloned()
            .unwrap_or_default();
        request_texts.push(text);
    }
    let spec = scenario.placement(&trace.workload);
    let partitions = scenario
        .partitions
        .iter()
        .map(|p| PartitionPlan {
            scheduler: p.scheduler.clone(),
            vnodes: p.vnodes.clone(),
            queues: p.queues.clone(),
            discipline: p.discipline,
            placement: scenario.partition_placement(&trace.workload, p),
            order: p.order.clone(),
        })
        .collect();
    let placement = spec.policy();
    for (i, request) in trace.workload.requests().iter().enumerate() {
        if let Some(what) = placement.unsupported(request) {
            let job = trace
                .workload
                .jobs()
                .iter()
                .find(|j| j.request.index() == i)
                .map_or(0, |j| j.source_id);
            return Err(RunError::Unsupported {
                path: path.to_owned(),
                job,
                what,
                placement: placement.name(),
            });
        }
    }
    if let Some((r, what)) = scenario
        .reservation_requests
        .iter()
        .find_map(|r| placement.unsupported(&r.request).map(|what| (r, what)))
    {
        return Err(RunError::UnsupportedReservation {
            path: path.to_owned(),
            name: r.name.to_string(),
            what,
            placement: placement.name(),
        });
    }
    let deletions = deletions_of(&scenario, path, &trace.workload)?;
    let runtime = Some(scenario.runtime_model(&trace.workload));
    let outages = scenario.outages(&trace.workload)?;
    let (recorded, recorded_runs) =
        match scenario.workload.as_ref().and_then(|w| w.recorded.as_ref()) {
            Some(file) => {
                let (recorded, runs) = read_recorded(file, &scenario.cluster, &trace.workload)?;
                (Some(recorded), runs)
            }
            None => (None, Vec::new()),
        };
    Ok(Plan {
        outages,
        on_failure: scenario.failures.on_failure,
        check_invariants: false,
        metrics: scenario.metrics,
        topology: scenario.runtime.settings.topology,
        name: scenario.name.clone(),
        cluster: scenario.cluster,
        discipline: discipline.unwrap_or(scenario.run.discipline),
        queue_depths: scenario
            .pbs
            .queues
            .iter()
            .map(|q| q.backfill_depth)
            .collect(),
        queue_names: scenario.pbs.queues.iter().map(|q| q.name.clone()).collect(),
        // At most one of them orders the queue (the scenario refuses both).
        order: {
            let mut order = if scenario.pbs.order.is_submit_order() {
                scenario.moab.order.clone()
            } else {
                scenario.pbs.order.clone()
            };
            if !limits.run.values.is_empty() {
                order.ineligible_limits =
                    Some(std::sync::Arc::from(limits.run.stop_eligibility.as_slice()));
            }
            order
        },
        config: RunConfig {
            cycles: scenario.run.cycles,
            walltime: scenario.run.walltime,
        },
        seed: scenario.run.seed,
        runtime,
        trace,
        placement: spec,
        request_sources: RequestSources {
            from_file: loaded.from_file,
            from_field: loaded.from_field,
            by_rule: loaded.by_rule,
        },
        request_texts: std::sync::Arc::new(request_texts),
        limits,
        throttling: scenario.moab.limits.clone(),
        running_at_start: scenario
            .running
            .iter()
            .enumerate()
            .map(|(i, r)| (placesim_core::JobId::from_index(i), r.vnodes.clone()))
            .collect(),
        reservations: scenario.reservations.clone(),
        reservation_requests: scenario.reservation_requests.clone(),
        deletions,
        cycles: scenario.timeline.cycles.clone(),
        reservation_deletions: scenario.timeline.reservation_deletions.clone(),
        site_notes: scenario.timeline.notes.clone(),
        recorded,
        recorded_runs,
        recorded_file: scenario.workload.as_ref().and_then(|w| w.recorded.clone()),
        as_recorded: false,
        partitions,
    })
}

/// The timeline's deletions with their jobs found in `workload`: each must name a job of the
/// trace submitted before it (a `qdel` at the job's own submit would find it not there yet).
fn deletions_of(
    scenario: &Scenario,
    path: &Path,
    workload: &placesim_core::Workload,
) -> Result<Vec<(placesim_core::SimTime, placesim_core::JobId)>, RunError> {
    // Most scenarios delete nothing: no map of a large workload's jobs is made for them.
    if scenario.timeline.deletions.is_empty() {
        return Ok(Vec::new());
    }
    let by_source: std::collections::HashMap<u64, usize> = workload
        .jobs()
        .iter()
        .enumerate()
        .map(|(i, j)| (j.source_id, i))
        .collect();
    scenario
        .timeline
        .deletions
        .iter()
        .map(|&(at, id, line)| {
            let error = |message: String| RunError::Timeline {
                path: path.to_owned(),
                line,
                message,
            };
            let &i = by_source
                .get(&id)
                .ok_or_else(|| error(format!("job {id} is not in the workload")))?;
            let submit = workload.jobs()[i].submit;
            if submit >= at {
                return Err(error(format!(
                    "job {id} is submitted at {} s: a qdel at {} s comes before it is there",
                    submit.as_secs(),
                    at.as_secs()
                )));
            }
            Ok((at, placesim_core::JobId::from_index(i)))
        })
        .collect()
}

impl Plan {
    /// Whether the record can be replayed as it stands (`--as-recorded`), so that a record
    /// that does not hold together is named, file and job, before the run: every job of the
    /// workload not running at the start (`[[running]]`) has a recorded first start at or
    /// after time 0, and every recorded allocation fits its vnodes and gives the job the
    /// ncpus its request asks for. Otherwise a job would wait for ever for vnodes it cannot
    /// have, and be reported only as never started, or the kernel would stop the run at its
    /// start as a policy's error. Overlaps between jobs are not refused: a job whose
    /// recorded vnodes are held waits until they are free (a requeued job's record can
    /// overlap another's).
    pub(crate) fn check_record_replays(&self) -> Result<(), RunError> {
        let (Some(path), Some(recorded)) = (&self.recorded_file, &self.recorded) else {
            return Err(RunError::NoRecord);
        };
        let workload = &self.trace.workload;
        let not_replayable = |job: u64, message: String| RunError::RecordNotReplayable {
            path: path.clone(),
            job,
            message,
        };
        let mut replayed = vec![false; workload.jobs().len()];
        for (job, _) in &self.running_at_start {
            replayed[job.index()] = true;
        }
        let defs = self.cluster.resources();
        let n_cons = defs.n_consumables();
        let mut on_vnode = vec![0u64; n_cons];
        for run in &self.recorded_runs {
            replayed[run.job.index()] = true;
            let Some(vnodes) = &run.vnodes else {
                continue;
            };
            let number = workload.job(run.job).source_id;
            // A vnode may be named in several parts of one exec_vnode: its parts are summed,
            // found together by a sort (a job of thousands of vnodes is common).
            let mut parts: Vec<&(placesim_core::VnodeId, Vec<u64>)> = vnodes.iter().collect();
            parts.sort_unstable_by_key(|(v, _)| *v);
            for same_vnode in parts.chunk_by(|a, b| a.0 == b.0) {
                let v = same_vnode[0].0;
                on_vnode.fill(0);
                for (_, amounts) in same_vnode {
                    for (held, &a) in on_vnode.iter_mut().zip(amounts) {
                        *held = held.saturating_add(a);
                    }
                }
                let capacity = self.cluster.capacity(v);
                if let Some(c) = (0..n_cons).find(|&c| on_vnode[c] > capacity[c]) {
                    let def = defs.def(defs.consumables()[c]);
                    // Amounts as PBS writes them (`4gb`), not in the base unit.
                    let amount = |a: u64| {
                        let mut text = String::new();
                        let _ = placesim_core::write_amount(&mut text, def.kind, a);
                        text
                    };
                    return Err(not_replayable(
                        number,
                        format!(
                            "vnode `{}` has {}={}, and the record gives the job {}={}",
                            self.cluster.vnode(v).name(),
                            def.name,
                            amount(capacity[c]),
                            def.name,
                            amount(on_vnode[c])
                        ),
                    ));
                }
            }
            let ncpus: u64 = vnodes
                .iter()
                .map(|(_, a)| a.first().copied().unwrap_or(0))
                .fold(0, u64::saturating_add);
            let asked = workload
                .request_of(run.job)
                .total(placesim_core::ConsumableIdx::NCPUS);
            if ncpus != asked {
                return Err(not_replayable(
                    number,
                    format!(
                        "the record gives the job {ncpus} ncpus, and its request asks for \
                         {asked} (a job starts only on the ncpus it asks for)"
                    ),
                ));
            }
        }
        if let Some(i) = replayed.iter().position(|&r| !r) {
            let number = workload.jobs()[i].source_id;
            let message = match recorded.iter().find(|r| r.job_id == number) {
                None => "no line, and --as-recorded starts each job of the workload when \
                         and where its line says"
                    .to_owned(),
                Some(r) => format!(
                    "its first start, {} s, is before time 0, and the scenario does not run it \
                     from the start (`[[running]]`)",
                    r.first_start_s
                ),
            };
            return Err(not_replayable(number, message));
        }
        Ok(())
    }
}

/// A recorded file, its vnode names resolved on `cluster`, and each of its jobs of
/// `workload` that started after 0 as the record's replay starts it; a name the cluster
/// lacks, or an `exec_vnode` that does not read, is an error naming the file and the job.
fn read_recorded(
    path: &Path,
    cluster: &placesim_core::Cluster,
    workload: &placesim_core::Workload,
) -> Result<(Vec<placesim_metrics::Recorded>, Vec<RecordedRun>), RunError> {
    let jobs = placesim_workload::recorded::read_recorded(path)?;
    // Names resolved through one map: a site's record names its vnodes once per job.
    let ids: std::collections::HashMap<&str, placesim_core::VnodeId> = (0..cluster.n_vnodes())
        .map(placesim_core::VnodeId::from_index)
        .map(|v| (cluster.vnode(v).name(), v))
        .collect();
    let resolve = |job: u64, name: &str| {
        ids.get(name).copied().ok_or_else(|| RunError::Recorded {
            path: path.to_owned(),
            job,
            vnode: name.to_owned(),
        })
    };
    let by_source: std::collections::HashMap<u64, placesim_core::JobId> = workload
        .jobs()
        .iter()
        .enumerate()
        .map(|(i, j)| (j.source_id, placesim_core::JobId::from_index(i)))
        .collect();
    let mut runs = Vec::new();
    for j in &jobs {
        let (Some(&job), Ok(start_s)) = (by_source.get(&j.job_id), u64::try_from(j.first_start_s))
        else {
            continue;
        };
        let vnodes = if j.exec_vnode == "-" || j.exec_vnode.is_empty() {
            None
        } else {
            let parsed = placesim_request::parse_exec_vnode(&j.exec_vnode, cluster.resources())
                .map_err(|e| RunError::RecordedExecVnode {
                    path: path.to_owned(),
                    job: j.job_id,
                    message: format!("`{}`: {e}", j.exec_vnode),
                })?;
            let mut vnodes = Vec::with_capacity(parsed.len());
            for part in parsed {
                vnodes.push((resolve(j.job_id, &part.vnode)?, part.amounts));
            }
            Some(vnodes)
        };
        runs.push(RecordedRun {
            job,
            start_s,
            vnodes,
        });
    }
    jobs.into_iter()
        .map(|j| {
            let vnodes = j
                .vnodes
                .iter()
                .map(|n| resolve(j.job_id, n))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(placesim_metrics::Recorded {
                job_id: j.job_id,
                first_start_s: j.first_start_s,
                vnodes,
            })
        })
        .collect::<Result<Vec<_>, RunError>>()
        .map(|recorded| (recorded, runs))
}

/// The trace's file name without `.gz` and `.swf`: the default scenario name.
pub fn trace_stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    name.strip_suffix(".swf").unwrap_or(name).to_owned()
}
