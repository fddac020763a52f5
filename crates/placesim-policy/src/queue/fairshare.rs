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
    /// What `job` accrues per second: a whole number, as every total is one (saturating,
    /// for a product past 2^64 per second, which no request comes near).
    fn rate(&self, workload: &Workload, job: JobId) -> u64 {
        let request = workload.request_of(job);
        self.per_second_of
            .iter()
            .fold(1u64, |rate, &c| rate.saturating_mul(request.total(c)))
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
///
/// A node's usage is what it had after the tree last decayed (`decayed`, in floating point,
/// as a decay multiplies it) plus what it accrued since (`accrued`, a whole number: rates and
/// seconds are whole, so the sum is exact whatever order its parts come in). PBS adds each
/// job's part in turn in double precision; the two can differ in the last bit once a decay
/// has left fractional bits, and only there.
///
/// It is brought up to date lazily ([`FairshareTree::settle`]): a node keeps its usage as of
/// one cycle and the rate its running jobs accrue at, and is settled to a later cycle only
/// when something reads it or its rate changes. Between two such moments every cycle would
/// add the same rate times the seconds since the cycle before, which sum to the rate times
/// the seconds between the two, decayed at the cycles that decayed the tree: exactly the
/// cycle-by-cycle sums, as `accrued` is exact.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tally {
    /// Usage when the tree last decayed (after the decay), or the minimum.
    decayed: f64,
    /// Usage accrued since, up to the cycle at `as_of_s`.
    accrued: u64,
    /// Usage with the requested usage of the jobs started or calendared in this cycle.
    temp_usage: f64,
    /// What the jobs under it that ran at the end of the last cycle accrue per second.
    rate_per_s: u64,
    /// The time of the cycle `accrued` stands at (after that cycle's accrual and decay);
    /// without a rate, any cycle since it was last settled ([`FairshareTree::stands_at`]).
    as_of_s: u64,
    /// How many of the tree's decays it has had.
    decays_seen: u32,
    /// As PBS keeps it, in single precision.
    tree_percentage: f32,
    /// Whether it is in the tree's `accruing` list.
    listed: bool,
}

impl Tally {
    /// Usage as of the cycle it stands at (what the tree's `usages` keeps of it).
    fn usage(&self) -> f64 {
        self.decayed + self.accrued as f64
    }

    /// Temporary usage set, and what comparisons read of it: over the share of the
    /// machine, infinite for no share (which loses to any share, and ties with another
    /// none).
    fn set_temp_usage(&mut self, temp_usage: f64) -> f64 {
        self.temp_usage = temp_usage;
        if self.tree_percentage > 0.0 {
            temp_usage / f64::from(self.tree_percentage)
        } else {
            f64::INFINITY
        }
    }
}

/// A cycle at which the tree decayed, and how many periods it decayed by.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Decay {
    at_s: u64,
    periods: u64,
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
    paths: Vec<Box<[u32]>>,
    /// Nodes whose temporary usage may differ from their usage: what the next cycle resets,
    /// instead of every node.
    touched: Vec<u32>,
    /// Per node: its parent (`NO_PARENT` for the root), its usage as of the cycle its tally
    /// stands at, and what comparisons read, its temporary usage over its share of the
    /// machine. Dense lists apart from the tallies: the walks up a path, the walk that
    /// computes the usage factors over every node at every cycle, and comparisons read
    /// them and nothing else of a node.
    parents: Vec<u32>,
    usages: Vec<f64>,
    temp_per_share: Vec<f64>,
    /// The cycles at which the tree decayed, in time order, which a node's usage catches up
    /// with when it is settled.
    decays: Vec<Decay>,
    /// `fairshare_decay_factor`.
    decay_factor: f64,
    /// The cycle a node added now starts at, with the minimum usage.
    clock_s: u64,
    /// The nodes that may accrue (every node with a rate is here; one whose rate fell to 0
    /// leaves at the next walk of the list), and how many decays every node has had: the
    /// others' usage stands wherever they were last settled.
    accruing: Vec<u32>,
    decays_all_had: usize,
}

const ROOT: usize = 0;
const UNKNOWN: usize = 1;

/// The deepest a resource group file may nest groups below the root. Each node keeps its
/// path from the root, and a line adds its node at the cost of its depth: a file that chains
/// every entity under the one before it took memory and time quadratic in its length (a
/// chain of 100,000 held 24 GB before it was stopped). PBS walks the tree by recursion, and
/// sites nest a few levels.
pub const MAX_TREE_DEPTH: usize = 64;

/// The most entities a resource group file may define, as a cluster has a most vnodes: a
/// bound on the memory a file of any length takes.
pub const MAX_TREE_ENTITIES: usize = 1_000_000;

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
        Self::parse_within(text, unknown_shares, MAX_TREE_ENTITIES)
    }

    /// [`Self::parse`] with at most `max_entities` entities, so that a test reaches the limit
    /// without a file of a million lines.
    fn parse_within(
        text: &str,
        unknown_shares: u64,
        max_entities: usize,
    ) -> Result<FairshareTree, TreeError> {
        let mut tree = FairshareTree {
            nodes: Vec::new(),
            tallies: Vec::new(),
            by_name: HashMap::new(),
            paths: Vec::new(),
            touched: Vec::new(),
            parents: Vec::new(),
            usages: Vec::new(),
            temp_per_share: Vec::new(),
            decays: Vec::new(),
            decay_factor: 0.5,
            clock_s: 0,
            accruing: Vec::new(),
            decays_all_had: 0,
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
            if tree.paths[parent].len() >= MAX_TREE_DEPTH {
                return Err(at(format!(
                    "`{name}` would be {} levels below the root, more than placesim's limit \
                     of {MAX_TREE_DEPTH}",
                    tree.paths[parent].len() + 1
                )));
            }
            // The root and `unknown` are the tree's own.
            if tree.nodes.len() - 2 >= max_entities {
                return Err(at(format!(
                    "more than placesim's limit of {max_entities} entities in a fairshare tree"
                )));
            }
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
        if let Some(p) = parent {
            self.settle_path(p, self.clock_s);
        }
        let id = self.nodes.len();
        self.nodes.push(Node {
            name: name.to_owned(),
            children: Vec::new(),
            shares,
            group_percentage: 1.0,
            usage_factor: 0.0,
        });
        self.tallies.push(Tally {
            decayed: MIN_USAGE,
            accrued: 0,
            temp_usage: MIN_USAGE,
            rate_per_s: 0,
            as_of_s: self.clock_s,
            decays_seen: self.decays.len() as u32,
            tree_percentage: 1.0,
            listed: false,
        });
        self.parents.push(parent.map_or(NO_PARENT, |p| p as u32));
        self.usages.push(MIN_USAGE);
        self.temp_per_share.push(MIN_USAGE);
        let path: Box<[u32]> = match parent {
            Some(p) if p != ROOT => self.paths[p].iter().copied().chain([id as u32]).collect(),
            Some(_) => Box::new([id as u32]),
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
            // Summed wide: shares are any u64, and two of the largest would overflow.
            let total: u128 = children
                .iter()
                .map(|&c| u128::from(self.nodes[c].shares))
                .sum();
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
                self.temp_per_share[c] = tally.set_temp_usage(tally.temp_usage);
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

    /// Usage `amount` added at once on `node`'s path (a hand-made usage for tests).
    #[cfg(test)]
    fn add_usage(&mut self, node: usize, amount: u64) {
        let mut n = node as u32;
        while n != NO_PARENT {
            let tally = &mut self.tallies[n as usize];
            tally.accrued += amount;
            self.usages[n as usize] = tally.usage();
            self.temp_per_share[n as usize] = tally.set_temp_usage(tally.usage());
            n = self.parents[n as usize];
        }
    }

    /// Whether `node`'s usage stands at the cycle at `at_s`, every decay until then had. A
    /// node that accrues nothing stands at every cycle from the tree's last decay on: no
    /// second moves its usage (half the entities a pass reads, most often), and its clock is
    /// set when a rate starts again ([`Self::change_rate`]).
    #[inline]
    fn stands_at(&self, node: usize, at_s: u64) -> bool {
        let tally = &self.tallies[node];
        tally.decays_seen as usize == self.decays.len()
            && (tally.as_of_s == at_s || tally.rate_per_s == 0)
    }

    /// Brings `node`'s usage up to the cycle at `to_s`: its rate times the seconds up to
    /// each decay after the cycle it stood at, then the decay of the whole usage once per
    /// period (never below the minimum; once there it stays, the factor being below 1), and
    /// the rest of the seconds. A node settled moves its temporary usage back to its usage,
    /// as accrual does in PBS.
    fn settle(&mut self, node: usize, to_s: u64) {
        let tally = &mut self.tallies[node];
        debug_assert!(
            tally.as_of_s <= to_s,
            "a node is settled to a cycle before its own"
        );
        if tally.rate_per_s == 0 && self.usages[node] == MIN_USAGE {
            // At the minimum with nothing accruing: no decay or second moves it (most of a
            // tree's entities, most of the time).
            tally.decays_seen = self.decays.len() as u32;
            tally.as_of_s = to_s;
            return;
        }
        let accrue = |tally: &mut Tally, until_s: u64| {
            let seconds = until_s - tally.as_of_s;
            tally.accrued = tally
                .accrued
                .saturating_add(tally.rate_per_s.saturating_mul(seconds));
            tally.as_of_s = until_s;
        };
        for decay in &self.decays[tally.decays_seen as usize..] {
            if decay.at_s > to_s {
                break;
            }
            accrue(tally, decay.at_s);
            let mut usage = tally.usage();
            for _ in 0..decay.periods {
                if usage <= MIN_USAGE {
                    break;
                }
                usage = (usage * self.decay_factor).max(MIN_USAGE);
            }
            (tally.decayed, tally.accrued) = (usage, 0);
            tally.decays_seen += 1;
        }
        accrue(tally, to_s);
        let usage = tally.usage();
        self.usages[node] = usage;
        // Unchanged (no rate, no decay), it needs no new quotient.
        if usage != tally.temp_usage {
            self.temp_per_share[node] = tally.set_temp_usage(usage);
        }
    }

    /// `node` settled to the cycle at `to_s`, unless it stands there already.
    #[inline]
    fn settle_if_behind(&mut self, node: usize, to_s: u64) {
        if !self.stands_at(node, to_s) {
            self.settle(node, to_s);
        }
    }

    /// Every node on `node`'s path settled to the cycle at `to_s`. A node settled at that
    /// cycle has its ancestors standing there too (each settling and each new node settles
    /// the whole path above it), so the walk ends at the first such node: most often the
    /// entity itself, settled by the same cycle's pass before. A node that stands only for
    /// accruing nothing says nothing of its ancestors, which may accrue: the walk goes on.
    #[inline]
    fn settle_path(&mut self, node: usize, to_s: u64) {
        let mut n = node as u32;
        while n != NO_PARENT {
            let tally = &self.tallies[n as usize];
            let decayed = tally.decays_seen as usize == self.decays.len();
            if decayed && tally.as_of_s == to_s {
                return;
            }
            if !decayed || tally.rate_per_s != 0 {
                self.settle(n as usize, to_s);
            }
            n = self.parents[n as usize];
        }
    }

    /// A job of `node`'s entity starts (`joins`) or stops accruing `rate_per_s` after the
    /// cycle at `at_s`: the path is settled to that cycle, and its rate changes from then.
    fn change_rate(&mut self, node: usize, rate_per_s: u64, at_s: u64, joins: bool) {
        let mut n = node as u32;
        while n != NO_PARENT {
            self.settle_if_behind(n as usize, at_s);
            let tally = &mut self.tallies[n as usize];
            // Without a rate it stood wherever it was last settled: it accrues from now on.
            if tally.rate_per_s == 0 {
                tally.as_of_s = at_s;
            }
            // Rates are whole: what a job added, its end takes back exactly.
            tally.rate_per_s = if joins {
                tally.rate_per_s.saturating_add(rate_per_s)
            } else {
                tally.rate_per_s.saturating_sub(rate_per_s)
            };
            if tally.rate_per_s != 0 && !tally.listed {
                tally.listed = true;
                self.accruing.push(n);
            }
            n = self.parents[n as usize];
        }
    }

    /// Requested usage of a job started or calendared in this cycle, on `node`'s path: it
    /// counts until the next cycle.
    fn add_temporary_usage(&mut self, node: usize, amount: f64) {
        let mut n = node as u32;
        while n != NO_PARENT {
            let tally = &mut self.tallies[n as usize];
            self.temp_per_share[n as usize] = tally.set_temp_usage(tally.temp_usage + amount);
            self.touched.push(n);
            n = self.parents[n as usize];
        }
    }

    /// The first node below the root on `node`'s path: two entities under different ones
    /// compare there.
    fn top(&self, node: usize) -> u32 {
        self.paths[node].first().map_or(ROOT as u32, |&n| n)
    }

    /// Which of two entities is more deserving (`compare_path`): along their paths from the
    /// root, at the first level where they differ, the lower temporary usage over share of
    /// the machine; a share of 0 always loses, and two of 0 tie. Less is first.
    ///
    /// The tree keeps each node's temporary usage over its share (`temp_per_share`), infinite for
    /// none: two nodes without a share read equal, and the levels below them, which have no
    /// share either, equal too, which is PBS's tie.
    #[inline]
    pub fn compare(&self, a: usize, b: usize) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        if a == b {
            return Ordering::Equal;
        }
        for (&x, &y) in self.paths[a].iter().zip(self.paths[b].iter()) {
            if x == y {
                continue;
            }
            debug_assert!(
                self.is_settled(x as usize) && self.is_settled(y as usize),
                "entities are compared on usage not brought up to this cycle"
            );
            let (vx, vy) = (
                self.temp_per_share[x as usize],
                self.temp_per_share[y as usize],
            );
            if vx != vy {
                return if vx < vy {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
            }
        }
        Ordering::Equal
    }

    /// Each node's usage factor (`calc_usage_factor`): its share of the root's usage, drawn
    /// toward its parent's factor by its share among its siblings; the root's children keep
    /// their own share.
    fn usage_factors(&mut self, now_s: u64) {
        // Every node's usage is read, but only a node that accrues, or any after a decay,
        // has a new one: the others stand where they were last settled.
        if self.decays_all_had != self.decays.len() {
            for n in 0..self.tallies.len() {
                self.settle_if_behind(n, now_s);
            }
            self.decays_all_had = self.decays.len();
        } else {
            let mut accruing = std::mem::take(&mut self.accruing);
            accruing.retain(|&n| {
                let n = n as usize;
                if self.tallies[n].rate_per_s == 0 {
                    self.tallies[n].listed = false;
                    return false;
                }
                self.settle_if_behind(n, now_s);
                true
            });
            self.accruing = accruing;
        }
        let root_usage = self.usages[ROOT];
        let nodes = &mut self.nodes[..];
        let (usages, parents) = (&self.usages[..nodes.len()], &self.parents[..nodes.len()]);
        // Nodes come after their parents (a parent is defined before its children, and
        // entities join later), so one walk in order sees every parent's factor first.
        for n in 1..nodes.len() {
            let share = (usages[n] / root_usage) as f32;
            let factor = match parents[n] as usize {
                ROOT => share,
                p if p == NO_PARENT as usize => share,
                p => share + (nodes[p].usage_factor - share) * nodes[n].group_percentage,
            };
            nodes[n].usage_factor = factor;
        }
    }

    /// Whether `node`'s usage stands at this cycle.
    fn is_settled(&self, node: usize) -> bool {
        self.stands_at(node, self.clock_s)
    }

    /// Temporary usage starts again from usage.
    fn reset_temporary(&mut self) {
        for n in self.touched.drain(..) {
            let tally = &mut self.tallies[n as usize];
            self.temp_per_share[n as usize] = tally.set_temp_usage(self.usages[n as usize]);
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
    /// The node of each user or group number found so far, for a `euser` or `egroup`
    /// entity: at the number plus one (0 for unknown, `-1`).
    by_number: super::ByNumber,
    /// Per job: whether it ran at the end of the last cycle (it accrues from then while it
    /// still runs at the next).
    is_accruing: Vec<bool>,
    /// The accruing jobs whose entity is not found yet (another scheduler's, or those
    /// running when the run began): each is found at the next cycle if it still runs.
    accruing_unseen: Vec<Accrual>,
    /// Per job: the cycle at which it was last seen at a changed place of the running list.
    seen_running: Vec<u64>,
    /// The running list as the last cycle saw it (the job at each place), and where the
    /// kernel's log of its changes stood then: a cycle reads only the places changed since.
    places: Vec<JobId>,
    log_mark: Option<placesim_core::LogMark>,
    /// The places a cycle reads (kept so that its memory serves every cycle).
    changed_places: Vec<u32>,
    /// The jobs running at this cycle's start that were not running at the last one's end
    /// (another scheduler's, or those running when the run began): they accrue from this
    /// cycle's end.
    newcomers: Vec<JobId>,
    /// The jobs the last cycle started, which the running list it read did not hold.
    started_last: Vec<JobId>,
    cycle: u64,
    /// The time of the last cycle.
    last_cycle_s: Option<u64>,
    last_decay: Option<u64>,
    /// Per node: its place among the entities of the jobs last ranked (equal entities share
    /// one), so that sorting jobs compares numbers, not paths.
    standing: Vec<u32>,
    /// The entities being ranked, and which are among them.
    ranked: Vec<usize>,
    in_ranking: Vec<bool>,
    /// Per node: the cycle whose queue last had the path above it settled. A queue holds
    /// several jobs of most of its entities; the second walk up the same path would find
    /// every node standing, and is not made.
    path_settled_in: Vec<u64>,
}

/// What fairshare keeps of a job whose entity it has found.
#[derive(Debug, Clone, Copy)]
struct KnownJob {
    node: u32,
    top: u32,
    /// What it accrues per second ([`UsageRate`]).
    rate: u64,
}

/// What comparing a job's entity with another's reads ([`Fairshare::reading`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct EntityReading {
    node: u32,
    /// The node below the root on the entity's path.
    pub(crate) top: u32,
    /// That node's temporary usage over its share of the machine.
    top_per_share: f64,
}

/// A job not yet seen by [`Fairshare::node`].
const UNSEEN: KnownJob = KnownJob {
    node: u32::MAX,
    top: u32::MAX,
    rate: 0,
};

/// A job running at the end of a cycle whose entity is not found yet.
#[derive(Debug, Clone, Copy)]
struct Accrual {
    job: JobId,
    rate: u64,
}

impl Fairshare {
    /// Fairshare with these settings, before any cycle.
    pub fn new(settings: FairshareSettings) -> Self {
        let mut tree = settings.tree.clone();
        tree.decay_factor = settings.decay_factor;
        Fairshare {
            tree,
            settings,
            known: Vec::new(),
            by_number: super::ByNumber::default(),
            is_accruing: Vec::new(),
            accruing_unseen: Vec::new(),
            seen_running: Vec::new(),
            places: Vec::new(),
            log_mark: None,
            changed_places: Vec::new(),
            newcomers: Vec::new(),
            started_last: Vec::new(),
            cycle: 0,
            last_cycle_s: None,
            last_decay: None,
            standing: Vec::new(),
            ranked: Vec::new(),
            in_ranking: Vec::new(),
            path_settled_in: Vec::new(),
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
    #[inline]
    pub(crate) fn compare_jobs(&self, a: JobId, b: JobId) -> std::cmp::Ordering {
        self.compare_readings(self.reading(a), self.reading(b))
    }

    /// What comparing `job`'s entity with another's reads ([`Self::compare_readings`]), read
    /// once: a walk along an ordered list compares each job with the one before it and the
    /// one after it.
    #[inline]
    pub(crate) fn reading(&self, job: JobId) -> EntityReading {
        let known = self.known_job(job);
        EntityReading {
            node: known.node,
            top: known.top,
            top_per_share: self.tree.temp_per_share[known.top as usize],
        }
    }

    /// [`Self::compare_jobs`] on two jobs' [`Self::reading`]s, taken since the last change
    /// of usage.
    ///
    /// Most pairs part at their top groups, each job keeping its own: those are told by two
    /// numbers, without walking the paths.
    #[inline]
    pub(crate) fn compare_readings(
        &self,
        a: EntityReading,
        b: EntityReading,
    ) -> std::cmp::Ordering {
        if a.node == b.node {
            return std::cmp::Ordering::Equal;
        }
        if a.top != b.top {
            let (va, vb) = (a.top_per_share, b.top_per_share);
            if va != vb {
                debug_assert_eq!(
                    self.tree.compare(a.node as usize, b.node as usize),
                    va.partial_cmp(&vb).unwrap_or(std::cmp::Ordering::Equal)
                );
                return if va < vb {
                    std::cmp::Ordering::Less
                } else {
                    std::cmp::Ordering::Greater
                };
            }
        }
        self.tree.compare(a.node as usize, b.node as usize)
    }

    /// What is kept of `job`, if [`Self::node`] found its entity.
    #[inline]
    fn found(&self, job: JobId) -> Option<KnownJob> {
        self.known
            .get(job.index())
            .copied()
            .filter(|k| k.node != UNSEEN.node)
    }

    /// What is kept of `job`, found before by [`Self::node`] (as the `unknown` group's if it
    /// was not).
    #[inline]
    fn known_job(&self, job: JobId) -> KnownJob {
        self.found(job).unwrap_or(KnownJob {
            node: UNKNOWN as u32,
            top: UNKNOWN as u32,
            rate: 0,
        })
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
        self.keep_room_for(workload);
        self.node_in_room(workload, job)
    }

    /// A place per job of `workload` in what is kept of jobs, made at the first pass.
    #[inline]
    fn keep_room_for(&mut self, workload: &Workload) {
        if self.known.len() != workload.jobs().len() {
            self.known = vec![UNSEEN; workload.jobs().len()];
        }
    }

    /// [`Self::node`] once [`Self::keep_room_for`] made room: a walk over the waiting jobs
    /// makes sure of the room once, then asks this of each.
    #[inline(always)]
    fn node_in_room(&mut self, workload: &Workload, job: JobId) -> usize {
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
        let number = match self.settings.entity {
            FairshareEntity::User => Some(j.user()),
            FairshareEntity::Group => Some(j.group()),
            _ => None,
        };
        // Entities named by a number are found by it, without writing the name out.
        let slot = number.map(|number| number.map_or(0, |n| n as usize + 1));
        let n = match slot.and_then(|slot| self.by_number.get(slot)) {
            Some(n) => n as usize,
            None => {
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
                if let Some(slot) = slot {
                    self.by_number.keep(slot, n as u32);
                }
                n
            }
        };
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
        self.known_job(job).node as usize
    }

    /// The node below the root on the path of `job`'s entity (found before by
    /// [`Self::node`]): the temporary usage a job adds changes only how the jobs under the
    /// same one compare with others.
    #[inline]
    pub(crate) fn top_of(&self, job: JobId) -> u32 {
        self.known_job(job).top
    }

    /// The start of a cycle at `now` (`init_scheduling_cycle`): each job that ran at the end
    /// of the last cycle and still runs adds what it used since to its entity's path (a job
    /// that ended in between adds nothing for that time, as in PBS); the tree decays once
    /// per `fairshare_decay_time` passed since it last did (the first cycle starts the
    /// clock); temporary usage starts again from usage.
    ///
    /// What the cycle adds is kept as rates (`FairshareTree::settle`): only the jobs that
    /// ended since the last cycle, and those whose entity is found now, change their
    /// entity's, and they are found from the places of the running list that `log` says
    /// changed (the whole list without it), so a cycle costs what changed, not a walk up
    /// the tree per running job; the nodes read are brought up to date when read.
    pub fn begin_cycle(
        &mut self,
        workload: &Workload,
        now: u64,
        running: &[placesim_core::RunningJob],
        log: Option<&placesim_core::RunningLog>,
    ) {
        let n = workload.jobs().len();
        if self.seen_running.len() != n {
            self.seen_running = vec![0; n];
            self.is_accruing = vec![false; n];
        }
        self.cycle += 1;
        // Every accruing job joined at a cycle, so there was one.
        let last_s = self.last_cycle_s.unwrap_or(now);
        let mut changed = std::mem::take(&mut self.changed_places);
        changed.clear();
        match (log, self.log_mark) {
            (Some(log), Some(mark)) if let Some(places) = log.since(mark) => {
                // Each changed place once: the log may name one several times.
                changed.extend_from_slice(places);
                changed.sort_unstable();
                changed.dedup();
            }
            _ => changed.extend(0..running.len().max(self.places.len()) as u32),
        }
        self.read_places(&changed, running, last_s);
        self.changed_places = changed;
        self.log_mark = log.map(placesim_core::RunningLog::mark);
        // Entities found now join the tree as of the last cycle, whose seconds since they
        // accrue.
        self.tree.clock_s = last_s;
        let mut unseen = std::mem::take(&mut self.accruing_unseen);
        for a in unseen.drain(..) {
            if !self.is_accruing[a.job.index()] {
                continue;
            }
            let node = self.node(workload, a.job);
            self.tree.change_rate(node, a.rate, last_s, true);
        }
        self.accruing_unseen = unseen;
        let last_decay = *self.last_decay.get_or_insert(now);
        if let Some(period) = self.settings.decay_time_s.filter(|&p| p > 0) {
            // The periods passed: the `k` with now - last_decay > (k + 1) * period.
            let since = now - last_decay;
            let periods = since.saturating_sub(1) / period;
            if periods > 0 {
                self.tree.decays.push(Decay { at_s: now, periods });
                self.last_decay = Some(now - since % period);
            }
        }
        self.tree.clock_s = now;
        self.last_cycle_s = Some(now);
        self.tree.reset_temporary();
    }

    /// Reads the running list at `places` (each once), against what the last cycle saw
    /// there: a job seen there before and now nowhere among them has ended, and stops
    /// accruing as of the last cycle at `last_s`; a job there now that did not accrue is a
    /// newcomer. A job that moved was logged at both its places, and one that stayed put
    /// at neither.
    fn read_places(&mut self, places: &[u32], running: &[placesim_core::RunningJob], last_s: u64) {
        self.newcomers.clear();
        for &p in places {
            if let Some(r) = running.get(p as usize) {
                self.seen_running[r.job.index()] = self.cycle;
                if !self.is_accruing[r.job.index()] {
                    self.newcomers.push(r.job);
                }
            }
        }
        // The jobs at the changed places before, and those the last cycle started, which
        // joined the list after it was read.
        for &p in places {
            if let Some(&old) = self.places.get(p as usize) {
                self.stop_if_ended(old, last_s);
            }
        }
        for i in 0..self.started_last.len() {
            self.stop_if_ended(self.started_last[i], last_s);
        }
        self.places.resize(running.len(), JobId(u32::MAX));
        for &p in places {
            if let Some(r) = running.get(p as usize) {
                self.places[p as usize] = r.job;
            }
        }
    }

    /// `job`, running at the end of the last cycle (at `last_s`) and not seen now: it stops
    /// accruing, as of then.
    fn stop_if_ended(&mut self, job: JobId, last_s: u64) {
        let i = job.index();
        if self
            .seen_running
            .get(i)
            .is_none_or(|&seen| seen == self.cycle)
            || !self.is_accruing[i]
        {
            return;
        }
        self.is_accruing[i] = false;
        if let Some(known) = self.found(job) {
            self.tree
                .change_rate(known.node as usize, known.rate, last_s, false);
        }
    }

    /// Finds the entity of each of `queue`'s jobs ([`Self::node`]) and brings the usage on
    /// its path up to this cycle, for the comparisons that read it: every pass asks it of
    /// each waiting job.
    pub(crate) fn settle_queue(&mut self, workload: &Workload, queue: &[JobId]) {
        let now = self.tree.clock_s;
        self.keep_room_for(workload);
        for &job in queue {
            let node = self.node_in_room(workload, job);
            if self.path_settled_in.len() <= node {
                self.path_settled_in.resize(self.tree.nodes.len(), 0);
            }
            // Cycles count from 1: a node never settled reads 0.
            if std::mem::replace(&mut self.path_settled_in[node], self.cycle) != self.cycle {
                self.tree.settle_path(node, now);
            }
        }
    }

    /// Each node's usage factor from the usage at the start of this cycle, for a formula's
    /// `fairshare_tree_usage` and `fairshare_factor` (PBS's `calc_usage_factor`, once per
    /// cycle); only a formula that reads them needs it.
    pub(crate) fn compute_usage_factors(&mut self) {
        self.tree.usage_factors(self.tree.clock_s);
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
        let usage =
            self.known[job.index()].rate as f64 * workload.job(job).estimate.as_secs() as f64;
        self.tree.add_temporary_usage(node, usage);
        true
    }

    /// The end of a cycle at `now`: the jobs running then (those that ran before it, and
    /// those it started) accrue from now. The entity of a job this scheduler never queued
    /// (another's, under partitions) is found only if it still runs at the next cycle, as it
    /// joins the tree only then.
    pub fn end_cycle(
        &mut self,
        workload: &Workload,
        now: u64,
        started: impl Iterator<Item = JobId>,
    ) {
        self.started_last.clear();
        self.started_last.extend(started);
        let (joining, started_last) = (
            std::mem::take(&mut self.newcomers),
            std::mem::take(&mut self.started_last),
        );
        for &job in joining.iter().chain(&started_last) {
            self.is_accruing[job.index()] = true;
            match self.found(job) {
                Some(k) => self.tree.change_rate(k.node as usize, k.rate, now, true),
                None => self.accruing_unseen.push(Accrual {
                    job,
                    rate: self.settings.usage.rate(workload, job),
                }),
            }
        }
        self.newcomers = joining;
        self.started_last = started_last;
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
        tree.add_usage(u1, 9);
        tree.add_usage(u2, 199);
        tree.add_usage(u3, 49);
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

    /// Usage settled lazily ([`FairshareTree::settle`], rates changed by
    /// [`FairshareTree::change_rate`]) equals PBS's accrual cycle by cycle, written out here
    /// plainly: at each cycle every job that ran at the end of the last one and still runs
    /// adds its rate times the seconds since along its path, then every node decays once per
    /// period passed, never below 1. A random history over a three-level tree with jobs
    /// starting at cycles and ending between them, long gaps decaying several periods at
    /// once, and a factor of 0.7: equal bit for bit at every node and every cycle, the nodes
    /// settled in a random order.
    #[test]
    fn settled_usage_is_the_per_cycle_sum() {
        let text = "g1 1 root 60\ng2 2 root 40\ns1 3 g1 50\ns2 4 g1 50\nu1 5 s1 50\n\
                    u2 6 s1 50\nu4 7 s2 100\nu3 8 g2 100\n";
        let mut lazy = FairshareTree::parse(text, 5).unwrap();
        lazy.decay_factor = 0.7;
        let leaves: Vec<usize> = ["u1", "u2", "u3", "u4", "g2", "unknown"]
            .iter()
            .map(|name| lazy.by_name[*name])
            .collect();
        // Per node: usage after the last decay, and accrued since.
        let mut eager: Vec<(f64, u64)> = vec![(MIN_USAGE, 0); lazy.tallies.len()];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut draw = |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % below
        };
        let period = 100;
        // (node, rate, ends before the next cycle)
        let mut running: Vec<(usize, u64, bool)> = Vec::new();
        let (mut now, mut last_decay) = (0u64, 0u64);
        for cycle in 0..3_000 {
            let last = now;
            now += 1 + draw(if cycle % 500 == 499 { 1_000 } else { 60 });
            running.retain(|&(node, rate, ends)| {
                if ends {
                    lazy.change_rate(node, rate, last, false);
                    return false;
                }
                let mut n = node as u32;
                while n != NO_PARENT {
                    eager[n as usize].1 += rate * (now - last);
                    n = lazy.parents[n as usize];
                }
                true
            });
            let periods = (now - last_decay).saturating_sub(1) / period;
            if periods > 0 {
                for (decayed, accrued) in &mut eager {
                    *decayed += *accrued as f64;
                    *accrued = 0;
                    for _ in 0..periods {
                        *decayed = (*decayed * 0.7).max(MIN_USAGE);
                    }
                }
                lazy.decays.push(Decay { at_s: now, periods });
                last_decay = now - (now - last_decay) % period;
            }
            lazy.clock_s = now;
            let first = draw(eager.len() as u64) as usize;
            for k in 0..eager.len() {
                let n = (first + k) % eager.len();
                lazy.settle_path(n, now);
                let (decayed, accrued) = eager[n];
                assert_eq!(
                    lazy.usages[n],
                    decayed + accrued as f64,
                    "node {n}, cycle {cycle}"
                );
            }
            for job in running.iter_mut() {
                job.2 = draw(4) == 0;
            }
            for _ in 0..draw(3) {
                let node = leaves[draw(leaves.len() as u64) as usize];
                let rate = 1 + draw(64);
                lazy.change_rate(node, rate, now, true);
                running.push((node, rate, draw(5) == 0));
            }
        }
        assert!(lazy.decays.len() > 100, "the history decays");
        assert!(eager[ROOT].0 > 1_000.0, "the history accrues");
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

    /// A chain of groups one under the next is refused at the level past the limit (it took
    /// memory quadratic in its length), a file past the most entities at its first entity
    /// too many, and shares too large to add up still give each sibling its part.
    #[test]
    fn a_tree_too_deep_or_too_large_is_refused_and_shares_of_any_size_add_up() {
        let chain = |levels: usize| -> String {
            (0..levels)
                .map(|i| {
                    let parent = if i == 0 {
                        "root".to_owned()
                    } else {
                        format!("g{}", i - 1)
                    };
                    format!("g{i} {i} {parent} 1\n")
                })
                .collect()
        };
        let deepest = FairshareTree::parse(&chain(MAX_TREE_DEPTH), 0).expect("64 levels");
        assert_eq!(
            deepest.paths.iter().map(|p| p.len()).max(),
            Some(MAX_TREE_DEPTH)
        );
        assert_eq!(
            FairshareTree::parse(&chain(MAX_TREE_DEPTH + 1), 0)
                .unwrap_err()
                .to_string(),
            "line 65: `g64` would be 65 levels below the root, more than placesim's limit of 64"
        );
        let three = "a 1 root 1\nb 2 root 1\nc 3 a 1\n";
        assert!(FairshareTree::parse_within(three, 0, 3).is_ok());
        assert_eq!(
            FairshareTree::parse_within(&format!("{three}d 4 b 1\n"), 0, 3)
                .unwrap_err()
                .to_string(),
            "line 4: more than placesim's limit of 3 entities in a fairshare tree"
        );
        let max = u64::MAX;
        let tree = FairshareTree::parse(&format!("a 1 root {max}\nb 2 root {max}\n"), 0)
            .expect("the largest shares");
        let a = tree.by_name["a"];
        assert_eq!(tree.tree_percentage(a), 0.5);
    }
}
