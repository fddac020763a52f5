//! PBS fairshare (queue-disciplines.md §2.5; openpbs `fairshare.cpp`, `fifo.cpp`
//! `init_scheduling_cycle`): a tree of groups and entities with shares, usage that running
//! jobs accrue from cycle to cycle and that decays, and the comparison of two jobs' entities
//! along the tree that orders the queue.

use placesim_core::{ConsumableIdx, JobId, Workload};
use std::collections::HashMap;

/// Usage never decays below this (`FAIRSHARE_MIN_USAGE`); a new entity starts with it.
const MIN_USAGE: f64 = 1.0;

/// What a job's entity is (`fairshare_entity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FairshareEntity {
    /// `euser`: the job's user (SWF field 12, by number).
    User,
    /// `egroup`: the job's group (SWF field 13, by number).
    Group,
    /// `Account_Name`: the job's project.
    Project,
    /// `queue`: the job's PBS queue, by name.
    Queue,
}

/// What a job accrues per second it runs (`fairshare_usage_res`): the product of its
/// requested totals of some consumables (none: 1 per second, `walltime`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageRate {
    /// The consumables multiplied.
    pub per_second_of: Vec<ConsumableIdx>,
    /// Whether a job's requested usage (what a start adds to its entity's temporary usage
    /// within a cycle) is its rate times its walltime; false for `cput`, which jobs do not
    /// request.
    pub requested: bool,
}

impl UsageRate {
    fn rate(&self, workload: &Workload, job: JobId) -> f64 {
        let request = workload.request_of(job);
        self.per_second_of
            .iter()
            .map(|&c| request.total(c) as f64)
            .product()
    }
}

/// A node of the tree: a group or an entity; what changes from cycle to cycle is its
/// [`Tally`].
#[derive(Debug, Clone, PartialEq)]
struct Node {
    name: String,
    children: Vec<usize>,
    shares: u64,
    /// Its shares over its siblings', in single precision as PBS keeps it.
    group_percentage: f32,
    /// Its usage factor (`calc_usage_factor`), at the start of the cycle.
    usage_factor: f32,
}

/// What accrual and comparison read of a node, kept apart from the rest so that the
/// per-cycle walks over many nodes touch little memory.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tally {
    usage: f64,
    /// Usage with the requested usage of the jobs started or calendared in this cycle.
    temp_usage: f64,
    /// As PBS keeps it, in single precision.
    tree_percentage: f32,
    /// The parent, `NO_PARENT` for the root.
    parent: u32,
}

const NO_PARENT: u32 = u32::MAX;

/// The fairshare tree, as `sched_priv/resource_group` describes it, with the `unknown` group
/// under the root.
#[derive(Debug, Clone, PartialEq)]
pub struct FairshareTree {
    nodes: Vec<Node>,
    tallies: Vec<Tally>,
    by_name: HashMap<String, usize>,
    /// Per node: the nodes from the root's child down to it, kept as nodes are added (a
    /// comparison walks two of them).
    paths: Vec<Box<[usize]>>,
    /// Nodes whose temporary usage may differ from their usage: what the next cycle resets,
    /// instead of every node.
    touched: Vec<u32>,
}

const ROOT: usize = 0;
const UNKNOWN: usize = 1;

/// Why a resource group file does not read: the line (from 1) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct TreeError {
    /// The line.
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

impl FairshareTree {
    /// Reads PBS's `resource_group` format: one entity per line, `NAME ID PARENT SHARES`
    /// (PARENT `root` for the tree's root, and given before its children), blank lines and
    /// lines starting with `#` skipped. The `unknown` group, with `unknown_shares`, is
    /// added under the root. PBS logs a bad line and goes on; here it is an error.
    pub fn parse(text: &str, unknown_shares: u64) -> Result<FairshareTree, TreeError> {
        let mut tree = FairshareTree {
            nodes: Vec::new(),
            tallies: Vec::new(),
            by_name: HashMap::new(),
            paths: Vec::new(),
            touched: Vec::new(),
        };
        tree.add("root", None, 0);
        tree.add("unknown", Some(ROOT), unknown_shares);
        for (i, line) in text.lines().enumerate() {
            let at = |message: String| TreeError {
                line: i + 1,
                message,
            };
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = trimmed.split_whitespace().collect();
            let [name, id, parent, shares] = fields[..] else {
                return Err(at(format!(
                    "expected `NAME ID PARENT SHARES`, found {} field{}",
                    fields.len(),
                    if fields.len() == 1 { "" } else { "s" }
                )));
            };
            if tree.by_name.contains_key(name) {
                return Err(at(format!("entity `{name}` is not unique")));
            }
            if id.parse::<i64>().is_err() {
                return Err(at(format!("the id `{id}` of `{name}` is not a number")));
            }
            let Some(&parent) = tree.by_name.get(parent) else {
                return Err(at(format!(
                    "the parent `{parent}` of `{name}` is not defined above it"
                )));
            };
            let shares = shares.parse::<u64>().map_err(|_| {
                at(format!(
                    "the shares `{shares}` of `{name}` are not a whole number"
                ))
            })?;
            tree.add(name, Some(parent), shares);
        }
        tree.percentages();
        Ok(tree)
    }

    fn add(&mut self, name: &str, parent: Option<usize>, shares: u64) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node {
            name: name.to_owned(),
            children: Vec::new(),
            shares,
            group_percentage: 1.0,
            usage_factor: 0.0,
        });
        self.tallies.push(Tally {
            usage: MIN_USAGE,
            temp_usage: MIN_USAGE,
            tree_percentage: 1.0,
            parent: parent.map_or(NO_PARENT, |p| p as u32),
        });
        let path: Box<[usize]> = match parent {
            Some(p) if p != ROOT => self.paths[p].iter().copied().chain([id]).collect(),
            Some(_) => Box::new([id]),
            None => Box::new([]),
        };
        self.paths.push(path);
        if let Some(p) = parent {
            self.nodes[p].children.push(id);
        }
        self.by_name.insert(name.to_owned(), id);
        id
    }

    /// Each node's share of the machine (`calc_fair_share_perc`): its shares over its
    /// siblings' (itself included), times its parent's; 0 under a parent of 0 or among
    /// siblings with no shares.
    fn percentages(&mut self) {
        let mut stack = vec![ROOT];
        self.tallies[ROOT].tree_percentage = 1.0;
        while let Some(p) = stack.pop() {
            let children = self.nodes[p].children.clone();
            let total: u64 = children.iter().map(|&c| self.nodes[c].shares).sum();
            let parent_percentage = self.tallies[p].tree_percentage;
            for c in children {
                let (node, tally) = (&mut self.nodes[c], &mut self.tallies[c]);
                if total == 0 || parent_percentage == 0.0 {
                    node.group_percentage = 0.0;
                    tally.tree_percentage = 0.0;
                } else {
                    node.group_percentage = node.shares as f32 / total as f32;
                    tally.tree_percentage = node.group_percentage * parent_percentage;
                }
                stack.push(c);
            }
        }
    }

    /// The node of entity `name`, added under `unknown` with one share if the tree does not
    /// have it (`find_alloc_ginfo`).
    pub fn entity(&mut self, name: &str) -> usize {
        if let Some(&id) = self.by_name.get(name) {
            return id;
        }
        let id = self.add(name, Some(UNKNOWN), 1);
        self.percentages();
        id
    }

    /// `node`'s share of the machine.
    pub fn tree_percentage(&self, node: usize) -> f32 {
        self.tallies[node].tree_percentage
    }

    /// Usage accrued by `node`'s entity, on its path up to the root. Temporary usage is
    /// usage again at once: it is so at the start of every cycle, and accrual comes first.
    fn add_usage(&mut self, node: usize, amount: f64) {
        let mut n = node as u32;
        while n != NO_PARENT {
            let tally = &mut self.tallies[n as usize];
            tally.usage += amount;
            tally.temp_usage = tally.usage;
            n = tally.parent;
        }
    }

    /// Requested usage of a job started or calendared in this cycle, on `node`'s path: it
    /// counts until the next cycle.
    fn add_temporary_usage(&mut self, node: usize, amount: f64) {
        let mut n = node as u32;
        while n != NO_PARENT {
            self.tallies[n as usize].temp_usage += amount;
            self.touched.push(n);
            n = self.tallies[n as usize].parent;
        }
    }

    /// The first node below the root on `node`'s path: two entities under different ones
    /// compare there.
    fn top(&self, node: usize) -> u32 {
        self.paths[node].first().map_or(ROOT as u32, |&n| n as u32)
    }

    /// Which of two entities is more deserving (`compare_path`): along their paths from the
    /// root, at the first level where they differ, the lower temporary usage over share of
    /// the machine; a share of 0 always loses, and two of 0 tie. Less is first.
    pub fn compare(&self, a: usize, b: usize) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        if a == b {
            return Ordering::Equal;
        }
        for (&x, &y) in self.paths[a].iter().zip(self.paths[b].iter()) {
            if x == y {
                continue;
            }
            let (nx, ny) = (&self.tallies[x], &self.tallies[y]);
            match (nx.tree_percentage > 0.0, ny.tree_percentage > 0.0) {
                (false, true) => return Ordering::Greater,
                (true, false) => return Ordering::Less,
                (false, false) => return Ordering::Equal,
                (true, true) => {}
            }
            let vx = nx.temp_usage / f64::from(nx.tree_percentage);
            let vy = ny.temp_usage / f64::from(ny.tree_percentage);
            match vx.partial_cmp(&vy) {
                Some(Ordering::Equal) | None => {}
                Some(o) => return o,
            }
        }
        Ordering::Equal
    }

    /// Every node's usage times `factor`, never below the minimum (`decay_fairshare_tree`);
    /// whether any is still above it.
    fn decay(&mut self, factor: f64) -> bool {
        let mut above = false;
        for tally in &mut self.tallies {
            tally.usage = (tally.usage * factor).max(MIN_USAGE);
            tally.temp_usage = tally.usage;
            above |= tally.usage > MIN_USAGE;
        }
        above
    }

    /// Each node's usage factor (`calc_usage_factor`): its share of the root's usage, drawn
    /// toward its parent's factor by its share among its siblings; the root's children keep
    /// their own share.
    fn usage_factors(&mut self) {
        let root_usage = self.tallies[ROOT].usage;
        // Nodes come after their parents (a parent is defined before its children, and
        // entities join later), so one walk in order sees every parent's factor first.
        for n in 1..self.nodes.len() {
            let share = (self.tallies[n].usage / root_usage) as f32;
            let factor = match self.tallies[n].parent as usize {
                ROOT => share,
                p if p == NO_PARENT as usize => share,
                p => share + (self.nodes[p].usage_factor - share) * self.nodes[n].group_percentage,
            };
            self.nodes[n].usage_factor = factor;
        }
    }

    /// Temporary usage starts again from usage.
    fn reset_temporary(&mut self) {
        for n in self.touched.drain(..) {
            let tally = &mut self.tallies[n as usize];
            tally.temp_usage = tally.usage;
        }
    }
}

/// PBS's fairshare settings.
#[derive(Debug, Clone, PartialEq)]
pub struct FairshareSettings {
    /// The tree, with every usage at its minimum.
    pub tree: FairshareTree,
    /// What a job's entity is.
    pub entity: FairshareEntity,
    /// What a job accrues.
    pub usage: UsageRate,
    /// `fairshare_decay_time`, in seconds; `None` for never.
    pub decay_time_s: Option<u64>,
    /// `fairshare_decay_factor`.
    pub decay_factor: f64,
    /// Per PBS queue (by index): its name, for the `queue` entity.
    pub queue_names: Vec<String>,
}

/// Fairshare over a run: the tree's usage, which jobs ran at the last cycle and what they
/// had used then, and when the tree last decayed.
#[derive(Debug, Clone)]
pub struct Fairshare {
    settings: FairshareSettings,
    tree: FairshareTree,
    /// Per job, once its entity is known: the entity's node, the node below the root on its
    /// path, and what the job accrues per second. Found once, as every cycle reads them.
    known: Vec<KnownJob>,
    /// The jobs running at the end of the last cycle, with what they had used then.
    last_running: Vec<Accrual>,
    /// Per job: the cycle at which it was last seen running, and its start then, so that
    /// accrual finds whether a job of the last cycle still runs without a search.
    seen_running: Vec<(u64, u64)>,
    cycle: u64,
    last_decay: Option<u64>,
    /// Per node: its place among the entities of the jobs last ranked (equal entities share
    /// one), so that sorting jobs compares numbers, not paths.
    standing: Vec<u32>,
    /// The entities being ranked, and which are among them.
    ranked: Vec<usize>,
    in_ranking: Vec<bool>,
}

/// What fairshare keeps of a job whose entity it has found.
#[derive(Debug, Clone, Copy)]
struct KnownJob {
    node: u32,
    top: u32,
    rate: f64,
}

/// A job not yet seen by [`Fairshare::node`].
const UNSEEN: KnownJob = KnownJob {
    node: u32::MAX,
    top: u32::MAX,
    rate: 0.0,
};

/// A job running at the end of a cycle.
#[derive(Debug, Clone, Copy)]
struct Accrual {
    job: JobId,
    /// Its entity's node; `u32::MAX` while not yet found.
    node: u32,
    rate: f64,
    /// What it had used by then.
    used: f64,
}

impl Fairshare {
    /// Fairshare with these settings, before any cycle.
    pub fn new(settings: FairshareSettings) -> Self {
        Fairshare {
            tree: settings.tree.clone(),
            settings,
            known: Vec::new(),
            last_running: Vec::new(),
            seen_running: Vec::new(),
            cycle: 0,
            last_decay: None,
            standing: Vec::new(),
            ranked: Vec::new(),
            in_ranking: Vec::new(),
        }
    }

    /// Ranks the entities of `jobs` from the most deserving ([`FairshareTree::compare`]),
    /// equal ones alike, for [`Self::standing`].
    pub(crate) fn rank_entities(&mut self, workload: &Workload, jobs: &[JobId]) {
        self.ranked.clear();
        for &job in jobs {
            let node = self.node(workload, job);
            if self.in_ranking.len() <= node {
                self.in_ranking.resize(node + 1, false);
            }
            if !std::mem::replace(&mut self.in_ranking[node], true) {
                self.ranked.push(node);
            }
        }
        let tree = &self.tree;
        self.ranked
            .sort_unstable_by(|&a, &b| tree.compare(a, b).then(a.cmp(&b)));
        if self.standing.len() < tree.nodes.len() {
            self.standing.resize(tree.nodes.len(), 0);
        }
        let mut standing = 0;
        for (i, &node) in self.ranked.iter().enumerate() {
            if i > 0 && tree.compare(self.ranked[i - 1], node).is_ne() {
                standing += 1;
            }
            self.standing[node] = standing;
            self.in_ranking[node] = false;
        }
    }

    /// Which of two jobs' entities is more deserving now ([`FairshareTree::compare`]), less
    /// first; both jobs' entities must have been found by [`Self::node`].
    pub(crate) fn compare_jobs(&self, a: JobId, b: JobId) -> std::cmp::Ordering {
        self.tree.compare(self.known_node(a), self.known_node(b))
    }

    /// Where `job`'s entity stood when the entities were last ranked (less first).
    pub(crate) fn standing(&self, job: JobId) -> u32 {
        self.standing[self.known_node(job)]
    }

    /// The node of `job`'s entity. Every pass asks for every waiting job's, almost all of
    /// them found at the passes before: those are answered here, inline, and only a job not
    /// seen yet is looked up.
    #[inline]
    pub fn node(&mut self, workload: &Workload, job: JobId) -> usize {
        if self.known.len() != workload.jobs().len() {
            self.known = vec![UNSEEN; workload.jobs().len()];
        }
        let known = self.known[job.index()];
        if known.node != UNSEEN.node {
            return known.node as usize;
        }
        self.look_up(workload, job)
    }

    /// Finds the node of `job`'s entity, not seen before, and keeps it with the job's top
    /// group and usage rate.
    #[inline(never)]
    fn look_up(&mut self, workload: &Workload, job: JobId) -> usize {
        let j = workload.job(job);
        // SWF's "unknown" is -1: a job with no known entity is that entity.
        let name = match self.settings.entity {
            FairshareEntity::User => j.user().map_or("-1".to_owned(), |u| u.to_string()),
            FairshareEntity::Group => j.group().map_or("-1".to_owned(), |g| g.to_string()),
            FairshareEntity::Project => j.project().map_or("-1", |p| &**p).to_owned(),
            FairshareEntity::Queue => workload
                .request_of(job)
                .queue
                .and_then(|q| self.settings.queue_names.get(q as usize))
                .cloned()
                .unwrap_or_else(|| "-1".to_owned()),
        };
        let n = self.tree.entity(&name);
        self.known[job.index()] = KnownJob {
            node: n as u32,
            top: self.tree.top(n),
            rate: self.settings.usage.rate(workload, job),
        };
        n
    }

    /// The node of `job`'s entity, found before by [`Self::node`] (the `unknown` group if it
    /// was not).
    pub(crate) fn known_node(&self, job: JobId) -> usize {
        match self.known.get(job.index()) {
            Some(k) if k.node != UNSEEN.node => k.node as usize,
            _ => UNKNOWN,
        }
    }

    /// The node below the root on the path of `job`'s entity (found before by
    /// [`Self::node`]): the temporary usage a job adds changes only how the jobs under the
    /// same one compare with others.
    pub(crate) fn top_of(&self, job: JobId) -> u32 {
        self.known
            .get(job.index())
            .map_or(UNKNOWN as u32, |k| k.top)
    }

    /// The start of a cycle at `now` (`init_scheduling_cycle`): each job that ran at the end
    /// of the last cycle and still runs adds what it used since to its entity's path (a job
    /// that ended in between adds nothing for that time, as in PBS); the tree decays once
    /// per `fairshare_decay_time` passed since it last did (the first cycle starts the
    /// clock); temporary usage starts again from usage.
    pub fn begin_cycle(
        &mut self,
        workload: &Workload,
        now: u64,
        running: &[placesim_core::RunningJob],
    ) {
        let n = workload.jobs().len();
        if self.seen_running.len() != n {
            self.seen_running = vec![(0, 0); n];
        }
        self.cycle += 1;
        for r in running {
            self.seen_running[r.job.index()] = (self.cycle, r.start.0);
        }
        let last = std::mem::take(&mut self.last_running);
        for a in &last {
            let (seen, start) = self.seen_running[a.job.index()];
            if seen != self.cycle {
                continue;
            }
            let used_now = a.rate * now.saturating_sub(start) as f64;
            let delta = (used_now - a.used).max(0.0);
            let node = match a.node {
                u32::MAX => self.node(workload, a.job),
                node => node as usize,
            };
            self.tree.add_usage(node, delta);
        }
        self.last_running = last;
        let last_decay = *self.last_decay.get_or_insert(now);
        if let Some(period) = self.settings.decay_time_s.filter(|&p| p > 0) {
            let mut t = now;
            let mut decayed = false;
            while t - last_decay > period {
                decayed = true;
                // Once every usage is at the minimum, further periods change nothing: a
                // long gap with a short period is not decayed period by period.
                if !self.tree.decay(self.settings.decay_factor) {
                    break;
                }
                t -= period;
            }
            if decayed {
                self.last_decay = Some(now - (now - last_decay) % period);
            }
        }
        self.tree.reset_temporary();
    }

    /// Each node's usage factor from the usage at the start of this cycle, for a formula's
    /// `fairshare_tree_usage` and `fairshare_factor` (PBS's `calc_usage_factor`, once per
    /// cycle); only a formula that reads them needs it.
    pub(crate) fn compute_usage_factors(&mut self) {
        self.tree.usage_factors();
    }

    /// The share of the machine of `job`'s entity (`fair_share_perc`), as the tree stands.
    pub fn percentage(&self, job: JobId) -> f32 {
        self.tree.tallies[self.known_node(job)].tree_percentage
    }

    /// The formula's fairshare terms of `job`'s entity: its share of the machine and its
    /// usage factor.
    pub fn terms(&self, job: JobId) -> (f64, f64) {
        let node = self.known_node(job);
        (
            f64::from(self.tree.tallies[node].tree_percentage),
            f64::from(self.tree.nodes[node].usage_factor),
        )
    }

    /// A job started or was calendared as a top job in this cycle: its requested usage goes
    /// to its entity's temporary usage (`update_usage_on_run`). Whether any usage changed.
    pub fn counted_in_cycle(&mut self, workload: &Workload, job: JobId) -> bool {
        if !self.settings.usage.requested {
            return false;
        }
        let node = self.node(workload, job);
        let usage = self.known[job.index()].rate * workload.job(job).estimate.as_secs() as f64;
        self.tree.add_temporary_usage(node, usage);
        true
    }

    /// The end of a cycle at `now`: the jobs running then (those that ran before it, and
    /// those it started), with what they have used. The entity of a job this scheduler
    /// never queued (another's, under partitions) is found only if it still runs at the
    /// next cycle, as it joins the tree only then.
    pub fn end_cycle(
        &mut self,
        workload: &Workload,
        now: u64,
        running: &[placesim_core::RunningJob],
        started: impl Iterator<Item = JobId>,
    ) {
        self.last_running.clear();
        let jobs = running
            .iter()
            .map(|r| (r.job, r.start.0))
            .chain(started.map(|job| (job, now)));
        let rate_of = &self.settings.usage;
        for (job, start) in jobs {
            let (node, rate) = match self.known.get(job.index()) {
                Some(k) if k.node != UNSEEN.node => (k.node, k.rate),
                _ => (u32::MAX, rate_of.rate(workload, job)),
            };
            let used = rate * now.saturating_sub(start) as f64;
            self.last_running.push(Accrual {
                job,
                node,
                rate,
                used,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PTL fairshare test's tree (pbs_fairshare.py): group1 has 40 of 100 shares, its
    /// users half each; with unknown_shares 10, group1 has 40 of 110.
    #[test]
    fn percentages_follow_shares_along_the_tree() {
        let text = "group1 10 root 40\ngroup2 20 root 60\nuser1 11 group1 50\n\
                    user2 12 group1 50\nuser3 21 group2 60\nuser4 22 group2 40\n";
        let tree = FairshareTree::parse(text, 0).unwrap();
        let p = |name: &str| tree.tree_percentage(tree.by_name[name]);
        assert_eq!(p("group1"), 0.4);
        assert_eq!(p("user1"), 0.2);
        assert_eq!(p("user3"), 0.6f32 * 0.6f32);
        assert_eq!(p("unknown"), 0.0);
        let tree = FairshareTree::parse(text, 10).unwrap();
        let p = |name: &str| tree.tree_percentage(tree.by_name[name]);
        assert_eq!(p("group1"), 40.0 / 110.0);
        assert_eq!(p("unknown"), 10.0 / 110.0);
    }

    /// A deep tree is compared at the first level where two paths part: u1 has used less
    /// for its share than u3, but its group g1 has used more for its share than g2, so u3
    /// goes first; inside g1, s2's u4 (its subgroup has used nothing) goes before u1 and u2,
    /// and between u1 and u2, who share s1, their own usage decides.
    #[test]
    fn a_deep_tree_is_compared_where_the_paths_part() {
        let text = "g1 1 root 60\ng2 2 root 40\ns1 3 g1 50\ns2 4 g1 50\nu1 5 s1 50\n\
                    u2 6 s1 50\nu4 7 s2 100\nu3 8 g2 100\n";
        let mut tree = FairshareTree::parse(text, 0).unwrap();
        let id = |tree: &FairshareTree, name: &str| tree.by_name[name];
        let (u1, u2, u3, u4) = (
            id(&tree, "u1"),
            id(&tree, "u2"),
            id(&tree, "u3"),
            id(&tree, "u4"),
        );
        // u1: 10 over 0.15; u2: 200 over 0.15; g1: 211 over 0.6; u3 (and g2): 50 over 0.4.
        tree.add_usage(u1, 9.0);
        tree.add_usage(u2, 199.0);
        tree.add_usage(u3, 49.0);
        tree.reset_temporary();
        use std::cmp::Ordering::*;
        assert_eq!(tree.compare(u3, u1), Less);
        assert_eq!(tree.compare(u1, u3), Greater);
        assert_eq!(tree.compare(u4, u1), Less);
        assert_eq!(tree.compare(u1, u2), Less);
        // Temporary usage counts, not usage: u1's job started this cycle turns it around.
        tree.add_temporary_usage(u1, 1000.0);
        assert_eq!(tree.compare(u2, u1), Less);
        // An entity with no share loses to any with one; two without tie.
        let stranger = tree.entity("stranger");
        assert_eq!(tree.tree_percentage(stranger), 0.0);
        assert_eq!(tree.compare(u2, stranger), Less);
        let other = tree.entity("other");
        assert_eq!(tree.compare(stranger, other), Equal);
    }

    #[test]
    fn bad_lines_say_which_and_why() {
        let cases = [
            (
                "g1 1 root",
                "line 1: expected `NAME ID PARENT SHARES`, found 3 fields",
            ),
            (
                "g1 1 root 5\ng1 2 root 5",
                "line 2: entity `g1` is not unique",
            ),
            (
                "\n# c\nu1 1 g9 5",
                "line 3: the parent `g9` of `u1` is not defined above it",
            ),
            ("g1 x root 5", "line 1: the id `x` of `g1` is not a number"),
            (
                "g1 1 root -5",
                "line 1: the shares `-5` of `g1` are not a whole number",
            ),
            ("unknown 1 root 5", "line 1: entity `unknown` is not unique"),
        ];
        for (text, want) in cases {
            assert_eq!(
                FairshareTree::parse(text, 0).unwrap_err().to_string(),
                want,
                "{text}"
            );
        }
    }
}
