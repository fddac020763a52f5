//! Executing a plan: the simulation, and its Parquet files.

use crate::{Plan, RunError};
use placesim_core::{
    Cluster, ClusterState, ConsumableIdx, PlacementPolicy, Progress, RunStats, SchedulingPolicy,
    Sharing, Simulation,
};
use placesim_metrics::{
    JobSink, OccupancyConfig, RunMeta, RunSummary, StreamingJobSink, Timing, write_reservations,
    write_summary, write_vnodes,
};
use placesim_policy::Discipline;
use std::path::Path;
use std::time::{Duration, Instant};

/// How a run writes `jobs.parquet`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output<'a> {
    /// Row groups are encoded by a writer thread while the run goes on, so a lone run uses
    /// the core the single-threaded simulation leaves idle, and the table's memory does not
    /// grow with the trace.
    Streamed(&'a Path),
    /// Row groups are encoded and written on the run's own thread as soon as they are whole
    /// ([`StreamingJobSink::on_this_thread`]): for sweeps, which run one simulation per core.
    /// The table's memory does not grow with the trace either.
    OnRunThread(&'a Path),
}

impl Output<'_> {
    /// The directory the files go to.
    pub fn dir(&self) -> &Path {
        match self {
            Output::Streamed(dir) | Output::OnRunThread(dir) => dir,
        }
    }
}

/// Whether summary.parquet records the wall-clock time of the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// It does: the speed figures a front end prints come from it.
    Timed,
    /// Its wall-clock columns are nulls, so the same input gives byte-identical files.
    Untimed,
}

/// What a finished run leaves for the front end to report.
#[derive(Debug, Clone)]
pub struct Executed {
    /// The run's summary, as summary.parquet holds it.
    pub summary: RunSummary,
    /// How long writing the files took after the simulation ended.
    pub writing: Duration,
}

/// Where the jobs running at t = 0 run: each vnode once (amounts of a vnode named twice
/// added), held shared, with the draws its request counts against run limits.
fn running_allocations(
    plan: &Plan,
    cluster: &placesim_core::Cluster,
) -> Vec<(placesim_core::JobId, placesim_core::Allocation)> {
    plan.running_at_start
        .iter()
        .map(|(job, vnodes)| {
            // Shared, or exclusive where the vnodes' sharing makes every job so.
            let sharing = match plan.trace.workload.request_of(*job).sharing {
                Sharing::Shared => Sharing::Shared,
                Sharing::Excl | Sharing::ExclHost => Sharing::Excl,
            };
            let allocation = allocation_of(plan, cluster, *job, vnodes, sharing);
            (*job, allocation)
        })
        .collect()
}

/// `job`'s allocation of `vnodes` with their amounts, held with `sharing` and counting
/// against its request's limits.
fn allocation_of(
    plan: &Plan,
    cluster: &placesim_core::Cluster,
    job: placesim_core::JobId,
    vnodes: &placesim_scenario::VnodeAmounts,
    sharing: Sharing,
) -> placesim_core::Allocation {
    let n_cons = cluster.resources().n_consumables();
    let mut allocation = placesim_core::Allocation::new(sharing);
    allocation.limit_draws = plan.trace.workload.request_of(job).limit_draws.clone();
    let mut part = vec![0; n_cons];
    for (v, amounts) in vnodes {
        part.fill(0);
        for (p, &a) in part.iter_mut().zip(amounts) {
            *p = a;
        }
        allocation.add(*v, &part);
    }
    allocation
}

/// The replay of the record itself: each job when and where it really started, held as
/// its request says (shared or exclusive).
fn as_recorded(
    plan: &Plan,
    cluster: &placesim_core::Cluster,
    placement: Box<dyn placesim_core::PlacementPolicy>,
) -> Box<dyn SchedulingPolicy> {
    let workload = &plan.trace.workload;
    let runs = plan.recorded_runs.iter().map(|r| {
        let sharing = match workload.request_of(r.job).sharing {
            Sharing::Shared => Sharing::Shared,
            Sharing::Excl | Sharing::ExclHost => Sharing::Excl,
        };
        let allocation = r
            .vnodes
            .as_ref()
            .map(|vnodes| allocation_of(plan, cluster, r.job, vnodes, sharing));
        (r.job, placesim_core::SimTime(r.start_s), allocation)
    });
    Box::new(placesim_policy::queue::AsRecorded::new(
        placement,
        workload.jobs().len(),
        runs,
    ))
}

/// `placement` under the run's limits, if it has any.
fn limited(plan: &Plan, placement: Box<dyn PlacementPolicy>) -> Box<dyn PlacementPolicy> {
    if plan.limits.run.values.is_empty() {
        placement
    } else {
        Box::new(placesim_policy::placement::Limited::new(
            placement,
            plan.limits.run.texts.clone(),
        ))
    }
}

/// One scheduler: `discipline` over `placement` (under the run's limits), with Moab's
/// throttling where the plan has it, walking the queue in `order` (the plan's, or one
/// scheduler's own).
fn scheduler(
    plan: &Plan,
    discipline: Discipline,
    placement: Box<dyn PlacementPolicy>,
    order: &placesim_policy::queue::JobOrder,
) -> Box<dyn SchedulingPolicy> {
    let mut policy = discipline.build_for(limited(plan, placement), &plan.queue_depths);
    // Moab's throttling sees the queue in its order, so it goes inside the order's adapter.
    if let Some(limits) = &plan.throttling {
        policy = Box::new(placesim_policy::queue::Throttled::new(
            policy,
            limits.clone(),
        ));
    }
    // A queue in another order than submission: the discipline walks it sorted.
    if !order.is_submit_order() {
        policy = Box::new(placesim_policy::queue::Ordered::new(policy, order.clone()));
    }
    policy
}

/// PBS's schedulers side by side: the default one (`discipline`, the plan's placement) with
/// the vnodes and queues of no partition, then each `[[pbs.sched]]` with its partition's.
fn partitioned_schedulers(
    plan: &Plan,
    cluster: &Cluster,
    discipline: Discipline,
) -> Box<dyn SchedulingPolicy> {
    let n = cluster.n_vnodes();
    let mut in_partition = placesim_core::Bitset::new(n);
    let mut in_queue_partition = vec![false; plan.queue_names.len()];
    for p in &plan.partitions {
        for v in &p.vnodes {
            in_partition.set(v.index(), true);
        }
        for &q in &p.queues {
            in_queue_partition[q as usize] = true;
        }
    }
    let mut default_vnodes = placesim_core::Bitset::new(n);
    for v in (0..n).filter(|&v| !in_partition.contains(v)) {
        default_vnodes.set(v, true);
    }
    let part = |name: &str,
                vnodes: placesim_core::Bitset,
                queues: Box<dyn Fn(Option<u32>) -> bool + Send>,
                discipline: Discipline,
                spec: &placesim_policy::PlacementSpec,
                order: &placesim_policy::queue::JobOrder| {
        // Each instance tracks its sets in a state of its own; its views track them again.
        let placement = spec.instance(&mut ClusterState::new(cluster.clone()));
        placesim_policy::queue::Partition::new(
            name.to_owned(),
            vnodes,
            queues,
            placesim_core::SetIndex::new(n, &spec.tracked_sets()),
            scheduler(plan, discipline, placement, order),
        )
    };
    let mut parts = vec![part(
        "default",
        default_vnodes,
        Box::new(move |q: Option<u32>| q.is_none_or(|q| !in_queue_partition[q as usize])),
        discipline,
        &plan.placement,
        &plan.order,
    )];
    for p in &plan.partitions {
        let mut vnodes = placesim_core::Bitset::new(n);
        for v in &p.vnodes {
            vnodes.set(v.index(), true);
        }
        let queues = p.queues.clone();
        parts.push(part(
            &p.scheduler,
            vnodes,
            Box::new(move |q: Option<u32>| q.is_some_and(|q| queues.contains(&q))),
            p.discipline,
            &p.placement,
            &p.order,
        ));
    }
    Box::new(placesim_policy::queue::Partitioned::new(parts))
}

/// Replays `plan`, writes jobs.parquet, summary.parquet and timeseries.parquet as `output`
/// says, and returns the summary. `progress` is called now and then during the run.
pub fn execute(
    plan: &Plan,
    clock: Clock,
    output: Output<'_>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Executed, RunError> {
    let cluster = plan.cluster.clone();
    let mut state = ClusterState::new(cluster.clone());
    let trace = &plan.trace;
    let workload = &trace.workload;
    let discipline = plan.discipline;
    if plan.as_recorded {
        plan.check_record_replays()?;
    }
    // The placement is part of the policy's name when it is not plain first fit.
    let label = if plan.as_recorded {
        "recorded".to_owned()
    } else {
        discipline.label()
    };
    let meta = RunMeta {
        scenario: plan.name.clone(),
        policy: format!("{label}{}", plan.placement.kind().policy_suffix()),
        seed: plan.seed,
        trace: trace.path.display().to_string(),
        procs: cluster.capacity_total(ConsumableIdx::NCPUS),
    };
    // Several schedulers track their own sets in their own views of the state; one tracks
    // its sets in the state itself.
    let partitioned = !plan.partitions.is_empty() && !plan.as_recorded;
    let placement = if partitioned {
        None
    } else {
        Some(plan.placement.instance(&mut state))
    };
    // Reservation requests are placed by the run's placement too, under no run limit.
    let reservation_placement =
        (!plan.reservation_requests.is_empty()).then(|| plan.placement.instance(&mut state));
    if !plan.limits.run.values.is_empty() {
        state.set_run_limits(&plan.limits.run.values);
    }
    let mut policy = match placement {
        Some(placement) if plan.as_recorded => {
            as_recorded(plan, &cluster, limited(plan, placement))
        }
        Some(placement) => scheduler(plan, discipline, placement, &plan.order),
        None => partitioned_schedulers(plan, &cluster, discipline),
    };
    // Jobs of reservations' queues run inside them, whatever decides the others.
    let queues = plan.reservations.iter().map(|r| r.queue);
    if queues
        .chain(plan.reservation_requests.iter().map(|r| r.queue))
        .any(|q| q.is_some())
    {
        policy = Box::new(placesim_policy::queue::InReservations::new(
            policy,
            plan.placement.first_fit(),
        ));
    }
    // The scheduler confirms reservation requests before it looks at any job.
    if let Some(p) = reservation_placement {
        policy = Box::new(placesim_policy::queue::ConfirmingReservations::new(
            policy, p,
        ));
    }
    let mut simulation = Simulation::new(workload, state, plan.config);
    if let Some(model) = &plan.runtime {
        simulation = simulation.with_runtime_model(model);
    }
    if !plan.limits.queued.values.is_empty() {
        simulation = simulation
            .with_queued_limits(&plan.limits.queued.values, plan.limits.queued.texts.clone());
    }
    if !plan.outages.is_empty() {
        simulation = simulation.with_outages(&plan.outages, plan.on_failure);
    }
    if plan.check_invariants {
        simulation = simulation.with_invariant_checks(true);
    }
    if !plan.running_at_start.is_empty() {
        simulation = simulation.with_running_at_start(running_allocations(plan, &cluster));
    }
    if !plan.reservations.is_empty() {
        simulation = simulation.with_reservations(plan.reservations.clone());
    }
    if !plan.reservation_requests.is_empty() {
        simulation = simulation.with_reservation_requests(plan.reservation_requests.clone());
    }
    if !plan.deletions.is_empty() || !plan.cycles.is_empty() {
        simulation = simulation.with_timeline(&plan.deletions, &plan.cycles);
    }
    if !plan.reservation_deletions.is_empty() {
        simulation = simulation.with_reservation_deletions(&plan.reservation_deletions);
    }
    if !plan.site_notes.is_empty() {
        simulation = simulation.with_site_notes(plan.site_notes.clone());
    }
    let measurement = plan.metrics.measurement(&cluster, plan.topology, workload);
    simulation = simulation.with_set_watch(&measurement.sets);
    let occupancy = OccupancyConfig {
        window_start: measurement.window_start,
        window_end: measurement.window_end,
        sample_every: measurement.sample_every,
    };
    let skipped: Vec<_> = trace.skipped.iter().map(|(r, n)| (r.name(), n)).collect();
    let summarise = |sink: &JobSink, stats: &RunStats, wall: Duration| {
        let timing = (clock == Clock::Timed).then_some(Timing {
            wall_seconds: wall.as_secs_f64(),
        });
        let summary = RunSummary::compute(
            meta.clone(),
            workload,
            sink,
            stats,
            trace.records,
            skipped.clone(),
            timing,
        )
        .with_groups(workload, sink, &plan.queue_names);
        match &plan.recorded {
            Some(recorded) => summary.with_fidelity(placesim_metrics::fidelity(
                workload,
                sink,
                recorded,
                &plan.cluster,
                plan.topology,
            )),
            None => summary,
        }
    };
    let failed = |source| RunError::Simulation {
        trace: trace.path.display().to_string(),
        policy: label.clone(),
        source,
    };
    let mut streaming = match output {
        Output::Streamed(dir) => StreamingJobSink::new(dir, meta.clone(), workload)?,
        Output::OnRunThread(dir) => StreamingJobSink::on_this_thread(dir, meta.clone(), workload)?,
    };
    let dir = output.dir();
    // What the per-job data measures and names.
    let sink = streaming.sink_mut();
    sink.measure(&measurement.sets, &cluster, occupancy);
    sink.keep_request_texts(plan.request_texts.clone());
    let at_start: Vec<_> = plan.running_at_start.iter().map(|(j, _)| *j).collect();
    sink.mark_running_at_start(&at_start);
    if plan.metrics.exec_vnode {
        sink.keep_exec_vnodes(&cluster);
    }
    if !plan.reservations.is_empty() || !plan.reservation_requests.is_empty() {
        sink.keep_reservations(&cluster, &plan.reservations);
    }
    let started = Instant::now();
    let stats = simulation
        .run(policy.as_mut(), &mut streaming, progress)
        .map_err(failed)?;
    // The policy's views and calendars are not needed for the summary (the run has freed the
    // state): freed first, so they and the summary's tables are never held at once.
    drop(policy);
    // Checked before the files are finished: a failed run leaves no Parquet behind (a file
    // not finished is removed).
    if let Some(source) = streaming.sink_mut().too_many_samples() {
        return Err(RunError::Samples {
            trace: trace.path.display().to_string(),
            source,
        });
    }
    let wall = started.elapsed();
    let writing = Instant::now();
    // The summary is computed and written while the last row groups of jobs.parquet and the
    // streamed files encode (by their writer threads, when they have them).
    let (_, summary) = streaming.finish_with(|sink| {
        let summary = summarise(sink, &stats, wall);
        write_vnodes(dir, &summary.meta, sink)?;
        write_reservations(dir, &summary.meta, workload, sink)?;
        write_summary(dir, &summary).map(|()| summary)
    })?;
    Ok(Executed {
        summary: summary?,
        writing: writing.elapsed(),
    })
}
