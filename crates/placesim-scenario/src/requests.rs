//! Requests for trace jobs: SWF carries none, so a scenario gives them by rules.
//!
//! For each job, in order of precedence:
//! 1. its line in the requests file (`JOB_ID REQUEST`, by SWF field 1), if any;
//! 2. the first rule that matches its size, queue (field 15) and user (field 12), and that
//!    chooses it: a rule with `fraction = f` chooses a job when a hash of (seed, rule, job
//!    position) falls below f, so the choice does not depend on any other job;
//! 3. the size mapping: `select=N:ncpus=1`, or `select=ceil(N/P):ncpus=P place=scatter:excl`.

use crate::{Scenario, ScenarioError, WorkloadSource};
use placesim_core::{Job, Request, RequestId, Workload};
use placesim_workload::generate::stream_seed;
use placesim_workload::{SwfOptions, Trace};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// How a job of size N becomes a request when no rule or file gives one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeMapping {
    /// `select=N:ncpus=1`.
    Ncpus,
    /// `select=ceil(N/P):ncpus=P place=scatter:excl`.
    Nodes {
        /// P.
        procs_per_node: u32,
    },
}

/// Trace files already read (and decompressed), by the path a scenario names them with.
pub type TraceTexts = HashMap<std::path::PathBuf, std::sync::Arc<[u8]>>;

/// A trace read for a scenario, with every job's request and the count of jobs each rule took.
#[derive(Debug)]
pub struct ScenarioWorkload {
    /// The trace, whose workload now holds the scenario's requests.
    pub trace: Trace,
    /// Jobs whose request came from the requests file.
    pub from_file: u64,
    /// Jobs whose request came from their line's extended field (`request_field`).
    pub from_field: u64,
    /// Jobs each rule gave a request, by rule.
    pub by_rule: Vec<u64>,
    /// The text of each request in the workload's table, by request id.
    pub request_texts: Vec<String>,
}

/// Fills `{n}`, `{nodes}` (ceil(n / ppn)) and `{ppn}` in a request template.
pub(crate) fn instantiate(template: &str, n: u32, ppn: u32) -> String {
    let ppn = ppn.max(1);
    template
        .replace("{n}", &n.to_string())
        .replace("{nodes}", &n.div_ceil(ppn).to_string())
        .replace("{ppn}", &ppn.to_string())
}

/// Fills a rule's `{mem}`, `{mem_per_node}` and `{fieldN}` from the job's own values:
/// `field(N)` its field N, `memory_kib` its memory per processor. `None` when the job lacks
/// one the rule reads (an unknown value, `-1`, or no such field): the rule does not match it.
pub(crate) fn fill_job_values<'f>(
    text: &str,
    reads: &crate::JobPlaceholders,
    ppn: u32,
    field: impl Fn(usize) -> Option<&'f str>,
    memory_kib: Option<u64>,
) -> Option<String> {
    let mut text = text.to_owned();
    if reads.memory {
        let kib = memory_kib?;
        text = text.replace("{mem}", &format!("{kib}kb")).replace(
            "{mem_per_node}",
            &format!("{}kb", kib.saturating_mul(u64::from(ppn.max(1)))),
        );
    }
    for &n in &reads.fields {
        let value = field(n).filter(|v| !matches!(*v, "-1" | "-"))?;
        text = text.replace(&format!("{{field{n}}}"), value);
    }
    Some(text)
}

/// The size mapping's request for a job of `size` processors, with `memory_kib` KiB per
/// processor if given: each chunk asks for the memory of the processors it holds.
fn size_mapping_text(w: &crate::WorkloadSettings, size: u32, memory_kib: Option<u64>) -> String {
    let mem = |processors: u64| {
        memory_kib.map_or(String::new(), |kib| {
            format!(":mem={}kb", kib.saturating_mul(processors))
        })
    };
    match w.size_mapping {
        crate::SizeMapping::Ncpus => format!("select={size}:ncpus=1{}", mem(1)),
        crate::SizeMapping::Nodes { procs_per_node } => format!(
            "select={}:ncpus={procs_per_node}{} place=scatter:excl",
            size.div_ceil(procs_per_node.max(1)),
            mem(u64::from(procs_per_node))
        ),
    }
}

/// A uniform draw in [0, 1) for (seed, rule, job): SplitMix64 twice, so the draw is the same
/// whatever other jobs and rules there are.
pub(crate) fn draw(seed: u64, rule: usize, job: usize) -> f64 {
    let z = stream_seed(stream_seed(seed, rule as u64), job as u64);
    (z >> 11) as f64 / (1u64 << 53) as f64
}

impl Scenario {
    /// Reads the scenario's trace (sizes checked against the cluster's total ncpus) and gives
    /// every job its request.
    pub fn workload(&self) -> Result<ScenarioWorkload, ScenarioError> {
        self.workload_with(&TraceTexts::new())
    }

    /// As [`Scenario::workload`], but a trace whose path is in `texts` is parsed from the
    /// text held there rather than read and decompressed again: a sweep reads each trace once
    /// for all its runs, and each run then uses one core.
    pub fn workload_with(&self, texts: &TraceTexts) -> Result<ScenarioWorkload, ScenarioError> {
        let Some(w) = &self.workload else {
            return Err(ScenarioError::At {
                path: self.path.clone(),
                line: 1,
                column: 1,
                key: "workload".into(),
                message: "the scenario has no [workload] table: give workload.trace".into(),
            });
        };
        let defs = self.cluster.resources();
        let total = self
            .cluster
            .capacity_total(placesim_core::ConsumableIdx::NCPUS);
        let opts = SwfOptions {
            procs: Some(total.max(1)),
            skip_bad_lines: w.skip_bad_lines,
            keep_field: w.request_field,
            keep_extended: w.rules.iter().any(|r| !r.reads.fields.is_empty()),
        };
        let mut trace = match &w.source {
            WorkloadSource::Trace(path) => match texts.get(path) {
                Some(text) => w.format.read(&text[..], path, &opts, defs)?,
                None => w.format.load(path, &opts, defs)?,
            },
            WorkloadSource::Generator(spec) => {
                let (machine_procs, seed) = (total.max(1), self.run.seed);
                let generated = self
                    .pregenerated
                    .as_ref()
                    .and_then(|p| p.take(spec, machine_procs, seed));
                let generated = generated
                    .unwrap_or_else(|| {
                        placesim_workload::generate::generate_jobs(spec, machine_procs, seed)
                    })
                    .map_err(|source| ScenarioError::Generator {
                        path: self.path.clone(),
                        source,
                    })?;
                // As the reader reads the SWF text of the records: a generated workload
                // replays exactly as the file `placesim gen` writes.
                let name = format!("{}.generated.swf", self.name);
                placesim_workload::swf::convert::read_written(
                    generated.header.clone(),
                    generated.records(),
                    Path::new(&name),
                    &opts,
                    defs,
                )?
            }
        };
        let explicit = match &w.requests_file {
            Some(path) => read_requests_file(path, defs)?,
            None => HashMap::new(),
        };
        let ppn = w.procs_per_node;
        let mut requests: Vec<Request> = Vec::new();
        let mut request_texts: Vec<String> = Vec::new();
        let mut interned: HashMap<(String, Option<usize>, Option<usize>), RequestId> =
            HashMap::new();
        // The trace's workload is made again below from its jobs with their requests.
        let mut jobs: Vec<Job> = std::mem::take(&mut trace.workload).into_jobs();
        if w.arrival_scale != 1.0 {
            // A monotone map of the submit times: the order (and ties) stay as they were.
            let first = jobs.first().map_or(0, |j| j.submit.as_secs());
            for job in &mut jobs {
                let since = (job.submit.as_secs() - first) as f64 * w.arrival_scale;
                job.submit = placesim_core::SimTime(first.saturating_add(since.round() as u64));
            }
        }
        let mut by_rule = vec![0u64; w.rules.len()];
        let mut from_file = 0u64;
        let mut from_field = 0u64;
        // A rule's or the size mapping's text depends only on the job's size (and the size
        // mapping's on its memory), so each (rule, size, memory, queue, class) is formatted
        // and parsed once; texts still share ids across rules.
        type Shape = (
            Option<usize>,
            u32,
            Option<u64>,
            Option<usize>,
            Option<usize>,
        );
        // Whether any vnode has memory: a job asking for it from the trace needs some.
        let cluster_has_memory = self
            .cluster
            .capacity_total(placesim_core::ConsumableIdx::MEM)
            > 0;
        // Looked up for every job: foldhash rather than SipHash.
        let mut by_shape: HashMap<Shape, RequestId, foldhash::fast::FixedState> =
            HashMap::default();
        for (index, job) in jobs.iter_mut().enumerate() {
            // The PBS queue is part of what a job asks: it decides the vnodes it may use. So
            // is the Moab class, whose DEFAULT.NODESET gives the node-set fields the job
            // leaves unset. Its SWF queue gives both, unless a name says otherwise.
            let mut queue = self.pbs_queue_of(job.queue());
            let mut class = self.moab_class_of(job.queue());
            let mut name_queue = |named: crate::NamedQueue| {
                queue = named.pbs;
                class = named.class;
            };
            // The job's own request field, unless it says none.
            let own: Option<&str> = trace
                .kept_field
                .get(&job.source_id)
                .map(|f| &**f)
                .filter(|f| !matches!(*f, "-1" | "-"));
            let from_own = own.is_some() && !explicit.contains_key(&job.source_id);
            // The memory a size-mapped job asks for, part of its shape.
            let mut shape_memory = None;
            // Whether a rule made the job's text from its own values (not shared by shape).
            let mut job_own_text = false;
            let (rule, text) = match explicit.get(&job.source_id) {
                Some(line) => {
                    from_file += 1;
                    job.set_project(line.project.clone());
                    job.set_priority(line.priority);
                    if let Some((name, line_no, column)) = &line.queue {
                        let named =
                            self.named_queue(name)
                                .ok_or_else(|| ScenarioError::RequestsFile {
                                    path: w.requests_file.clone().unwrap_or_default(),
                                    line: *line_no,
                                    message: format!(
                                        "column {column}: {}",
                                        crate::build::unknown_queue(name)
                                    ),
                                })?;
                        name_queue(named);
                    }
                    (None, Some(line.request.clone()))
                }
                // Next, the job's own field of an extended SWF line.
                None if from_own => {
                    from_field += 1;
                    (None, own.map(str::to_owned))
                }
                None => {
                    // A rule that reads a value the job lacks does not match it.
                    let own_text = |rule: &crate::Rule| {
                        fill_job_values(
                            &instantiate(&rule.template, job.size, ppn),
                            &rule.reads,
                            ppn,
                            |n| trace.extended_field(job.source_id, n),
                            job.requested_memory_kib.map(std::num::NonZeroU64::get),
                        )
                    };
                    let mut own_rule_text = None;
                    let rule = w.rules.iter().enumerate().position(|(i, rule)| {
                        if !rule.filter.matches(job)
                            || draw(self.run.seed, i, index) >= rule.fraction
                        {
                            return false;
                        }
                        if !rule.reads.any() {
                            return true;
                        }
                        own_rule_text = own_text(rule);
                        own_rule_text.is_some()
                    });
                    if let Some(r) = rule {
                        by_rule[r] += 1;
                        job.set_priority(w.rules[r].job_priority);
                        job.set_project(w.rules[r].project.clone());
                        if let Some(named) = w.rules[r].queue {
                            name_queue(named);
                        }
                    }
                    // The size mapping adds the memory the job asked for (KiB per processor).
                    let memory = rule
                        .is_none()
                        .then_some(w.memory_from_trace)
                        .flatten()
                        .zip(job.requested_memory_kib);
                    if let Some((at, kib)) = memory
                        && !cluster_has_memory
                    {
                        return Err(ScenarioError::At {
                            path: self.path.clone(),
                            line: at.line,
                            column: at.column,
                            key: "workload.memory".into(),
                            message: format!(
                                "job {} of {} asks for {kib} KiB of memory per processor (SWF \
                                 field 10), and no vnode has mem: give the vnodes mem, or set \
                                 memory = \"none\"",
                                job.source_id,
                                trace.path.display()
                            ),
                        });
                    }
                    let memory = memory.map(|(_, kib)| kib.get());
                    shape_memory = memory;
                    // A rule reading the job's own values gives the job its own text.
                    if own_rule_text.is_some() {
                        job_own_text = true;
                        (rule, own_rule_text)
                    } else {
                        if let Some(&id) = by_shape.get(&(rule, job.size, memory, queue, class)) {
                            job.request = id;
                            continue;
                        }
                        (rule, None)
                    }
                }
            };
            let line = rule.map_or(1, |r| w.rules[r].line);
            let text = text.unwrap_or_else(|| match rule {
                Some(r) => instantiate(&w.rules[r].template, job.size, ppn),
                None => size_mapping_text(w, job.size, shape_memory),
            });
            // A request of the job's own is not shared by its shape.
            let is_explicit = explicit.contains_key(&job.source_id) || from_own || job_own_text;
            let key = (text, queue, class);
            let id = match interned.get(&key) {
                Some(&id) => id,
                None => {
                    let text = &key.0;
                    // PBS's default_chunk: the queue's, then the server's.
                    let queue_default: &[placesim_request::Term] =
                        queue.map_or(&[], |q| &self.pbs.queues[q].default_chunk);
                    let defaults = [queue_default, &self.pbs.default_chunk];
                    // resources_default.place: the queue's, then the server's.
                    let default_place = queue
                        .and_then(|q| self.pbs.queues[q].resources_default.place.as_ref())
                        .or(self.pbs.resources_default.place.as_ref());
                    let site = placesim_request::SiteDefaults {
                        default_chunks: &defaults,
                        default_place,
                        vnode_sharing: self.pbs.vnode_sharing,
                    };
                    let mut request = placesim_request::parse_and_lower_on(text, defs, &site)
                        .map_err(|e| {
                            if from_own {
                                ScenarioError::At {
                                    path: self.path.clone(),
                                    line: 1,
                                    column: 1,
                                    key: "workload.request_field".into(),
                                    message: format!(
                                        "field {} of job {} in {}: request `{text}`: {e}",
                                        w.request_field.unwrap_or(0),
                                        job.source_id,
                                        trace.path.display()
                                    ),
                                }
                            } else {
                                ScenarioError::At {
                                    path: self.path.clone(),
                                    line,
                                    column: 1,
                                    key: "workload.rule.request".into(),
                                    message: format!(
                                        "request `{text}` for job {}: {e}",
                                        job.source_id
                                    ),
                                }
                            }
                        })?;
                    request.queue = queue.map(|q| q as u32);
                    request.class = class.map(|c| c as u32);
                    // NODEACCESSPOLICY SINGLEJOB: no other job on the job's vnodes.
                    if self.moab.single_job && request.sharing == placesim_core::Sharing::Shared {
                        request.sharing = placesim_core::Sharing::Excl;
                    }
                    if let Some(default) =
                        class.and_then(|c| self.moab.classes[c].default_nodeset.as_ref())
                    {
                        // The job's own node-set fields over its class's default, field by
                        // field.
                        request.nodeset = Some(match request.nodeset.take() {
                            Some(own) => own.over(default),
                            None => default.clone(),
                        });
                    }
                    requests.push(request);
                    request_texts.push(text.clone());
                    let id = RequestId::from_index(requests.len() - 1);
                    interned.insert(key, id);
                    id
                }
            };
            if !is_explicit {
                by_shape.insert((rule, job.size, shape_memory, queue, class), id);
            }
            job.request = id;
        }
        // resources_default.walltime (the queue's, then the server's): the estimate of a job
        // that asked for no walltime, in place of its runtime.
        for job in jobs.iter_mut().filter(|j| !j.estimate_requested) {
            let queue = requests[job.request.index()].queue;
            let walltime = queue
                .and_then(|q| self.pbs.queues.get(q as usize))
                .and_then(|q| q.resources_default.walltime_s)
                .or(self.pbs.resources_default.walltime_s);
            if let Some(w) = walltime {
                job.estimate = placesim_core::SimDuration(w);
            }
        }
        let jobs = self.with_running_at_start(jobs, &mut requests, &mut request_texts, defs)?;
        trace.workload = Workload::new(jobs, requests).map_err(|e| ScenarioError::At {
            path: self.path.clone(),
            line: 1,
            column: 1,
            key: "workload".into(),
            message: e.to_string(),
        })?;
        Ok(ScenarioWorkload {
            trace,
            from_file,
            from_field,
            by_rule,
            request_texts,
        })
    }
}

impl Scenario {
    /// `jobs` with the scenario's jobs running at t = 0 before them, in `[[running]]` order
    /// (each submitted at 0, its request a chunk per vnode of its `exec_vnode`, in its queue
    /// or class), so that they are jobs `0..n` of the workload. A job number the trace
    /// already has is refused at the entry's line.
    fn with_running_at_start(
        &self,
        jobs: Vec<Job>,
        requests: &mut Vec<Request>,
        request_texts: &mut Vec<String>,
        defs: &placesim_core::ResourceDefs,
    ) -> Result<Vec<Job>, ScenarioError> {
        if self.running.is_empty() {
            return Ok(jobs);
        }
        let trace_ids: std::collections::HashSet<u64> = jobs.iter().map(|j| j.source_id).collect();
        let mut out = Vec::with_capacity(self.running.len() + jobs.len());
        for r in &self.running {
            if trace_ids.contains(&r.id) {
                return Err(ScenarioError::At {
                    path: self.path.clone(),
                    line: r.line,
                    column: 1,
                    key: "running.id".into(),
                    message: format!("job {} is also a trace job's number", r.id),
                });
            }
            let chunks: Vec<placesim_core::Chunk> = r
                .vnodes
                .iter()
                .map(|(_, amounts)| placesim_core::Chunk::new(1, amounts.clone()))
                .collect();
            let mut request = Request::from_chunks(chunks);
            // Held as the vnodes' sharing holds a job that says nothing: exclusively under
            // default_excl or force_excl (its exec_vnode already names a whole host's).
            if self.pbs.vnode_sharing.effective(None).is_exclusive() {
                request.sharing = placesim_core::Sharing::Excl;
            }
            request.queue = r.queue.and_then(|q| q.pbs).map(|q| q as u32);
            request.class = r.queue.and_then(|q| q.class).map(|c| c as u32);
            let ncpus = request.total(placesim_core::ConsumableIdx::NCPUS);
            requests.push(request);
            request_texts.push(select_text(&r.vnodes, defs));
            let mut job = Job::new(
                r.id,
                placesim_core::SimTime::ZERO,
                placesim_core::SimDuration(r.end_s),
                placesim_core::SimDuration(r.estimated_end_s),
                u32::try_from(ncpus).unwrap_or(u32::MAX),
                RequestId::from_index(requests.len() - 1),
            );
            job.set_user(r.user);
            job.set_group(r.group);
            job.set_project(r.project.clone());
            out.push(job);
        }
        out.extend(jobs);
        Ok(out)
    }
}

/// A `select=` of one chunk per vnode with its amounts (sizes in kb), as jobs.parquet's
/// `request` shows a job running at the start.
fn select_text(
    vnodes: &[(placesim_core::VnodeId, Vec<u64>)],
    defs: &placesim_core::ResourceDefs,
) -> String {
    let chunks: Vec<String> = vnodes
        .iter()
        .map(|(_, amounts)| {
            let mut chunk = String::from("1");
            for (c, &amount) in amounts.iter().enumerate() {
                if amount == 0 {
                    continue;
                }
                let def = defs.def(defs.consumables()[c]);
                match def.kind {
                    placesim_core::ResourceKind::Size => {
                        chunk += &format!(":{}={amount}kb", def.name);
                    }
                    // Floats are held in thousandths.
                    placesim_core::ResourceKind::Float => {
                        chunk += &format!(":{}={}", def.name, amount as f64 / 1000.0);
                    }
                    _ => chunk += &format!(":{}={amount}", def.name),
                }
            }
            chunk
        })
        .collect();
    format!("select={}", chunks.join("+"))
}

/// Reads a requests file (see [`parse_requests_file`]).
fn read_requests_file(
    path: &Path,
    defs: &placesim_core::ResourceDefs,
) -> Result<HashMap<u64, RequestLine>, ScenarioError> {
    parse_requests_file(&placesim_workload::read_text(path)?, path, defs)
}

/// One job's line of a requests file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestLine {
    /// The request, as written.
    pub request: String,
    /// `-P PROJECT`: the job's project.
    pub project: Option<Arc<str>>,
    /// `-p PRIORITY`: PBS's `job_priority`, -1024 to 1023.
    pub priority: Option<i64>,
    /// `-q QUEUE`: the PBS queue or Moab class, by name, with the line and column of the
    /// name (checked against the scenario's queues when the workload is built).
    pub queue: Option<(String, usize, usize)>,
}

/// The `JOB_ID [-P PROJECT] [-p PRIORITY] [-q QUEUE] REQUEST` lines of a requests file's
/// `text`, with qsub's options for the project, the priority and the queue (or Moab class),
/// in any order; `#` starts a comment. Every request is
/// checked now; errors name `path`, the line and the column.
pub fn parse_requests_file(
    text: &str,
    path: &Path,
    defs: &placesim_core::ResourceDefs,
) -> Result<HashMap<u64, RequestLine>, ScenarioError> {
    let mut out = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let err = |message: String| ScenarioError::RequestsFile {
            path: path.to_owned(),
            line: i + 1,
            message,
        };
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (id, request) = line
            .split_once(char::is_whitespace)
            .ok_or_else(|| err("expected a job id, a space, and a request".into()))?;
        let id: u64 = id
            .parse()
            .map_err(|_| err(format!("expected a job id (SWF field 1), found `{id}`")))?;
        let mut request = request.trim();
        let (mut project, mut priority, mut queue) = (None, None, None);
        while let Some(option) = ["-P", "-p", "-q"]
            .into_iter()
            .find(|o| request.starts_with(&format!("{o} ")))
        {
            let column = line.len() - request.len() + 1;
            let rest = request[2..].trim_start();
            let (value, after) = rest.split_once(char::is_whitespace).ok_or_else(|| {
                err(format!(
                    "column {column}: `{option}` needs a value and then the request"
                ))
            })?;
            if option == "-P" {
                project = Some(Arc::from(value));
            } else if option == "-q" {
                let at = line.len() - rest.len() + 1;
                queue = Some((value.to_owned(), i + 1, at));
            } else {
                let p: i64 = value
                    .parse()
                    .ok()
                    .filter(|p| (-1024..=1023).contains(p))
                    .ok_or_else(|| {
                        err(format!(
                            "column {column}: `-p {value}`: expected a priority from -1024 to 1023"
                        ))
                    })?;
                priority = Some(p);
            }
            request = after.trim_start();
        }
        placesim_request::parse_request(request, defs).map_err(|e| {
            let RequestErrorAt { column, message } = RequestErrorAt::of(line, request, e);
            err(format!("column {column}: {message}"))
        })?;
        let entry = RequestLine {
            request: request.to_owned(),
            project,
            priority,
            queue,
        };
        if out.insert(id, entry).is_some() {
            return Err(err(format!("job {id} is given twice")));
        }
    }
    Ok(out)
}

/// A request error with its column counted from the start of the file's line.
struct RequestErrorAt {
    column: usize,
    message: String,
}

impl RequestErrorAt {
    fn of(line: &str, request: &str, e: placesim_request::RequestError) -> Self {
        let offset = line.len() - request.len();
        RequestErrorAt {
            column: line[..offset].chars().count() + e.column,
            message: e.kind.to_string(),
        }
    }
}
