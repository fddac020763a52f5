//! The in-memory sink: a few bytes per job, filled as jobs end.

use crate::exec::{ExecGroup, ExecNames, ExecStore, Runs};
use crate::occupancy::{Occupancy, OccupancyConfig, OccupancyStats, Sample};
use placesim_core::{
    Allocation, EndReason, Job, JobId, JobOutcome, MetricsSink, SimTime, VnodeRun, Workload,
};
use std::collections::HashMap;
use std::sync::Arc;

/// How many sets each sample has a row of, by the sets' names: none with one set (the whole
/// cluster's row says it all), else every set.
pub(crate) fn sets_sampled(set_names: &[String]) -> usize {
    if set_names.len() > 1 {
        set_names.len()
    } else {
        0
    }
}

/// Buffers each job's start, end, end reason and runtime-model factors by job id, so rows come
/// out in submit order whatever order jobs end in.
#[derive(Debug, Clone)]
pub struct JobSink {
    pub(crate) start: Vec<u64>,
    pub(crate) end: Vec<u64>,
    /// Why each job ended ([`EndReason::Finished`] for jobs that have not).
    pub(crate) reason: Vec<EndReason>,
    pub(crate) ended: Vec<bool>,
    /// What the runtime model made of each job's placement, kept in f32 (a few bytes a job).
    pub(crate) speed_factor: Vec<f32>,
    pub(crate) comm_factor: Vec<f32>,
    pub(crate) noise: Vec<f32>,
    pub(crate) speed_spread: Vec<f32>,
    pub(crate) sets_spanned: Vec<u32>,
    pub(crate) cross_set_pairs: Vec<f32>,
    /// Per job, R: maximal runs of consecutive vnode indices in its (last) allocation.
    pub(crate) contiguity_runs: Vec<u32>,
    /// Per job (sized only once a vnode failure touches a job): requeues and core-seconds
    /// lost.
    pub(crate) requeues: Vec<u32>,
    pub(crate) lost_core_seconds: Vec<u64>,
    /// Per job, where it was placed (a placement set, `spanned`), as an index into `texts`;
    /// 0 for none.
    pub(crate) label: Vec<u32>,
    /// Per job, the scheduler's last comment before it started (or ever, if it never did).
    pub(crate) comment: Vec<u32>,
    /// Distinct labels and comments; entry 0 is unused. Those that no job and no event row
    /// held here names are let go now and then ([`JobSink::let_go_of_unnamed_texts`]).
    pub(crate) texts: Vec<Arc<str>>,
    /// Each text's id, by the text: a run makes a text per comment that changed (psets-bench
    /// 160,000), so the map hashes with foldhash rather than SipHash.
    text_ids: HashMap<Arc<str>, u32, foldhash::fast::FixedState>,
    /// Ids of texts lately interned, by the address of the string `texts` keeps, in a slot
    /// chosen by the address ([`TEXT_SLOTS`] of them; a later text takes a slot over): a
    /// policy hands over the very string it said before (a job's limit message, kept per job
    /// and level), found here without hashing the text (Moab's `MAXJOB` messages were 4 % of
    /// `ctc-maxjob.toml`'s simulation). Only strings `texts` holds are here, and they live
    /// while it holds them, so no other string can come to have their address; a string let
    /// go leaves its slot empty. Bounded, where a map of every text's address would grow with
    /// psets-bench's 160,000 texts.
    text_at: Box<[(usize, u32)]>,
    /// How many texts `texts` may hold before those that no job and no event row the sink
    /// holds names are let go ([`JobSink::let_go_of_unnamed_texts`]).
    texts_let_go_at: usize,
    /// The sets fragmentation is measured over: names and ncpus (empty: the whole cluster);
    /// shared with the writer of timeseries.parquet's streamed row groups.
    pub(crate) set_names: Arc<[String]>,
    pub(crate) set_ncpus: Arc<[u64]>,
    /// The cluster, for vnodes.parquet (each vnode's name, host, speed and ncpus): shared, not
    /// copied (a copy of CEA-Curie's 93,312 names and hosts was 8 MB), and each vnode's set.
    pub(crate) cluster: Option<placesim_core::Cluster>,
    pub(crate) vnode_sets: Vec<u32>,
    /// The site's reservations, for reservations.parquet ([`JobSink::keep_reservations`]),
    /// and those the scheduler answered, as they come.
    pub(crate) reservations: Vec<ReservationRow>,
    /// How a reservation's vnodes are written, once reservations are kept.
    reservation_text: Option<(ExecNames, ExecStore)>,
    /// The longest window of a Moab reservation: how far back from a job's start a row whose
    /// window holds it may begin.
    longest_acl_window: u64,
    /// Each request's text, by request id ([`JobSink::keep_request_texts`]).
    pub(crate) request_texts: Option<Arc<Vec<String>>>,
    /// Per job, whether it was running at t = 0; empty when none was
    /// ([`JobSink::mark_running_at_start`]).
    pub(crate) running_at_start: Vec<bool>,
    /// Samples of the cluster, in time order, and their per-set free ncpus, flattened.
    pub(crate) samples: Vec<Sample>,
    pub(crate) sample_set_free: Vec<u64>,
    /// The integrals and samples, when measured ([`JobSink::measure`]).
    occupancy: Option<Occupancy>,
    /// Names for `exec_vnode`, once the cluster is known ([`JobSink::keep_exec_vnodes`]).
    pub(crate) exec_names: Option<Arc<ExecNames>>,
    pub(crate) exec_store: ExecStore,
    /// Per job (sized at the first start): its last allocation, as runs.
    pub(crate) exec: Vec<Option<Runs>>,
    /// Per job (sized at the first estimate): its last top-job estimate's start
    /// ([`NO_ESTIMATE`] for none) and vnodes.
    pub(crate) estimated_start: Vec<u64>,
    pub(crate) estimated_exec: Vec<Option<Runs>>,
    /// Per job (sized at the first report): the priority the scheduler first ordered it by,
    /// the last it reported, and the one in force when the job (last) started.
    pub(crate) priority_at_submit: Vec<Option<f64>>,
    priority_last: Vec<Option<f64>>,
    pub(crate) priority_at_start: Vec<Option<f64>>,
    /// What the scheduler said and did, in order: events.parquet. A streaming sink holds only
    /// the rows not yet handed to its writer.
    pub(crate) events: Vec<EventRow>,
}

/// No top-job estimate.
pub(crate) const NO_ESTIMATE: u64 = u64::MAX;

/// What kind of thing an event row records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    Submit,
    Estimate,
    Comment,
    Start,
    End,
    Requeue,
    Kill,
    /// Something that happened to the site, not to a job (its row has no job).
    Site(placesim_core::SiteEvent),
}

impl EventKind {
    /// Its name in events.parquet.
    pub(crate) fn name(self) -> &'static str {
        match self {
            EventKind::Submit => "submit",
            EventKind::Estimate => "top-job estimate",
            EventKind::Comment => "comment",
            EventKind::Start => "start",
            EventKind::End => "end",
            EventKind::Requeue => "requeue",
            EventKind::Kill => "kill",
            EventKind::Site(kind) => kind.name(),
        }
    }
}

/// How many slots [`JobSink::text_at`] has (2 to this power): 64 KiB.
const TEXT_SLOT_BITS: u32 = 12;
const TEXT_SLOTS: usize = 1 << TEXT_SLOT_BITS;

/// The fewest new texts the sink takes between two times it lets go of the texts nothing
/// names any more: a run whose comments carry changing amounts (Moab's `MAXPS` messages name
/// the processor-seconds a credential holds, which shrink at every pass) says a new text at
/// almost every telling, 29 million of them on CTC-SP2 under `MAXPS=200000,400000`, and
/// keeping them all took 4.4 GB.
const TEXTS_BETWEEN_LETTING_GO: usize = 1 << 16;

/// The texts every run has, interned from the start so that the ends, which every job has,
/// are told without hashing: none (id 0), then the ends' and the requeue's reasons.
const FIXED_TEXTS: [&str; 8] = [
    "",
    "finished",
    "killed at its walltime",
    "killed by a vnode failure",
    "requeued by a vnode failure",
    "killed at the end of its reservation",
    "deleted while it ran (qdel)",
    "killed: its reservation was deleted (pbs_rdel)",
];
const FINISHED: u32 = 1;
const KILLED_AT_WALLTIME: u32 = 2;
const KILLED_BY_FAILURE: u32 = 3;
const REQUEUED_BY_FAILURE: u32 = 4;
const KILLED_AT_RESERVATION_END: u32 = 5;
const DELETED_WHILE_RUNNING: u32 = 6;
const KILLED_AT_RESERVATION_DELETION: u32 = 7;

/// One row of events.parquet: 24 bytes; its text is made when the file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventRow {
    pub(crate) time: u64,
    /// For an estimate, the estimated start; otherwise an index into the sink's texts (0 for
    /// none).
    pub(crate) value: u64,
    /// The job, or [`NO_JOB`] for a site's event.
    pub(crate) job: u32,
    pub(crate) kind: EventKind,
}

/// The `job` of an event row about the site rather than a job.
pub(crate) const NO_JOB: u32 = u32::MAX;

impl EventRow {
    /// The id of the row's text in the sink's texts, for every kind but an estimate, whose
    /// `value` is a start.
    pub(crate) fn text_id(&self) -> Option<u64> {
        (self.kind != EventKind::Estimate).then_some(self.value)
    }
}

impl JobSink {
    /// A sink for every job of `workload`.
    pub fn new(workload: &Workload) -> Self {
        let n = workload.jobs().len();
        JobSink {
            start: vec![0; n],
            end: vec![0; n],
            reason: vec![EndReason::Finished; n],
            ended: vec![false; n],
            // Filled only once a job has something other than the default, so that plain runs
            // pay nothing for them.
            speed_factor: Vec::new(),
            comm_factor: Vec::new(),
            noise: Vec::new(),
            speed_spread: Vec::new(),
            sets_spanned: Vec::new(),
            cross_set_pairs: Vec::new(),
            contiguity_runs: Vec::new(),
            requeues: Vec::new(),
            lost_core_seconds: Vec::new(),
            label: Vec::new(),
            comment: Vec::new(),
            texts: FIXED_TEXTS.iter().map(|&t| Arc::from(t)).collect(),
            text_ids: FIXED_TEXTS
                .iter()
                .enumerate()
                .map(|(i, &t)| (Arc::from(t), i as u32))
                .collect(),
            text_at: vec![(0, 0); TEXT_SLOTS].into_boxed_slice(),
            texts_let_go_at: FIXED_TEXTS.len() + TEXTS_BETWEEN_LETTING_GO,
            set_names: Arc::default(),
            set_ncpus: Arc::default(),
            cluster: None,
            vnode_sets: Vec::new(),
            reservations: Vec::new(),
            reservation_text: None,
            longest_acl_window: 0,
            request_texts: None,
            running_at_start: Vec::new(),
            samples: Vec::new(),
            sample_set_free: Vec::new(),
            occupancy: None,
            exec_names: None,
            exec_store: ExecStore::default(),
            exec: Vec::new(),
            estimated_start: Vec::new(),
            estimated_exec: Vec::new(),
            priority_at_submit: Vec::new(),
            priority_last: Vec::new(),
            priority_at_start: Vec::new(),
            events: Vec::new(),
        }
    }

    /// Names each request in PBS's syntax, by request id, for the `request` column.
    pub fn keep_request_texts(&mut self, texts: Arc<Vec<String>>) {
        self.request_texts = Some(texts);
    }

    /// Marks `jobs` as running when the run began, for the `running_at_start` column.
    pub fn mark_running_at_start(&mut self, jobs: &[placesim_core::JobId]) {
        let n = self.start.len();
        let mut flags = vec![false; n];
        for j in jobs {
            if let Some(f) = flags.get_mut(j.index()) {
                *f = true;
            }
        }
        self.running_at_start = if jobs.is_empty() { Vec::new() } else { flags };
    }

    /// Keeps the site's reservations for reservations.parquet, in order of start: each one's
    /// window, its vnodes in PBS's syntax with `cluster`'s names, and its queue.
    pub fn keep_reservations(
        &mut self,
        cluster: &placesim_core::Cluster,
        reservations: &[placesim_core::SiteReservation],
    ) {
        let n_cons = cluster.resources().n_consumables();
        self.reservation_text = Some((ExecNames::of(cluster), ExecStore::new(n_cons)));
        for r in reservations {
            let at = self.reservation_row(
                &r.name,
                (r.start, r.end),
                Some(&r.allocation),
                r.queue,
                RESERVATION_CONFIRMED,
            );
            if let (Some(at), placesim_core::ReservationAccess::Acl { acl, .. }) = (at, &r.access) {
                let row = &mut self.reservations[at];
                row.acl = Some(acl.text.to_string());
                row.hosts = r.allocation.vnodes().collect();
                row.hosts.sort_unstable();
                self.longest_acl_window = self
                    .longest_acl_window
                    .max(r.end.as_secs() - r.start.as_secs());
            }
        }
    }

    /// Notes a job started at `start` on `allocation` inside the window of each Moab
    /// reservation whose hosts it uses: only a job its ACL admits can.
    fn note_inside_acl_windows(&mut self, job: &Job, start: SimTime, allocation: &Allocation) {
        if self.longest_acl_window == 0 {
            return;
        }
        let t = start.as_secs();
        let from = t.saturating_sub(self.longest_acl_window);
        let last = self.reservations.partition_point(|r| r.start <= t);
        let first = self.reservations.partition_point(|r| r.start < from);
        for row in &mut self.reservations[first..last] {
            if row.acl.is_some()
                && t < row.end
                && allocation
                    .vnodes()
                    .any(|v| row.hosts.binary_search(&v).is_ok())
            {
                row.inside.push(job.source_id);
            }
        }
    }

    /// Adds a row for a reservation held on `allocation` (none for one denied), and says where
    /// it went (nothing, unless reservations are kept).
    fn reservation_row(
        &mut self,
        name: &str,
        (start, end): (SimTime, SimTime),
        allocation: Option<&Allocation>,
        queue: Option<u32>,
        state: &'static str,
    ) -> Option<usize> {
        let Some((names, store)) = &mut self.reservation_text else {
            return None;
        };
        let mut vnodes = String::new();
        if let Some(a) = allocation {
            let runs = store.runs(a);
            store.write(names, &runs, &mut vnodes);
        }
        let n_cons = store.width();
        let row = ReservationRow {
            name: name.to_owned(),
            start: start.as_secs(),
            end: end.as_secs(),
            exclusive: allocation.is_some_and(|a| a.sharing.is_exclusive()),
            vnodes,
            ncpus: allocation.map_or(0, |a| a.total(n_cons, placesim_core::ConsumableIdx::NCPUS)),
            queue,
            state,
            acl: None,
            hosts: Vec::new(),
            inside: Vec::new(),
        };
        // In order of start (then end, then name), whenever they come.
        fn key(r: &ReservationRow) -> (u64, u64, &str) {
            (r.start, r.end, r.name.as_str())
        }
        let at = self.reservations.partition_point(|r| key(r) <= key(&row));
        self.reservations.insert(at, row);
        Some(at)
    }

    /// Keeps where each job ran, and each top-job estimate's vnodes, for the `exec_vnode` and
    /// `estimated_exec_vnode` columns, with `cluster`'s vnode and resource names.
    pub fn keep_exec_vnodes(&mut self, cluster: &placesim_core::Cluster) {
        self.exec_store = ExecStore::new(cluster.resources().n_consumables());
        self.exec_names = Some(Arc::new(ExecNames::of(cluster)));
    }

    /// The vnodes of jobs `ids` (their last allocations, or with `estimated` their last top-job
    /// estimates'), to be written as text where their row group is written; `None` unless the
    /// sink keeps them ([`JobSink::keep_exec_vnodes`]).
    pub(crate) fn exec_group(
        &self,
        ids: std::ops::Range<usize>,
        estimated: bool,
    ) -> Option<ExecGroup> {
        let runs = if estimated {
            &self.estimated_exec
        } else {
            &self.exec
        };
        let names = self.exec_names.as_ref()?;
        Some(
            self.exec_store
                .group(names, ids.map(|i| runs.get(i).and_then(Option::as_ref))),
        )
    }

    /// Job `i`'s last top-job estimate's start, if it had one.
    pub(crate) fn estimated_start(&self, i: usize) -> Option<u64> {
        self.estimated_start
            .get(i)
            .copied()
            .filter(|&t| t != NO_ESTIMATE)
    }

    fn event(&mut self, time: SimTime, job: JobId, kind: EventKind, value: u64) {
        self.events.push(EventRow {
            time: time.as_secs(),
            value,
            job: job.index() as u32,
            kind,
        });
    }

    /// Measures occupancy and fragmentation as `config` says over `sets` of `cluster` (the
    /// sets the kernel watches: [`placesim_core::Simulation::with_set_watch`]), from the
    /// settled instants the kernel reports. Names the sets that samples report free ncpus
    /// for, with their ncpus; with more than one set, jobs.parquet's `size_class` tells jobs
    /// that fit in the largest from the rest.
    pub fn measure(
        &mut self,
        sets: &placesim_core::SetPartition,
        cluster: &placesim_core::Cluster,
        config: OccupancyConfig,
    ) {
        self.cluster = Some(cluster.clone());
        self.vnode_sets = sets.set_of.clone();
        // Each set's ncpus.
        let mut ncpus = vec![0u64; sets.len()];
        for (v, &set) in sets.set_of.iter().enumerate() {
            ncpus[set as usize] += cluster.ncpus_capacity(placesim_core::VnodeId::from_index(v));
        }
        self.set_names = sets.names.clone().into();
        self.set_ncpus = ncpus.into();
        let capacity = cluster.capacity_total(placesim_core::ConsumableIdx::NCPUS);
        self.occupancy = Some(Occupancy::new(config, capacity));
    }

    /// Whether the run took more samples than a run may ([`crate::MAX_SAMPLES`]); checked
    /// after the run, before anything is written.
    pub fn too_many_samples(&self) -> Option<crate::TooManySamples> {
        self.occupancy.as_ref()?.too_many_samples()
    }

    /// The occupancy integrals of a run that ended at `last_event`, if this sink measured
    /// them.
    pub fn occupancy(&self, last_event: SimTime) -> Option<OccupancyStats> {
        self.occupancy.as_ref().map(|o| o.finish(last_event))
    }

    /// Job `i`'s size class: `serial`, `one set` (fits the largest set) or `multi-set`, or
    /// `parallel` when there is only one set.
    pub(crate) fn size_class(&self, size: u32) -> &'static str {
        let largest = self.set_ncpus.iter().copied().max().unwrap_or(u64::MAX);
        match size {
            0 | 1 => "serial",
            _ if self.set_ncpus.len() <= 1 => "parallel",
            n if u64::from(n) <= largest => "one set",
            _ => "multi-set",
        }
    }

    /// Job `i`'s contiguity runs (1 for a job that never started).
    pub(crate) fn contiguity_runs(&self, i: usize) -> u32 {
        self.contiguity_runs.get(i).copied().unwrap_or(1)
    }

    /// How many jobs have ended.
    pub fn n_ended(&self) -> usize {
        self.ended.iter().filter(|&&e| e).count()
    }

    /// The start and end of job `idx`, if it ended.
    pub fn span(&self, idx: usize) -> Option<(SimTime, SimTime)> {
        self.ended[idx].then(|| (SimTime(self.start[idx]), SimTime(self.end[idx])))
    }

    /// The vnodes of job `idx`'s last allocation, when the sink keeps allocations
    /// ([`JobSink::keep_exec_vnodes`]) and the job started.
    pub fn vnodes_of(&self, idx: usize) -> Option<Vec<placesim_core::VnodeId>> {
        let runs = self.exec.get(idx)?.as_ref()?;
        Some(runs.iter().flat_map(|r| r.vnodes()).collect())
    }
}

/// What the runtime model made of one job, as the sink keeps it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Factors {
    pub(crate) speed: f32,
    pub(crate) comm: f32,
    pub(crate) noise: f32,
    pub(crate) spread: f32,
    pub(crate) sets_spanned: u32,
    pub(crate) cross: f32,
}

impl Factors {
    /// A job without a runtime model.
    pub(crate) const NONE: Factors = Factors {
        speed: 1.0,
        comm: 1.0,
        noise: 1.0,
        spread: 0.0,
        sets_spanned: 1,
        cross: 0.0,
    };
}

impl JobSink {
    fn intern(&mut self, text: &Arc<str>) -> u32 {
        let address = Arc::as_ptr(text).cast::<u8>() as usize;
        // Fibonacci hashing: the top bits of the address times 2^64 / φ.
        let slot = ((address as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - TEXT_SLOT_BITS))
            as usize;
        let (at, id) = self.text_at[slot];
        if at == address {
            return id;
        }
        if let Some(&id) = self.text_ids.get(&**text) {
            return id;
        }
        if self.texts.len() >= self.texts_let_go_at {
            self.let_go_of_unnamed_texts();
        }
        let id = self.texts.len() as u32;
        self.text_ids.insert(text.clone(), id);
        self.texts.push(text.clone());
        self.text_at[slot] = (address, id);
        id
    }

    /// Lets go of the texts that neither a job (its label, its last comment) nor an event row
    /// still held here names, and gives those kept new ids, in the same order. The fixed
    /// texts keep theirs. The texts of rows already handed to a writer went with them, as
    /// `Arc`s ([`crate::write`]), so only the rows held here count. The next time comes
    /// after as many new texts as the most of: those kept, the jobs, the rows held, and
    /// [`TEXTS_BETWEEN_LETTING_GO`]. Each time costs about what it walks (texts, jobs,
    /// rows), paid for by the texts taken since; the table holds what was named then, and
    /// at most that many more.
    ///
    /// A string let go may be freed, and another made at its address: its slot of
    /// `text_at` is cleared, so that the address finds no id.
    fn let_go_of_unnamed_texts(&mut self) {
        let mut named = vec![false; self.texts.len()];
        named[..FIXED_TEXTS.len()].fill(true);
        let rows_texts = self.events.iter().filter_map(EventRow::text_id);
        let jobs_texts = self
            .label
            .iter()
            .chain(&self.comment)
            .map(|&id| u64::from(id));
        for id in jobs_texts.chain(rows_texts) {
            if let Some(named) = usize::try_from(id).ok().and_then(|id| named.get_mut(id)) {
                *named = true;
            }
        }
        const GONE: u32 = u32::MAX;
        let mut new_id = vec![GONE; named.len()];
        let texts = std::mem::take(&mut self.texts);
        for (old, text) in texts.into_iter().enumerate() {
            if named[old] {
                new_id[old] = self.texts.len() as u32;
                self.texts.push(text);
            }
        }
        let renamed = |id: u32| new_id.get(id as usize).copied().unwrap_or(GONE);
        self.text_ids.retain(|_, id| {
            *id = renamed(*id);
            *id != GONE
        });
        for slot in self.text_at.iter_mut() {
            *slot = match renamed(slot.1) {
                GONE => (0, 0),
                id => (slot.0, id),
            };
        }
        for id in self.label.iter_mut().chain(self.comment.iter_mut()) {
            *id = renamed(*id);
        }
        for row in self.events.iter_mut() {
            if let Some(id) = row.text_id() {
                row.value = u32::try_from(id).map_or(id, |id| u64::from(renamed(id)));
            }
        }
        let kept = self.texts.len();
        let between = TEXTS_BETWEEN_LETTING_GO
            .max(kept)
            .max(self.ended.len())
            .max(self.events.len());
        self.texts_let_go_at = kept + between;
    }

    /// The text of id `id` (a job's label or comment, an event's text), if any: id 0 is none.
    pub(crate) fn text(&self, id: u64) -> Option<Arc<str>> {
        usize::try_from(id)
            .ok()
            .filter(|&id| id != 0)
            .and_then(|id| self.texts.get(id))
            .cloned()
    }

    /// Whether job `i` was killed at its walltime.
    pub(crate) fn killed(&self, i: usize) -> bool {
        self.reason[i] == EndReason::WalltimeKilled
    }

    /// Job `i`'s label and comment ids (0 for none).
    pub(crate) fn notes(&self, i: usize) -> (u32, u32) {
        (
            self.label.get(i).copied().unwrap_or(0),
            self.comment.get(i).copied().unwrap_or(0),
        )
    }

    /// Job `i`'s requeues, core-seconds lost to vnode failures, and whether one ended it.
    pub(crate) fn failures(&self, i: usize) -> (u32, u64, bool) {
        (
            self.requeues.get(i).copied().unwrap_or(0),
            self.lost_core_seconds.get(i).copied().unwrap_or(0),
            self.reason[i] == EndReason::VnodeFailed,
        )
    }

    /// Job `i`'s runtime-model factors.
    pub(crate) fn factors(&self, i: usize) -> Factors {
        Factors {
            speed: self.speed_factor.get(i).copied().unwrap_or(1.0),
            comm: self.comm_factor.get(i).copied().unwrap_or(1.0),
            noise: self.noise.get(i).copied().unwrap_or(1.0),
            spread: self.speed_spread.get(i).copied().unwrap_or(0.0),
            sets_spanned: self.sets_spanned.get(i).copied().unwrap_or(1),
            cross: self.cross_set_pairs.get(i).copied().unwrap_or(0.0),
        }
    }

    /// Sets `v[i] = x`, first sizing `v` for every job when `x` is not the default.
    fn put<T: Copy + PartialEq>(v: &mut Vec<T>, n: usize, i: usize, x: T, default: T) {
        if v.is_empty() {
            if x == default {
                return;
            }
            v.resize(n, default);
        }
        v[i] = x;
    }
}

impl MetricsSink for JobSink {
    /// Every occurrence of `name` not ended by `now` reads `deleted`.
    fn reservation_deleted(&mut self, now: SimTime, name: &str) {
        for row in &mut self.reservations {
            if row.name == name && row.end > now.as_secs() && row.state == RESERVATION_CONFIRMED {
                row.state = RESERVATION_DELETED;
            }
        }
    }

    fn reservation_answered(
        &mut self,
        _now: SimTime,
        request: &placesim_core::ReservationRequest,
        allocation: Option<&Allocation>,
    ) {
        let state = if allocation.is_some() {
            RESERVATION_CONFIRMED
        } else {
            RESERVATION_DENIED
        };
        self.reservation_row(
            &request.name,
            (request.start, request.end),
            allocation,
            request.queue,
            state,
        );
    }

    fn site_event(&mut self, at: SimTime, kind: placesim_core::SiteEvent, subject: &str) {
        let text = self.intern(&Arc::from(subject));
        self.events.push(EventRow {
            time: at.as_secs(),
            value: u64::from(text),
            job: NO_JOB,
            kind: EventKind::Site(kind),
        });
    }

    fn job_priority(&mut self, _now: SimTime, id: JobId, priority: f64) {
        let (n, i) = (self.ended.len(), id.index());
        if self.priority_at_submit.len() != n {
            self.priority_at_submit.resize(n, None);
            self.priority_last.resize(n, None);
            self.priority_at_start.resize(n, None);
        }
        self.priority_at_submit[i].get_or_insert(priority);
        self.priority_last[i] = Some(priority);
    }

    fn job_started(&mut self, job: &Job, id: JobId, start: SimTime, allocation: &Allocation) {
        self.note_inside_acl_windows(job, start, allocation);
        // A requeued job starts again: its last start's label is the one kept.
        let x = allocation
            .label
            .as_ref()
            .map_or(0, |label| self.intern(label));
        let n = self.ended.len();
        Self::put(&mut self.label, n, id.index(), x, 0);
        self.event(start, id, EventKind::Start, u64::from(x));
        if self.exec_names.is_some() {
            if self.exec.len() != n {
                self.exec.resize(n, None);
            }
            self.exec[id.index()] = Some(self.exec_store.runs(allocation));
        }
        let runs = contiguity_runs(allocation.vnode_runs());
        Self::put(&mut self.contiguity_runs, n, id.index(), runs, 1);
        // The pass that starts a job reports its priority first.
        if let Some(&last) = self.priority_last.get(id.index()) {
            self.priority_at_start[id.index()] = last;
        }
    }

    fn instant_settled(&mut self, instant: &placesim_core::SettledInstant<'_>) {
        let Some(occupancy) = &mut self.occupancy else {
            return;
        };
        let (samples, set_free) = (&mut self.samples, &mut self.sample_set_free);
        let per_set = sets_sampled(&self.set_names) > 0;
        occupancy.settle(instant, &mut |sample, set_free_ncpus| {
            samples.push(*sample);
            if per_set {
                set_free.extend_from_slice(set_free_ncpus);
            }
        });
    }

    fn job_comment(&mut self, now: SimTime, id: JobId, text: &Arc<str>) {
        // A comment after the start would be about another run; only waiting jobs get them.
        // A policy repeating its comment usually hands over the very same string, or an
        // equal one (each run limit has its own): that is told without hashing it.
        let last = self.comment.get(id.index()).copied().unwrap_or(0);
        if last != 0 {
            let said = &self.texts[last as usize];
            if Arc::ptr_eq(said, text) || **said == **text {
                return;
            }
        }
        if !self.ended[id.index()] {
            let x = self.intern(text);
            let n = self.ended.len();
            // A comment that repeats the job's last one says nothing new.
            if self.comment.get(id.index()) != Some(&x) {
                self.event(now, id, EventKind::Comment, u64::from(x));
            }
            Self::put(&mut self.comment, n, id.index(), x, 0);
        }
    }

    fn job_submitted(&mut self, now: SimTime, id: JobId) {
        self.event(now, id, EventKind::Submit, 0);
    }

    fn job_estimated(&mut self, now: SimTime, estimate: &placesim_core::TopJobEstimate) {
        let (n, i) = (self.ended.len(), estimate.job.index());
        if self.estimated_start.len() != n {
            self.estimated_start.resize(n, NO_ESTIMATE);
        }
        // Each job's estimated vnodes are kept only when the sink keeps vnodes (16 bytes a
        // job otherwise for nothing: 5 MB of CEA-Curie's peak), and the runs (allocated) only
        // when they differ from the last estimate's.
        let runs = match (&self.exec_names, &estimate.allocation) {
            (Some(_), Some(allocation)) => {
                if self.estimated_exec.len() != n {
                    self.estimated_exec.resize(n, None);
                }
                Some(self.exec_store.fill(allocation))
            }
            _ => None,
        };
        let same_runs = self.estimated_exec.get(i).and_then(Option::as_deref) == runs;
        let start = estimate.start.as_secs();
        if self.estimated_start[i] == start && same_runs {
            return;
        }
        if !same_runs {
            self.estimated_exec[i] = runs.map(Runs::from);
        }
        self.estimated_start[i] = start;
        self.event(now, estimate.job, EventKind::Estimate, start);
    }

    /// Only the sink that keeps vnodes keeps the estimated ones.
    fn reads_estimated_vnodes(&self) -> bool {
        self.exec_names.is_some()
    }

    fn job_ended(&mut self, _job: &Job, outcome: &JobOutcome) {
        let i = outcome.job.index();
        let (kind, why) = match outcome.reason {
            EndReason::Finished => (EventKind::End, FINISHED),
            EndReason::WalltimeKilled => (EventKind::Kill, KILLED_AT_WALLTIME),
            EndReason::VnodeFailed => (EventKind::Kill, KILLED_BY_FAILURE),
            EndReason::ReservationEnded => (EventKind::Kill, KILLED_AT_RESERVATION_END),
            EndReason::ReservationDeleted => (EventKind::Kill, KILLED_AT_RESERVATION_DELETION),
            EndReason::Deleted => (EventKind::Kill, DELETED_WHILE_RUNNING),
        };
        self.event(outcome.end, outcome.job, kind, u64::from(why));
        self.start[i] = outcome.start.as_secs();
        self.end[i] = outcome.end.as_secs();
        self.reason[i] = outcome.reason;
        self.ended[i] = true;
        let st = &outcome.stretch;
        let n = self.ended.len();
        Self::put(&mut self.speed_factor, n, i, st.speed_factor as f32, 1.0);
        Self::put(&mut self.comm_factor, n, i, st.comm_factor as f32, 1.0);
        Self::put(&mut self.noise, n, i, st.noise as f32, 1.0);
        Self::put(&mut self.speed_spread, n, i, st.speed_spread as f32, 0.0);
        Self::put(&mut self.sets_spanned, n, i, st.sets_spanned, 1);
        let cross = st.cross_set_pairs as f32;
        Self::put(&mut self.cross_set_pairs, n, i, cross, 0.0);
        Self::put(&mut self.requeues, n, i, outcome.requeues, 0);
        Self::put(
            &mut self.lost_core_seconds,
            n,
            i,
            outcome.lost_core_seconds,
            0,
        );
    }

    fn job_requeued(&mut self, now: SimTime, id: JobId, requeues: u32, lost_core_seconds: u64) {
        self.event(now, id, EventKind::Requeue, u64::from(REQUEUED_BY_FAILURE));
        let (n, i) = (self.ended.len(), id.index());
        Self::put(&mut self.requeues, n, i, requeues, 0);
        Self::put(&mut self.lost_core_seconds, n, i, lost_core_seconds, 0);
    }
}

/// R: how many maximal runs of consecutive vnode indices an allocation's `runs` make (0 for
/// none).
pub(crate) fn contiguity_runs(runs: &[VnodeRun]) -> u32 {
    // Runs that touch (one ends where the next begins) are one contiguous stretch.
    let breaks = |runs: &[VnodeRun]| {
        runs.windows(2)
            .filter(|w| w[0].indices().end != w[1].first.index())
            .count() as u32
    };
    if runs.is_empty() {
        0
    } else if runs.is_sorted_by_key(|r| r.first) {
        // Placements mostly walk vnodes in cluster order: then no copy and no sort.
        breaks(runs) + 1
    } else {
        let mut sorted = runs.to_vec();
        sorted.sort_unstable_by_key(|r| r.first);
        breaks(&sorted) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::contiguity_runs;
    use placesim_core::{Allocation, Sharing, VnodeId};

    #[test]
    fn contiguity_runs_count_maximal_runs_whatever_the_order() {
        let v = |ids: &[usize]| {
            let mut a = Allocation::new(Sharing::Shared);
            for &i in ids {
                a.push(VnodeId::from_index(i), &[1]);
            }
            a.vnode_runs().to_vec()
        };
        assert_eq!(contiguity_runs(&v(&[])), 0);
        assert_eq!(contiguity_runs(&v(&[4])), 1);
        assert_eq!(contiguity_runs(&v(&[3, 1, 2])), 1);
        assert_eq!(contiguity_runs(&v(&[0, 1, 5, 7, 6, 9])), 3);
    }

    /// A run that says a new comment at almost every telling (Moab's `MAXPS` messages): the
    /// texts nothing names any more are let go, so the table stays bounded, while every job's
    /// last comment, and every event row still held, keep their words, and a text met again
    /// (the very string, or one equal to a text let go) gets the id of its words.
    #[test]
    fn texts_no_longer_named_are_let_go() {
        use placesim_core::sink::MetricsSink;
        use placesim_core::{Job, JobId, Request, RequestId, SimDuration, SimTime, Workload};
        use std::sync::Arc;
        let job = |id: u64| {
            Job::new(
                id,
                SimTime(0),
                SimDuration(10),
                SimDuration(10),
                1,
                RequestId(0),
            )
        };
        let workload = Workload::new(
            vec![job(1), job(2), job(3)],
            vec![Request::processors(1, 1)],
        )
        .unwrap();
        let mut sink = super::JobSink::new(&workload);
        let first: Arc<str> = Arc::from("job 1 violates active HARD MAXJOB limit of 1");
        sink.job_comment(SimTime(0), JobId(0), &first);
        sink.events.clear();
        let told = 3 * super::TEXTS_BETWEEN_LETTING_GO + 5;
        let said = |i: usize| format!("job 2 violates active HARD MAXPS limit (U: {i})");
        let mut held_from = 0;
        let mut last: Arc<str> = Arc::from("");
        let middle: Arc<str> = Arc::from("job 3 violates active HARD MAXPROC limit of 4");
        for i in 0..told {
            last = Arc::from(said(i));
            sink.job_comment(SimTime(i as u64), JobId(1), &last);
            // A text after some that will be let go: its id changes.
            if i == 10 {
                sink.job_comment(SimTime(i as u64), JobId(2), &middle);
                let row = sink
                    .events
                    .pop()
                    .expect("the row of the third job's comment");
                assert_eq!(sink.text(row.value).as_deref(), Some(&*middle));
            }
            // A writer takes the rows now and then, as the streaming sink hands them over.
            if i % 1000 == 999 {
                let rows = std::mem::take(&mut sink.events);
                for (k, row) in rows.iter().enumerate() {
                    let text = sink.text(row.value).expect("a comment row names a text");
                    assert_eq!(*text, *said(held_from + k), "row {}", held_from + k);
                }
                held_from = i + 1;
            }
        }
        assert!(
            sink.texts.len() <= super::FIXED_TEXTS.len() + 2 * super::TEXTS_BETWEEN_LETTING_GO,
            "{} texts kept",
            sink.texts.len()
        );
        // The rows still held name their own words.
        for (k, row) in sink.events.iter().enumerate() {
            assert_eq!(*sink.text(row.value).unwrap(), *said(held_from + k));
        }
        let (_, comment_1) = sink.notes(0);
        let (_, comment_2) = sink.notes(1);
        let (_, comment_3) = sink.notes(2);
        assert_eq!(sink.text(comment_1.into()).as_deref(), Some(&*first));
        assert_eq!(sink.text(comment_2.into()).as_deref(), Some(&*last));
        assert_eq!(sink.text(comment_3.into()).as_deref(), Some(&*middle));
        assert_eq!(
            sink.intern(&last),
            comment_2,
            "the very string, found by address"
        );
        assert_eq!(sink.intern(&first), comment_1, "the first job's words");
        let again: Arc<str> = Arc::from(said(7));
        let id = sink.intern(&again);
        assert_eq!(
            sink.text(id.into()).as_deref(),
            Some(&*again),
            "a text let go, met again"
        );
    }

    /// More texts than the slots of strings lately interned, so that slots are taken over:
    /// each text keeps its id whether it comes again as the very string, as an equal one
    /// elsewhere in memory, or after others took its slot.
    #[test]
    fn texts_keep_their_ids_by_address_or_by_text() {
        let workload = placesim_core::Workload::new(Vec::new(), Vec::new()).expect("empty");
        let mut sink = super::JobSink::new(&workload);
        let texts: Vec<std::sync::Arc<str>> = (0..3 * super::TEXT_SLOTS)
            .map(|i| std::sync::Arc::from(format!("job {i} violates active HARD MAXJOB limit")))
            .collect();
        let ids: Vec<u32> = texts.iter().map(|t| sink.intern(t)).collect();
        for (i, (text, &id)) in texts.iter().zip(&ids).enumerate() {
            assert_eq!(*sink.texts[id as usize], **text, "text {i}");
            assert_eq!(sink.intern(text), id, "text {i} again");
            let elsewhere: std::sync::Arc<str> = std::sync::Arc::from(text.to_string());
            assert_eq!(sink.intern(&elsewhere), id, "text {i} elsewhere in memory");
        }
        // Every text once, after the fixed ones.
        assert_eq!(sink.texts.len(), super::FIXED_TEXTS.len() + texts.len());
        assert_eq!(
            sink.intern(&std::sync::Arc::from("")),
            0,
            "the fixed empty text"
        );
    }
}

/// One reservation, as reservations.parquet records it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReservationRow {
    pub(crate) name: String,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) exclusive: bool,
    /// Its vnodes in PBS's `exec_vnode` syntax.
    pub(crate) vnodes: String,
    pub(crate) ncpus: u64,
    /// Its queue, by PBS queue index.
    pub(crate) queue: Option<u32>,
    /// `confirmed`, `denied` or `deleted`.
    pub(crate) state: &'static str,
    /// A Moab reservation's ACL, as the site wrote it (none for PBS's).
    pub(crate) acl: Option<String>,
    /// A Moab reservation's vnodes, in order.
    pub(crate) hosts: Vec<placesim_core::VnodeId>,
    /// The jobs (by number) that started inside a Moab reservation's window on its vnodes.
    pub(crate) inside: Vec<u64>,
}

/// A reservation's state in reservations.parquet: held on its vnodes.
const RESERVATION_CONFIRMED: &str = "confirmed";
/// A reservation's state in reservations.parquet: the scheduler found no vnodes for it.
const RESERVATION_DENIED: &str = "denied";
/// A reservation's state in reservations.parquet: deleted (`pbs_rdel`) before its end.
const RESERVATION_DELETED: &str = "deleted";
