//! Maui/Moab fairshare (queue-disciplines.md §3.3; Maui `MPriority.c`, `MFS.c`,
//! `MStats.c`): each credential's dedicated usage in windows of `FSINTERVAL`, the last
//! `FSDEPTH` of them weighted by `FSDECAY`^i, against the total the machine delivered, and
//! the distance to the credential's `FSTARGET` that the priority's fairshare component reads.

use placesim_core::{ConsumableIdx, JobId, RunningJob, Workload};
use std::collections::HashMap;

/// The credentials Moab's fairshare component has subcomponents for (QOS is not modelled).
pub const CREDENTIALS: [MoabCredential; 4] = [
    MoabCredential::User,
    MoabCredential::Group,
    MoabCredential::Account,
    MoabCredential::Class,
];

/// A kind of credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MoabCredential {
    /// The job's user (SWF field 12, by number).
    User,
    /// Its group (SWF field 13, by number).
    Group,
    /// Its account: the job's project.
    Account,
    /// Its class: the `[[moab.class]]` its SWF queue belongs to.
    Class,
}

/// How a target bounds the fairshare factor (`FSTARGET=<pct>[+|-]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetMode {
    /// A plain target: priority rises below it and falls above it.
    Target,
    /// `+`, a floor: priority only rises, below it.
    Floor,
    /// `-`, a ceiling: priority only falls, above it.
    Ceiling,
}

/// One `FSTARGET`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// The target share of the machine's delivered usage, in percent.
    pub percent: f64,
    /// How it bounds the factor.
    pub mode: TargetMode,
}

/// Moab's fairshare settings.
#[derive(Debug, Clone, PartialEq)]
pub struct MoabFairshareSettings {
    /// `FSPOLICY` DEDICATEDPES rather than DEDICATEDPS: a job's processor equivalents, the
    /// larger of its ncpus and its memory in processors' worth (`mem_per_ncpu`).
    pub processor_equivalents: bool,
    /// Per ncpu of the machine, its memory (in the unit of the `mem` consumable), for
    /// processor equivalents; `None` without a `mem` consumable.
    pub mem_per_ncpu: Option<(ConsumableIdx, f64)>,
    /// The `%` form: the factor is 1 − usage ÷ target instead of target − usage.
    pub percent_based: bool,
    /// `FSINTERVAL`, seconds.
    pub interval_s: u64,
    /// `FSDEPTH`: windows counted, the current one included.
    pub depth: usize,
    /// `FSDECAY`: the weight of window i is decay^i.
    pub decay: f64,
    /// Per credential kind (in [`CREDENTIALS`] order): the targets by name, `DEFAULT` for
    /// every credential without its own.
    pub targets: [HashMap<String, Target>; 4],
    /// The Moab classes' names, by the index a request's `class` holds.
    pub class_names: Vec<String>,
}

/// The name of `job`'s credential of `kind`: its user or group (SWF fields 12 and 13, by
/// number), its project as account, its request's Moab class (named by `class_names`).
pub(crate) fn credential_name(
    workload: &Workload,
    job: JobId,
    kind: MoabCredential,
    class_names: &[String],
) -> Option<String> {
    let j = workload.job(job);
    match kind {
        MoabCredential::User => j.user().map(|u| u.to_string()),
        MoabCredential::Group => j.group().map(|g| g.to_string()),
        MoabCredential::Account => j.project().map(|p| p.to_string()),
        MoabCredential::Class => workload
            .request_of(job)
            .class
            .and_then(|c| class_names.get(c as usize))
            .cloned(),
    }
}

/// Moab's credential priorities (`USERCFG[name] PRIORITY=`, `GROUPCFG`, `ACCOUNTCFG`,
/// `CLASSCFG`), which the priority's CRED component weighs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MoabCredentials {
    /// Per credential kind (in [`CREDENTIALS`] order): the priorities by name, `DEFAULT` for
    /// every credential without its own.
    pub priorities: [HashMap<String, f64>; 4],
    /// The Moab classes' names, by the index a request's `class` holds.
    pub class_names: Vec<String>,
}

impl MoabCredentials {
    /// The priority of each of `job`'s credentials (in [`CREDENTIALS`] order); 0 for one
    /// with none (nor a `DEFAULT`).
    pub fn values(&self, workload: &Workload, job: JobId) -> [f64; 4] {
        let mut out = [0.0; 4];
        for (k, kind) in CREDENTIALS.into_iter().enumerate() {
            let table = &self.priorities[k];
            let name = credential_name(workload, job, kind, &self.class_names);
            out[k] = name
                .as_deref()
                .and_then(|n| table.get(n))
                .or_else(|| table.get("DEFAULT"))
                .copied()
                .unwrap_or(0.0);
        }
        out
    }
}

/// Moab fairshare over a run.
#[derive(Debug, Clone)]
pub struct MoabFairshare {
    settings: MoabFairshareSettings,
    /// Per credential kind, per name: its usage in each window, the current first.
    usage: [HashMap<String, Vec<f64>>; 4],
    /// What the machine delivered in each window.
    total: Vec<f64>,
    /// The current window's index (time ÷ interval).
    window: u64,
    /// The jobs running at the last update, with their start, and when that was.
    last: Vec<(JobId, u64)>,
    last_update: Option<u64>,
}

impl MoabFairshare {
    /// Fairshare with these settings, nothing used yet.
    pub fn new(settings: MoabFairshareSettings) -> Self {
        let depth = settings.depth.max(1);
        MoabFairshare {
            settings,
            usage: Default::default(),
            total: vec![0.0; depth],
            window: 0,
            last: Vec::new(),
            last_update: None,
        }
    }

    fn name(&self, workload: &Workload, job: JobId, kind: MoabCredential) -> Option<String> {
        credential_name(workload, job, kind, &self.settings.class_names)
    }

    /// A job's dedicated processors (or processor equivalents).
    fn dedicated(&self, workload: &Workload, job: JobId) -> f64 {
        let request = workload.request_of(job);
        let ncpus = request.total(ConsumableIdx::NCPUS) as f64;
        match self.settings.mem_per_ncpu {
            Some((mem, per)) if self.settings.processor_equivalents && per > 0.0 => {
                ncpus.max(request.total(mem) as f64 / per)
            }
            _ => ncpus,
        }
    }

    /// An iteration at `now`: the windows roll over to `now`'s, then every job that ran since
    /// the last iteration adds its dedicated processor-seconds since then (up to now: a job
    /// that ended in between counts until this iteration sees it gone) to its credentials'
    /// current window and to the machine's.
    pub fn update(&mut self, workload: &Workload, now: u64, running: &[RunningJob]) {
        let depth = self.total.len();
        let interval = self.settings.interval_s.max(1);
        let window = now / interval;
        let shift = window.saturating_sub(self.window);
        if shift > 0 {
            let roll = |windows: &mut Vec<f64>| {
                let k = (shift as usize).min(depth);
                windows.rotate_right(k);
                windows[..k].fill(0.0);
            };
            roll(&mut self.total);
            for kind in &mut self.usage {
                for windows in kind.values_mut() {
                    roll(windows);
                }
            }
            self.window = window;
        }
        if let Some(since) = self.last_update {
            let last = std::mem::take(&mut self.last);
            for (job, start) in last {
                let seconds = now.saturating_sub(since.max(start)) as f64;
                let used = self.dedicated(workload, job) * seconds;
                if used <= 0.0 {
                    continue;
                }
                self.total[0] += used;
                for (k, kind) in CREDENTIALS.into_iter().enumerate() {
                    if let Some(name) = self.name(workload, job, kind) {
                        let windows = self.usage[k]
                            .entry(name)
                            .or_insert_with(|| vec![0.0; depth]);
                        windows[0] += used;
                    }
                }
            }
        }
        self.last = running.iter().map(|r| (r.job, r.start.0)).collect();
        self.last_update = Some(now);
    }

    /// Jobs started in this iteration run from now on.
    pub fn started(&mut self, jobs: impl IntoIterator<Item = (JobId, u64)>) {
        self.last.extend(jobs);
    }

    /// Windows 0 to depth − 1 weighted by decay^i.
    fn weighted(&self, windows: &[f64]) -> f64 {
        windows
            .iter()
            .enumerate()
            .map(|(i, u)| u * self.settings.decay.powi(i as i32))
            .sum()
    }

    /// The fairshare factor of each credential of `job` (in [`CREDENTIALS`] order): the
    /// distance of its share of the delivered usage to its target (`MPriority.c`); 0 for a
    /// credential without a target, and for all before the machine delivered anything.
    pub fn factors(&self, workload: &Workload, job: JobId) -> [f64; 4] {
        let total = self.weighted(&self.total);
        let mut out = [0.0; 4];
        if total <= 0.0 {
            return out;
        }
        for (k, kind) in CREDENTIALS.into_iter().enumerate() {
            let name = self.name(workload, job, kind);
            let targets = &self.settings.targets[k];
            let target = name
                .as_deref()
                .and_then(|n| targets.get(n))
                .filter(|t| t.percent > 0.0)
                .or_else(|| targets.get("DEFAULT").filter(|t| t.percent > 0.0));
            let Some(target) = target else { continue };
            let used = name
                .as_deref()
                .and_then(|n| self.usage[k].get(n))
                .map_or(0.0, |w| self.weighted(w));
            let percent = used / total * 100.0;
            let factor = if self.settings.percent_based {
                1.0 - percent / target.percent
            } else {
                target.percent - percent
            };
            out[k] = match target.mode {
                TargetMode::Target => factor,
                TargetMode::Floor => factor.max(0.0),
                TargetMode::Ceiling => factor.min(0.0),
            };
        }
        out
    }
}
