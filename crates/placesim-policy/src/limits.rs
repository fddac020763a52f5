//! PBS run limits: server and queue `max_run` and `max_run_res.<resource>`, in PBS's entity
//! form (`[u:PBS_GENERIC=2], [u:alice=5], [g:...], [p:...], [o:PBS_ALL=10]`).
//!
//! A limit becomes room in the cluster state that each job under it counts against while it
//! runs ([`placesim_core::LimitDraw`]), and [`crate::placement::Limited`] holds a job back
//! while the room is short, with PBS's comment. This module turns the settings into those
//! limits: which ones each job counts against, their values, and their comments.

use placesim_core::{ConsumableIdx, Job, LimitDraw, LimitDraws, Request, RequestId, Workload};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Where a limit is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitScope {
    /// A server attribute: every job counts.
    Server,
    /// A queue attribute: the queue's jobs count. The queue's index, and its name for the
    /// comments.
    Queue(u32, String),
}

/// What a limit counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counted {
    /// Running jobs (`max_run`).
    Jobs,
    /// A consumable's requested amount over running jobs (`max_run_res.<resource>`), with the
    /// resource's name for the comments.
    Resource(ConsumableIdx, String),
}

/// Whose jobs an entry counts together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Entity {
    /// `u:`, each user's.
    User,
    /// `g:`, each group's.
    Group,
    /// `p:`, each project's.
    Project,
    /// `o:PBS_ALL`, everyone's together.
    Overall,
}

/// One `[x:name=value]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitEntry {
    /// Its entity kind.
    pub entity: Entity,
    /// The named entity, or `None` for `PBS_GENERIC` (every entity of the kind on its own)
    /// and for `o:PBS_ALL`.
    pub name: Option<String>,
    /// The limit: a count of jobs, or an amount in the resource's unit.
    pub value: u64,
}

/// One limit attribute: where it is set, what it counts, and its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitSetting {
    /// `max_queued` (`max_queued_res`): the server refuses a job at submission when the jobs
    /// queued or running would go over it; otherwise `max_run`: a job waits.
    pub at_submit: bool,
    /// Server or queue.
    pub scope: LimitScope,
    /// `max_run` or `max_run_res.<resource>`.
    pub counted: Counted,
    /// Its entries.
    pub entries: Vec<LimitEntry>,
}

/// Why a limit value does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct LimitError {
    /// Where in the value, from 1.
    pub column: usize,
    /// What was expected.
    pub message: String,
}

/// Reads PBS's entity form of a limit: entries `[u:NAME=N]`, `[g:NAME=N]`, `[p:NAME=N]` (NAME
/// an entity or `PBS_GENERIC`) and `[o:PBS_ALL=N]`, separated by commas. `amount` reads N.
pub fn parse_limit(
    text: &str,
    amount: &dyn Fn(&str) -> Option<u64>,
    amount_expected: &str,
) -> Result<Vec<LimitEntry>, LimitError> {
    let mut entries: Vec<LimitEntry> = Vec::new();
    let mut pos = 0;
    let at = |pos: usize, message: String| LimitError {
        column: text[..pos].chars().count() + 1,
        message,
    };
    loop {
        pos += text[pos..].len() - text[pos..].trim_start().len();
        if !text[pos..].starts_with('[') {
            return Err(at(
                pos,
                "expected `[u:NAME=N]`, `[g:NAME=N]`, `[p:NAME=N]` or `[o:PBS_ALL=N]`".into(),
            ));
        }
        let open = pos;
        let Some(len) = text[pos..].find(']') else {
            return Err(at(open, "this `[` is not closed by `]`".into()));
        };
        let inside = &text[pos + 1..pos + len];
        let entry = parse_entry(inside, amount, amount_expected).map_err(|m| at(open + 1, m))?;
        if entries
            .iter()
            .any(|e| e.entity == entry.entity && e.name == entry.name)
        {
            return Err(at(
                open,
                format!("`[{inside}]` repeats an entity given before"),
            ));
        }
        entries.push(entry);
        pos += len + 1;
        pos += text[pos..].len() - text[pos..].trim_start().len();
        if pos == text.len() {
            return Ok(entries);
        }
        if !text[pos..].starts_with(',') {
            return Err(at(pos, "expected `,` between entries".into()));
        }
        pos += 1;
    }
}

/// One entry's inside, between its brackets.
fn parse_entry(
    inside: &str,
    amount: &dyn Fn(&str) -> Option<u64>,
    amount_expected: &str,
) -> Result<LimitEntry, String> {
    let (kind, rest) = inside
        .split_once(':')
        .ok_or_else(|| format!("`[{inside}]`: expected `u:`, `g:`, `p:` or `o:` first"))?;
    let entity = match kind.trim() {
        "u" => Entity::User,
        "g" => Entity::Group,
        "p" => Entity::Project,
        "o" => Entity::Overall,
        other => {
            return Err(format!(
                "`{other}` is not an entity kind: expected u (user), g (group), p (project) \
                 or o (overall)"
            ));
        }
    };
    let (name, value) = rest
        .split_once('=')
        .ok_or_else(|| format!("`[{inside}]`: expected `=` and the limit"))?;
    let name = name.trim();
    let name = match (entity, name) {
        (Entity::Overall, "PBS_ALL") => None,
        (Entity::Overall, other) => {
            return Err(format!(
                "`o:{other}`: the overall entity is written `o:PBS_ALL`"
            ));
        }
        (_, "PBS_ALL") => {
            return Err(format!(
                "`{kind}:PBS_ALL`: PBS_ALL goes with `o:`; every {} on its own is \
                 `{kind}:PBS_GENERIC`",
                entity_word(entity)
            ));
        }
        (_, "PBS_GENERIC") => None,
        (_, "") => return Err(format!("`[{inside}]`: the entity has no name")),
        (_, name) => Some(name.to_owned()),
    };
    let value = value.trim();
    let value = amount(value)
        .ok_or_else(|| format!("`{value}` is not a limit: expected {amount_expected}"))?;
    Ok(LimitEntry {
        entity,
        name,
        value,
    })
}

fn entity_word(entity: Entity) -> &'static str {
    match entity {
        Entity::User => "user",
        Entity::Group => "group",
        Entity::Project => "project",
        Entity::Overall => "job",
    }
}

/// The run limits of a run, ready for the cluster state and the placement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunLimits {
    /// Per limit: its value ([`placesim_core::ClusterState::set_run_limits`]).
    pub values: Vec<u64>,
    /// Per limit: the comment of a job it holds back, in PBS's words.
    pub texts: Vec<Arc<str>>,
    /// Per limit: whether a job over it is not eligible (PBS's `accrue_type`: a user, group
    /// or project limit stops a job's `eligible_time`; an overall one does not).
    pub stop_eligibility: Vec<bool>,
}

/// A job's names as limits see them.
struct Names {
    user: Option<String>,
    group: Option<String>,
    project: Option<Arc<str>>,
}

impl Names {
    fn of(job: &Job) -> Names {
        Names {
            user: job.user().map(|u| u.to_string()),
            group: job.group().map(|g| g.to_string()),
            project: job.project().cloned(),
        }
    }

    fn get(&self, entity: Entity) -> Option<&str> {
        match entity {
            Entity::User => self.user.as_deref(),
            Entity::Group => self.group.as_deref(),
            Entity::Project => self.project.as_deref(),
            Entity::Overall => Some(""),
        }
    }
}

/// The order PBS checks limits in (`limfuncs`, openpbs `limits.cpp`): jobs before resources,
/// queue before server, and within each group, project, overall, user. The first one a job
/// is over gives its comment.
const CHECK_ORDER: [(bool, bool, Entity); 16] = {
    use Entity::*;
    [
        (false, true, Group),
        (false, true, Project),
        (false, true, Overall),
        (false, true, User),
        (false, false, Group),
        (false, false, Project),
        (false, false, Overall),
        (false, false, User),
        (true, true, Group),
        (true, true, Project),
        (true, true, Overall),
        (true, true, User),
        (true, false, Group),
        (true, false, Project),
        (true, false, Overall),
        (true, false, User),
    ]
};

/// The order the server checks `max_queued` in (openpbs `svr_jobfunc.c` `svr_chkque`, and
/// `check_entity_ct_limit_max`): counts before resources, the queue before the server, and
/// within each, overall, user, group, project.
const SUBMIT_ORDER: [(bool, bool, Entity); 16] = {
    use Entity::*;
    [
        (false, true, Overall),
        (false, true, User),
        (false, true, Group),
        (false, true, Project),
        (false, false, Overall),
        (false, false, User),
        (false, false, Group),
        (false, false, Project),
        (true, true, Overall),
        (true, true, User),
        (true, true, Group),
        (true, true, Project),
        (true, false, Overall),
        (true, false, User),
        (true, false, Group),
        (true, false, Project),
    ]
};

/// The limits of a run: what each job counts against, both kinds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    /// `max_run`, `max_run_res`: held while a job runs.
    pub run: RunLimits,
    /// `max_queued`, `max_queued_res`: held from a job's submission to its end, and checked
    /// by the server at submission (the texts are the server's replies to qsub).
    pub queued: RunLimits,
}

/// The workload with each job counting against the limits of `settings` it is under, and
/// those limits. A job counts against a setting of its queue (or the server's) for its user,
/// group and project: the entry naming it if there is one, else the generic entry, each a
/// limit of its own per entity; and against the overall entry. A job with no known user
/// (group, project) counts against no user (group, project) limit. A limit on a resource
/// the job does not request is not counted. Also gives, for each request added to the
/// workload, the request it was copied from ([`Workload::with_limit_draws`]).
pub fn apply_limits(
    workload: Workload,
    settings: &[LimitSetting],
) -> (Workload, Vec<RequestId>, Limits) {
    let mut limits = Limits::default();
    if settings.is_empty() {
        return (workload, Vec::new(), limits);
    }
    let mut ids: HashMap<(usize, Entity, String), u32> = HashMap::new();
    let mut texts = HashSet::new();
    // What a job counts against depends only on its request and its names: the jobs that
    // share them (a user's jobs of one shape, most of a trace) are looked up, not worked out
    // again with their names written out. The first job of each key meets its limits in the
    // same order as before, so the limits' ids are as they would be without it. Each distinct
    // pair of lists is a class, numbered as first met; a job is given its class. Looked up
    // once per job: foldhash rather than SipHash.
    type RequestAndNames = (RequestId, Option<u32>, Option<u32>, Option<Arc<str>>);
    let mut class_of_key: HashMap<RequestAndNames, Option<u32>, foldhash::fast::FixedState> =
        HashMap::default();
    let mut class_of_draws: HashMap<(Vec<LimitDraw>, Vec<LimitDraw>), u32> = HashMap::new();
    let mut classes: Vec<LimitDraws> = Vec::new();
    let class_of_job: Vec<Option<u32>> = workload
        .jobs()
        .iter()
        .map(|job| {
            let key = (job.request, job.user(), job.group(), job.project().cloned());
            if let Some(&class) = class_of_key.get(&key) {
                return class;
            }
            let request = &workload.requests()[job.request.index()];
            let names = Names::of(job);
            let mut known = Known {
                ids: &mut ids,
                texts: &mut texts,
            };
            let run = draws_of(
                settings,
                false,
                &names,
                request,
                &mut known,
                &mut limits.run,
            );
            let queued = draws_of(
                settings,
                true,
                &names,
                request,
                &mut known,
                &mut limits.queued,
            );
            let class = (!run.is_empty() || !queued.is_empty()).then(|| {
                let next = classes.len() as u32;
                *class_of_draws
                    .entry((run, queued))
                    .or_insert_with_key(|(run, queued)| {
                        let shared =
                            |d: &Vec<LimitDraw>| (!d.is_empty()).then(|| Arc::from(d.as_slice()));
                        classes.push(LimitDraws {
                            run: shared(run),
                            queued: shared(queued),
                        });
                        next
                    })
            });
            class_of_key.insert(key, class);
            class
        })
        .collect();
    let (workload, copied_from) = workload.with_limit_draws(&class_of_job, &classes);
    (workload, copied_from, limits)
}

/// The limits made so far: each one's id by setting, entity and name, and their texts, one
/// string for each distinct text (the generic limit of every user says the same), so that
/// a comment said again is the very same string.
struct Known<'a> {
    ids: &'a mut HashMap<(usize, Entity, String), u32>,
    texts: &'a mut HashSet<Arc<str>>,
}

/// What a job (its `names`, its `request`) counts against the limits of `settings` that
/// are checked at submission (`at_submit`) or while jobs wait, in the order they are
/// checked; limits seen for the first time join `limits`.
fn draws_of(
    settings: &[LimitSetting],
    at_submit: bool,
    names: &Names,
    request: &Request,
    known: &mut Known<'_>,
    limits: &mut RunLimits,
) -> Vec<LimitDraw> {
    let mut draws = Vec::new();
    let order = if at_submit { SUBMIT_ORDER } else { CHECK_ORDER };
    for (on_resource, on_queue, entity) in order {
        for (s, setting) in settings.iter().enumerate() {
            if setting.at_submit != at_submit {
                continue;
            }
            {
                let is_queue = matches!(setting.scope, LimitScope::Queue(..));
                let is_resource = matches!(setting.counted, Counted::Resource(..));
                if is_queue != on_queue || is_resource != on_resource {
                    continue;
                }
                if let LimitScope::Queue(q, _) = setting.scope
                    && request.queue != Some(q)
                {
                    continue;
                }
                let Some(name) = names.get(entity) else {
                    continue;
                };
                let own = setting
                    .entries
                    .iter()
                    .find(|e| e.entity == entity && e.name.as_deref() == Some(name));
                let entry = own.or_else(|| {
                    setting
                        .entries
                        .iter()
                        .find(|e| e.entity == entity && e.name.is_none())
                });
                let Some(entry) = entry else { continue };
                let amount = amount_counted(&setting.counted, request);
                if amount == 0 {
                    continue;
                }
                let texts = &mut *known.texts;
                let key = (s, entity, name.to_owned());
                let limit = *known.ids.entry(key).or_insert_with(|| {
                    limits.values.push(entry.value);
                    let text = if at_submit {
                        format!("qsub: {}", refusal(setting, entry, name))
                    } else {
                        comment(setting, entry, name)
                    };
                    let text = match texts.get(text.as_str()) {
                        Some(same) => same.clone(),
                        None => {
                            let text: Arc<str> = Arc::from(text);
                            texts.insert(text.clone());
                            text
                        }
                    };
                    limits.texts.push(text);
                    limits.stop_eligibility.push(entity != Entity::Overall);
                    (limits.values.len() - 1) as u32
                });
                draws.push(LimitDraw { limit, amount });
            }
        }
    }
    draws
}

/// The server's reply to qsub for a job `entry` of a `max_queued` `setting` refuses, for the
/// entity `name` (openpbs `pbs_messages.c`, `msg_et_*`).
fn refusal(setting: &LimitSetting, entry: &LimitEntry, name: &str) -> String {
    use Entity::*;
    let named = entry.name.is_some();
    let who = entity_word(entry.entity);
    match (&setting.scope, &setting.counted) {
        (LimitScope::Server, Counted::Jobs) => match (entry.entity, named) {
            (Overall, _) => "Maximum number of jobs already in complex".to_owned(),
            (_, false) => format!("would exceed complex's per-{who} limit"),
            (_, true) => format!("Maximum number of jobs for {who} {name} already in complex"),
        },
        (LimitScope::Queue(_, q), Counted::Jobs) => match (entry.entity, named) {
            (Overall, _) => format!("Maximum number of jobs already in queue {q}"),
            (_, false) => format!("would exceed queue {q}'s per-{who} limit"),
            (_, true) => format!("Maximum number of jobs for {who} {name} already in queue {q}"),
        },
        (LimitScope::Server, Counted::Resource(_, r)) => match (entry.entity, named) {
            (Overall, _) => format!("would exceed limit on resource {r} in complex"),
            (_, false) => format!("would exceed per-{who} limit on resource {r} in complex"),
            (_, true) => format!("would exceed {who} {name}'s limit on resource {r} in complex"),
        },
        (LimitScope::Queue(_, q), Counted::Resource(_, r)) => match (entry.entity, named) {
            (Overall, _) => format!("would exceed limit on resource {r} in queue {q}"),
            (_, false) => format!("would exceed per-{who} limit on resource {r} in queue {q}"),
            (_, true) => {
                format!("would exceed {who} {name}'s limit on resource {r} in queue {q}")
            }
        },
    }
}

/// What a job with `request` counts against a limit on `counted`.
fn amount_counted(counted: &Counted, request: &Request) -> u64 {
    match counted {
        Counted::Jobs => 1,
        Counted::Resource(c, _) => request.total(*c),
    }
}

/// PBS's comment for a job held back by `entry` of `setting` (openpbs `job_info.cpp`
/// `fctt`, arguments as `translate_fail_code` gives them), for the entity `name`.
fn comment(setting: &LimitSetting, entry: &LimitEntry, name: &str) -> String {
    use Entity::*;
    let named = entry.name.is_some();
    let who = entity_word(entry.entity);
    let text = match (&setting.scope, &setting.counted) {
        (LimitScope::Server, Counted::Jobs) => match (entry.entity, named) {
            (Overall, _) => "Server job limit has been reached.".to_owned(),
            (User, false) => "User has reached server running job limit.".to_owned(),
            (Group, false) => "Group has reached server running limit.".to_owned(),
            (Project, false) => "Project has reached server running limit.".to_owned(),
            (_, true) => format!("Server job limit reached for {who} {name}"),
        },
        (LimitScope::Queue(_, q), Counted::Jobs) => match (entry.entity, named) {
            (Overall, _) => format!("Queue {q} job limit has been reached."),
            (User, false) => format!("User has reached queue {q} running job limit."),
            (Group, false) => format!("Group has reached queue {q} running limit."),
            (Project, false) => format!("Project has reached queue {q}'s running limit."),
            (_, true) => format!("Queue {q} job limit reached for {who} {name}"),
        },
        (LimitScope::Server, Counted::Resource(_, r)) => match (entry.entity, named) {
            (Overall, _) => format!("would exceed overall limit on resource {r} in complex"),
            (_, false) => format!("Server per-{who} limit reached on resource {r}"),
            (_, true) => format!("would exceed {who} {name}'s limit on resource {r} in complex"),
        },
        (LimitScope::Queue(_, q), Counted::Resource(_, r)) => match (entry.entity, named) {
            (Overall, _) => format!("would exceed overall limit on resource {r} in queue {q}"),
            (_, false) => format!("Queue {q} per-{who} limit reached on resource {r}"),
            (_, true) => {
                format!("would exceed {who} {name}'s limit on resource {r} in queue {q}")
            }
        },
    };
    format!("Not Running: {text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(text: &str) -> Result<Vec<LimitEntry>, LimitError> {
        parse_limit(text, &|s| s.parse().ok(), "a whole number of jobs")
    }

    #[test]
    fn entries_read_in_pbs_form() {
        let e = jobs("[u:PBS_GENERIC=2], [u:alice=5],[g:staff=10] , [o:PBS_ALL=40]").unwrap();
        assert_eq!(
            e,
            vec![
                LimitEntry {
                    entity: Entity::User,
                    name: None,
                    value: 2
                },
                LimitEntry {
                    entity: Entity::User,
                    name: Some("alice".into()),
                    value: 5
                },
                LimitEntry {
                    entity: Entity::Group,
                    name: Some("staff".into()),
                    value: 10
                },
                LimitEntry {
                    entity: Entity::Overall,
                    name: None,
                    value: 40
                },
            ]
        );
    }

    #[test]
    fn bad_entries_say_where_and_what() {
        let cases = [
            (
                "u:PBS_GENERIC=2",
                "column 1: expected `[u:NAME=N]`, `[g:NAME=N]`, `[p:NAME=N]` or `[o:PBS_ALL=N]`",
            ),
            (
                "[u:PBS_GENERIC=2",
                "column 1: this `[` is not closed by `]`",
            ),
            (
                "[x:bob=2]",
                "column 2: `x` is not an entity kind: expected u (user), g (group), p (project) \
                 or o (overall)",
            ),
            (
                "[o:bob=2]",
                "column 2: `o:bob`: the overall entity is written `o:PBS_ALL`",
            ),
            (
                "[u:PBS_ALL=2]",
                "column 2: `u:PBS_ALL`: PBS_ALL goes with `o:`; every user on its own is \
                 `u:PBS_GENERIC`",
            ),
            (
                "[u:bob=two]",
                "column 2: `two` is not a limit: expected a whole number of jobs",
            ),
            ("[u:bob]", "column 2: `[u:bob]`: expected `=` and the limit"),
            (
                "[u:bob=1] [u:ann=2]",
                "column 11: expected `,` between entries",
            ),
            (
                "[u:bob=1],[u:bob=2]",
                "column 11: `[u:bob=2]` repeats an entity given before",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(jobs(text).unwrap_err().to_string(), want, "{text}");
        }
    }

    /// Jobs that count against the same limits share a request, and jobs of one request that
    /// count against others get a copy each, in the order their first jobs come: a user's
    /// generic limit is a limit per user, and a group's is shared by the users in it.
    #[test]
    fn jobs_counting_alike_share_a_request() {
        use placesim_core::{SimDuration, SimTime};
        // (user, group, request): jobs 0-7.
        let who = [
            (0, 7, 0),
            (1, 7, 0),
            (0, 7, 0),
            (2, 8, 0),
            (1, 7, 1),
            (3, 9, 0),
            (4, 7, 0),
            (5, 7, 0),
        ];
        let jobs: Vec<Job> = who
            .iter()
            .enumerate()
            .map(|(i, &(user, group, request))| {
                let mut job = Job::new(
                    i as u64 + 1,
                    SimTime(i as u64),
                    SimDuration(10),
                    SimDuration(10),
                    1,
                    RequestId(request),
                );
                job.set_user(Some(user));
                job.set_group(Some(group));
                job
            })
            .collect();
        let requests = vec![Request::processors(1, 3), Request::processors(1, 3)];
        let workload = Workload::new(jobs, requests).unwrap();
        let entry = |entity, name: Option<&str>, value| LimitEntry {
            entity,
            name: name.map(str::to_owned),
            value,
        };
        // Users 0 and 1 under the generic user limit; group 7's own limit; user 3 (group 9)
        // under none (a limit of its own name for another user).
        let settings = [LimitSetting {
            at_submit: false,
            scope: LimitScope::Server,
            counted: Counted::Jobs,
            entries: vec![
                entry(Entity::User, Some("0"), 2),
                entry(Entity::User, Some("1"), 2),
                entry(Entity::Group, Some("7"), 3),
            ],
        }];
        let (workload, copied_from, limits) = apply_limits(workload, &settings);
        let request_of: Vec<u32> = workload.jobs().iter().map(|j| j.request.0).collect();
        // Jobs 0 and 2 (user 0, group 7) share request 2; job 1 (user 1, group 7) gets 3; job 3
        // (user 2, group 8) counts against nothing and keeps request 0; job 4 (user 1, group 7,
        // request 1) gets 4; job 5 keeps request 0; jobs 6 and 7, of two users without a limit
        // of their own in group 7, count against the group's alone, and share request 5.
        assert_eq!(request_of, [2, 3, 2, 0, 4, 0, 5, 5]);
        assert_eq!(
            copied_from,
            [RequestId(0), RequestId(0), RequestId(1), RequestId(0)]
        );
        let draws = |r: usize| -> Vec<u32> {
            workload.requests()[r]
                .limit_draws
                .as_deref()
                .unwrap_or_default()
                .iter()
                .map(|d| d.limit)
                .collect()
        };
        // Limits by id as first met, each job's in the order PBS checks them (the group's
        // before the user's): group 7's, user 0's, user 1's.
        let texts: Vec<&str> = limits.run.texts.iter().map(|t| &**t).collect();
        assert_eq!(
            texts,
            [
                "Not Running: Server job limit reached for group 7",
                "Not Running: Server job limit reached for user 0",
                "Not Running: Server job limit reached for user 1",
            ]
        );
        assert_eq!(draws(2), [0, 1]);
        assert_eq!(draws(3), [0, 2]);
        assert_eq!(draws(4), [0, 2]);
        assert_eq!(draws(5), [0]);
    }
}
