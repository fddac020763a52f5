//! A PBS site's cluster and settings, read from its files and written back as a scenario
//! (`[[resource]]`, `[[vnode]]`, `[pbs]`, `[[pbs.queue]]`), each line with a comment naming
//! the file and line it came from. What placesim does not model is named in the report with
//! the reason, never dropped unsaid.

use crate::files::{self, Attr, Object, Qmgr, ResourceLine, SchedOption, at};
use crate::workload::Replay;
use crate::{ImportError, PbsInputs};
use placesim_core::{ResourceDefs, ResourceKind};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A value written to the scenario, and where it came from (`qmgr_ps.out:12`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Setting {
    pub key: String,
    pub value: toml::Value,
    pub origin: String,
}

/// A resource definition, with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SiteResource {
    pub name: String,
    pub kind: ResourceKind,
    pub consumable: bool,
    pub origin: String,
}

/// One vnode as the node list gives it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SiteVnode {
    pub name: String,
    pub host: String,
    pub ncpus: u64,
    pub mem: Option<String>,
    pub ngpus: u64,
    pub queue: Option<String>,
    pub sort_priority: Option<i64>,
    /// Relative speed (a Maui resource trace's), if the node list gives one.
    pub speed: Option<f64>,
    /// Custom resources, by name.
    pub resources: Vec<(String, toml::Value)>,
    /// The scheduler partition it is in (`pbs-default` is none).
    pub partition: Option<String>,
    /// Its `sharing`, if the node list gives it, with where.
    pub sharing: Option<(String, String)>,
    /// `down` or `offline` (as `state` says) when the snapshot was taken.
    pub out_of_service: Option<String>,
    pub origin: String,
}

/// What the vnodes' `sharing` attributes are, together ([`Site::vnode_sharing`]).
pub(crate) enum SharingSeen<'s> {
    /// `default_shared` on every vnode.
    Default,
    /// One other value on every vnode, with where the first vnode gives it.
    Uniform { sharing: &'s str, from: &'s str },
    /// Two vnodes of different sharing: (name, sharing) each.
    Mixed([(&'s str, &'s str); 2]),
}

/// A vnode's `sharing`: as the node list gives it, else PBS's default.
fn sharing_of(v: &SiteVnode) -> &str {
    v.sharing
        .as_ref()
        .map_or("default_shared", |(s, _)| s.as_str())
}

/// A PBS scheduler other than the default (multi-schedulers), and the partition it serves.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SiteSched {
    pub name: String,
    pub partition: Option<String>,
    /// Its own `[[pbs.sched]]` keys.
    pub settings: Vec<Setting>,
    pub origin: String,
}

/// An execution queue.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SiteQueue {
    pub name: String,
    pub settings: Vec<Setting>,
    pub origin: String,
}

/// Which scheduler a site runs, and so which placement and settings its scenario gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheduler {
    /// PBS: `placement = "pbs"`, `[pbs]`, queues as `[[pbs.queue]]`.
    Pbs,
    /// Torque with Moab: `placement = "moab"`, `[moab]`, queues as `[[moab.class]]`.
    Moab,
}

/// Everything read about a site but its workload.
#[derive(Debug, Clone)]
pub struct Site {
    pub(crate) scheduler: Scheduler,
    pub(crate) sources: Vec<PathBuf>,
    pub(crate) resources: Vec<SiteResource>,
    pub(crate) vnodes: Vec<SiteVnode>,
    pub(crate) pbs: Vec<Setting>,
    /// Limits (`max_run` and the like) whose entity names become numbers when written.
    pub(crate) limits: Vec<Setting>,
    /// Execution queues (PBS) or classes (Moab).
    pub(crate) queues: Vec<SiteQueue>,
    /// `moab.cfg`'s scheduler parameters (`[moab]`), priority weights (`[moab.priority]`)
    /// and fairshare parameters (`[moab.fairshare]`).
    pub(crate) moab: Vec<Setting>,
    pub(crate) moab_priority: Vec<Setting>,
    pub(crate) moab_fairshare: Vec<Setting>,
    /// `moab.cfg`'s per-credential settings (`USERCFG[alice] MAXJOB=4`).
    pub(crate) moab_credentials: Vec<crate::torque::CredentialSetting>,
    /// `moab.cfg`'s standing reservations (`SRCFG[name]`).
    pub(crate) moab_reservations: Vec<crate::srcfg::Srcfg>,
    /// PBS's schedulers other than the default, each serving a partition.
    pub(crate) scheds: Vec<SiteSched>,
    /// (setting, origin, reason).
    pub(crate) not_modelled: Vec<(String, String, String)>,
    /// Node attributes not used, with the vnodes that had each.
    pub(crate) node_attrs_unused: BTreeMap<String, usize>,
    /// The scheduler's `resources:` line: the chunk resources it matches.
    pub(crate) sched_resources: Option<Vec<String>>,
    pub(crate) resource_group: Option<(PathBuf, String)>,
    /// `pbs_rstat -f`'s reservations, with the file.
    pub(crate) reservations: Option<(PathBuf, Vec<crate::files::Object>)>,
    pub(crate) fairshare_entity: String,
    /// The site's resources as the request language checks them.
    pub(crate) defs: ResourceDefs,
}

/// PBS's own resources that a node list can show, with their types and whether vnodes
/// consume them (OpenPBS `resc_def_all`); placesim's five built-ins are not listed.
const PBS_BUILTINS: [(&str, ResourceKind, bool); 11] = [
    ("arch", ResourceKind::String, false),
    ("aoe", ResourceKind::StringArray, false),
    ("eoe", ResourceKind::String, false),
    ("software", ResourceKind::String, false),
    ("accelerator", ResourceKind::Boolean, false),
    ("accelerator_model", ResourceKind::String, false),
    ("vmem", ResourceKind::Size, true),
    ("naccelerators", ResourceKind::Long, true),
    ("accelerator_memory", ResourceKind::Size, true),
    ("mpiprocs", ResourceKind::Long, false),
    ("ompthreads", ResourceKind::Long, false),
];

/// Whether a server or queue attribute is a limit: `max_run`, `max_queued` and their
/// per-resource forms (`max_run_res.ncpus`).
fn is_limit(key: &str) -> bool {
    matches!(key, "max_run" | "max_queued")
        || key.starts_with("max_run_res.")
        || key.starts_with("max_queued_res.")
}

/// One `key = value` line of the scenario, with where it came from.
pub(crate) fn write_setting(out: &mut String, key: &str, value: &toml::Value, from: &str) {
    let _ = writeln!(out, "{key} = {value}    # {from}");
}

/// Limits, their user and group names as the replay's numbers: `max_run` and `max_queued`
/// a line each, the per-resource ones (`max_run_res.ncpus`, `max_run_res.mem`) gathered
/// into one table per attribute, as TOML allows a key once.
fn write_limits<'s>(out: &mut String, limits: impl Iterator<Item = &'s Setting>, replay: &Replay) {
    let numbered = |s: &Setting| replay.numbered_limit(s.value.as_str().unwrap_or(""));
    let mut by_resource: Vec<(&str, Vec<&Setting>)> = Vec::new();
    for s in limits {
        match s.key.split_once('.') {
            Some((table, _)) => match by_resource.iter_mut().find(|(t, _)| *t == table) {
                Some((_, v)) => v.push(s),
                None => by_resource.push((table, vec![s])),
            },
            None => write_setting(out, &s.key, &toml::Value::String(numbered(s)), &s.origin),
        }
    }
    for (table, settings) in by_resource {
        let origins: Vec<&str> = settings.iter().map(|s| s.origin.as_str()).collect();
        let _ = writeln!(out, "# {}", origins.join(", "));
        let entries: Vec<String> = settings
            .iter()
            .map(|s| {
                let res = s.key.split_once('.').map_or("", |(_, r)| r);
                format!("{res} = {}", toml::Value::String(numbered(s)))
            })
            .collect();
        let _ = writeln!(out, "{table} = {{ {} }}", entries.join(", "));
    }
}

/// Sets `key` in `settings`: a later setting of a key replaces the earlier, as in PBS.
pub(crate) fn set(settings: &mut Vec<Setting>, key: &str, value: toml::Value, origin: String) {
    settings.retain(|s| s.key != key);
    settings.push(Setting {
        key: key.to_owned(),
        value,
        origin,
    });
}

/// Whether `key` is a `default_chunk.<resource>` placesim applies (`nchunk` is not: every
/// replayed request gives its chunks' count).
fn is_default_chunk(key: &str) -> bool {
    key.strip_prefix("default_chunk.")
        .is_some_and(|r| r != "nchunk")
}

/// Adds `default_chunk.<resource> = value` to the `default_chunk` table of `settings`,
/// which PBS applies to the chunks of jobs' requests (the logs record the select the user
/// gave, not the scheduler's `schedselect`).
fn add_default_chunk(settings: &mut Vec<Setting>, key: &str, value: &str, origin: String) {
    let resource = key.trim_start_matches("default_chunk.");
    let entry = toml::Value::String(value.to_owned());
    match settings.iter_mut().find(|s| s.key == "default_chunk") {
        Some(s) => {
            if let toml::Value::Table(t) = &mut s.value {
                t.insert(resource.to_owned(), entry);
            }
            if !s.origin.contains(&origin) {
                s.origin = format!("{}, {origin}", s.origin);
            }
        }
        None => settings.push(Setting {
            key: "default_chunk".to_owned(),
            value: toml::Value::Table(std::iter::once((resource.to_owned(), entry)).collect()),
            origin,
        }),
    }
}

/// PBS's type for one of its own resources, and whether vnodes consume it.
fn pbs_builtin(name: &str) -> Option<(ResourceKind, bool)> {
    PBS_BUILTINS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, kind, consumable)| (*kind, *consumable))
}

/// A file's name, for origins.
pub(crate) fn short(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

pub(crate) fn origin(path: &Path, line: usize) -> String {
    if line == 0 {
        short(path)
    } else {
        format!("{}:{line}", short(path))
    }
}

fn kind_of(path: &Path, r: &ResourceLine) -> Result<ResourceKind, ImportError> {
    ResourceKind::from_name(&r.kind).ok_or_else(|| {
        at(
            path,
            r.line,
            format!(
                "resource `{}`: unknown type `{}`: expected boolean, long, string, size, float or string_array",
                r.name, r.kind
            ),
        )
    })
}

/// PBS's spellings of true and false.
pub(crate) fn boolean(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "t" | "y" | "yes" | "1" => Some(true),
        "false" | "f" | "n" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// A qmgr attribute's boolean value, or the error naming it on `object` (`server`, `sched`,
/// `sched sc1`) at its line.
fn attr_bool(path: &Path, a: &Attr, object: &str) -> Result<bool, ImportError> {
    let value = a.values.first().map_or("", String::as_str);
    boolean(value).ok_or_else(|| {
        at(
            path,
            a.line,
            format!("{object} {} = `{value}`: expected True or False", a.key),
        )
    })
}

/// A sched_config option's boolean value, or the error naming it at its line.
fn option_bool(path: &Path, o: &SchedOption) -> Result<bool, ImportError> {
    boolean(&o.value).ok_or_else(|| {
        at(
            path,
            o.line,
            format!("option `{}`: `{}`: expected True or False", o.name, o.value),
        )
    })
}

/// Scheduler attributes that change no decision: its name and host, logs and switches.
const SCHED_HOUSEKEEPING: [&str; 9] = [
    "sched_host",
    "sched_port",
    "sched_priv",
    "sched_log",
    "pbs_version",
    "state",
    "scheduling",
    "sched_cycle_length",
    "log_events",
];

impl Site {
    /// A site with nothing read yet, scheduled by `scheduler`.
    pub(crate) fn empty(scheduler: Scheduler) -> Site {
        Site {
            scheduler,
            sources: Vec::new(),
            resources: Vec::new(),
            vnodes: Vec::new(),
            pbs: Vec::new(),
            limits: Vec::new(),
            queues: Vec::new(),
            moab: Vec::new(),
            moab_priority: Vec::new(),
            moab_fairshare: Vec::new(),
            moab_credentials: Vec::new(),
            moab_reservations: Vec::new(),
            scheds: Vec::new(),
            not_modelled: Vec::new(),
            node_attrs_unused: BTreeMap::new(),
            sched_resources: None,
            resource_group: None,
            reservations: None,
            fairshare_entity: "euser".to_owned(),
            defs: ResourceDefs::default(),
        }
    }

    /// Reads the site's cluster and settings.
    pub fn read(inputs: &PbsInputs) -> Result<Site, ImportError> {
        let text = |p: &Path| placesim_workload::read_text(p).map_err(ImportError::from);
        let mut site = Site::empty(Scheduler::Pbs);
        // Resources first: the vnodes' values are read by their types.
        if let Some(path) = &inputs.resources {
            let t = text(path)?;
            let lines = if t
                .lines()
                .any(|l| l.trim_start().starts_with("create resource"))
            {
                files::parse_qmgr(path, &t)?.resources
            } else {
                files::parse_resourcedef(path, &t)?
            };
            site.define_lines(path, &lines)?;
            site.sources.push(path.clone());
        }
        let qmgr = match &inputs.server {
            Some(path) => {
                site.sources.push(path.clone());
                Some((path.clone(), files::parse_qmgr(path, &text(path)?)?))
            }
            None => None,
        };
        // The vnodes.
        let nodes_text = text(&inputs.nodes)?;
        let nodes = if nodes_text
            .lines()
            .any(|l| l.trim_start().starts_with("create node") || l.starts_with("set node"))
        {
            files::parse_qmgr(&inputs.nodes, &nodes_text)?.nodes
        } else {
            files::parse_pbsnodes(&inputs.nodes, &nodes_text)?
        };
        site.sources.push(inputs.nodes.clone());
        for node in &nodes {
            site.read_vnode(&inputs.nodes, node)?;
        }
        if site.vnodes.is_empty() {
            return Err(at(
                &inputs.nodes,
                1,
                "no vnode found: expected pbsnodes -av output",
            ));
        }
        if let Some((path, q)) = &qmgr {
            site.read_server(path, q)?;
        }
        if let Some(path) = &inputs.sched {
            let t = text(path)?;
            let scheds = if t.lines().any(|l| l.starts_with("Sched ")) {
                files::parse_list_sched(path, &t)?
            } else {
                files::parse_qmgr(path, &t)?.scheds
            };
            site.read_scheds(path, &scheds)?;
            site.sources.push(path.clone());
        }
        if let Some(path) = &inputs.sched_config {
            let options = files::parse_sched_config(path, &text(path)?)?;
            site.read_sched_config(path, &options)?;
            site.sources.push(path.clone());
        }
        // Each multi-scheduler's own sched_config, where a snapshot keeps it: in
        // `sched_priv_<name>/` beside `sched_priv/`.
        for k in 0..site.scheds.len() {
            let own = inputs.sched_config.as_ref().and_then(|p| {
                let dir = p.parent()?.parent()?;
                Some(
                    dir.join(format!("sched_priv_{}", site.scheds[k].name))
                        .join("sched_config"),
                )
            });
            match own.filter(|p| p.is_file()) {
                Some(path) => {
                    let options = files::parse_sched_config(&path, &text(&path)?)?;
                    site.read_multisched_config(k, &path, &options)?;
                    site.sources.push(path);
                }
                None => {
                    let s = &site.scheds[k];
                    let (name, from) = (s.name.clone(), s.origin.clone());
                    site.not_modelled(
                        format!("sched {name}: its sched_config"),
                        from,
                        "not found (sched_priv_<name>/sched_config beside sched_priv/): PBS's defaults, strict_ordering False and no sort keys",
                    );
                }
            }
        }
        // Fairshare's settings do nothing without fair_share (and placesim refuses them
        // then, so that a scenario says nothing it does not do): reported, not written.
        if !site
            .pbs
            .iter()
            .any(|s| s.key == "fair_share" && s.value.as_bool() == Some(true))
        {
            let (idle, kept): (Vec<Setting>, Vec<Setting>) = std::mem::take(&mut site.pbs)
                .into_iter()
                .partition(|s| s.key.starts_with("fairshare_") || s.key == "unknown_shares");
            site.pbs = kept;
            for s in idle {
                site.not_modelled(
                    format!("{} = {}", s.key, s.value),
                    s.origin,
                    "without effect: fair_share is off",
                );
            }
        }
        if let Some(path) = &inputs.resource_group {
            site.resource_group = Some((path.clone(), text(path)?));
            site.sources.push(path.clone());
        }
        if let Some(path) = &inputs.reservations {
            let objects = crate::files::parse_rstat(path, &text(path)?)?;
            site.reservations = Some((path.clone(), objects));
            site.sources.push(path.clone());
        }
        Ok(site)
    }

    /// Defines the resources `resourcedef` or `qmgr` lines give.
    fn define_lines(&mut self, path: &Path, lines: &[ResourceLine]) -> Result<(), ImportError> {
        for r in lines {
            let kind = kind_of(path, r)?;
            // `n` (consumable on every vnode) or `f` (on the first): a vnode amount.
            let consumable = kind.can_be_consumable() && r.flags.contains(['n', 'f']);
            self.define(
                &r.name,
                kind,
                consumable,
                origin(path, r.line),
                path,
                r.line,
            )?;
        }
        Ok(())
    }

    pub(crate) fn define(
        &mut self,
        name: &str,
        kind: ResourceKind,
        consumable: bool,
        from: String,
        path: &Path,
        line: usize,
    ) -> Result<(), ImportError> {
        if let Some(id) = self.defs.lookup(name) {
            let def = self.defs.def(id);
            if def.kind == kind {
                return Ok(());
            }
            return Err(at(
                path,
                line,
                format!(
                    "resource `{name}` is of type {kind} here and of type {} before",
                    def.kind
                ),
            ));
        }
        self.add_definition(name, kind, consumable, from)
            .map_err(|e| at(path, line, format!("resource `{name}`: {e}")))
    }

    /// Adds a definition the site did not have, to the resources checked against and to
    /// those the scenario lists: the one place both grow.
    fn add_definition(
        &mut self,
        name: &str,
        kind: ResourceKind,
        consumable: bool,
        origin: String,
    ) -> Result<(), placesim_core::ResourceError> {
        self.defs.define(name, kind, consumable)?;
        self.resources.push(SiteResource {
            name: name.to_owned(),
            kind,
            consumable,
            origin,
        });
        Ok(())
    }

    /// Defines `name` with PBS's type if it is one of PBS's own resources the site's files
    /// did not show (`mpiprocs`, `ompthreads` in a select).
    pub(crate) fn define_builtin(&mut self, name: &str) {
        if self.defs.lookup(name).is_some() {
            return;
        }
        if let Some((kind, consumable)) = pbs_builtin(name) {
            let origin = "PBS built-in, named by jobs' selects".to_owned();
            let _ = self.add_definition(name, kind, consumable, origin);
        }
    }

    /// Defines `name` as a boolean: a property an old-style node spec names that the site
    /// does not define.
    pub(crate) fn define_property(&mut self, name: &str) {
        let origin = "a property old-style node specs name; no vnode has it".to_owned();
        let _ = self.add_definition(name, ResourceKind::Boolean, false, origin);
    }

    pub(crate) fn not_modelled(&mut self, setting: String, from: String, reason: &str) {
        self.not_modelled.push((setting, from, reason.to_owned()));
    }

    pub(crate) fn read_vnode(&mut self, path: &Path, node: &Object) -> Result<(), ImportError> {
        let bad = |a: &Attr, expected: &str| {
            at(
                path,
                a.line.max(node.line),
                format!(
                    "vnode `{}`: `{}` = `{}`: expected {expected}",
                    node.name,
                    a.key,
                    a.values.first().map_or("", String::as_str)
                ),
            )
        };
        let mut v = SiteVnode {
            name: node.name.clone(),
            host: node.name.clone(),
            ncpus: 0,
            mem: None,
            ngpus: 0,
            queue: None,
            sort_priority: None,
            speed: None,
            resources: Vec::new(),
            partition: None,
            sharing: None,
            out_of_service: None,
            origin: origin(path, node.line),
        };
        let mut mom = None;
        for a in &node.attrs {
            let value = a.values.first().map_or("", String::as_str);
            let resource = a.key.strip_prefix("resources_available.");
            match (a.key.as_str(), resource) {
                (_, Some("ncpus")) => v.ncpus = value.parse().map_err(|_| bad(a, "a count"))?,
                (_, Some("ngpus")) => v.ngpus = value.parse().map_err(|_| bad(a, "a count"))?,
                (_, Some("mem")) => {
                    placesim_request::parse_size(value)
                        .ok_or_else(|| bad(a, "a size such as 384000000kb"))?;
                    v.mem = Some(value.to_owned());
                }
                (_, Some("host")) => v.host = value.to_owned(),
                (_, Some("vnode")) => {}
                (_, Some(res)) => {
                    let kind = match self.defs.lookup(res) {
                        Some(id) => self.defs.def(id).kind,
                        None => {
                            let (kind, consumable, from) = match pbs_builtin(res) {
                                Some((kind, consumable)) => {
                                    (kind, consumable, "PBS built-in".to_owned())
                                }
                                // Neither defined nor PBS's own: a boolean if it reads as
                                // one, else a string.
                                None => (
                                    if boolean(value).is_some()
                                        && !value.chars().all(|c| c.is_ascii_digit())
                                    {
                                        ResourceKind::Boolean
                                    } else {
                                        ResourceKind::String
                                    },
                                    false,
                                    format!("not defined; type read from {}", origin(path, a.line)),
                                ),
                            };
                            self.define(res, kind, consumable, from, path, a.line)?;
                            kind
                        }
                    };
                    let toml_value = match kind {
                        ResourceKind::String => toml::Value::String(value.to_owned()),
                        ResourceKind::StringArray => toml::Value::Array(
                            value
                                .split(',')
                                .map(|s| toml::Value::String(s.trim().to_owned()))
                                .collect(),
                        ),
                        ResourceKind::Boolean => toml::Value::Boolean(
                            boolean(value).ok_or_else(|| bad(a, "True or False"))?,
                        ),
                        ResourceKind::Long => {
                            toml::Value::Integer(value.parse().map_err(|_| bad(a, "an integer"))?)
                        }
                        ResourceKind::Float => {
                            toml::Value::Float(value.parse().map_err(|_| bad(a, "a number"))?)
                        }
                        ResourceKind::Size => {
                            placesim_request::parse_size(value)
                                .ok_or_else(|| bad(a, "a size such as 384000000kb"))?;
                            toml::Value::String(value.to_owned())
                        }
                    };
                    v.resources.push((res.to_owned(), toml_value));
                }
                ("Mom", _) => mom = Some(value.to_owned()),
                ("queue", _) => v.queue = Some(value.to_owned()),
                ("speed", _) => {
                    let speed = value
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite() && *x > 0.0);
                    v.speed = Some(speed.ok_or_else(|| bad(a, "a number above 0"))?);
                }
                ("priority", _) => {
                    v.sort_priority = Some(value.parse().map_err(|_| bad(a, "an integer"))?);
                }
                ("sharing", _) => {
                    if placesim_request::VnodeSharing::from_name(value).is_none() {
                        return Err(bad(
                            a,
                            &format!("one of {}", placesim_request::VnodeSharing::names()),
                        ));
                    }
                    v.sharing = Some((value.to_owned(), origin(path, a.line)));
                }
                ("partition", _) => {
                    v.partition = (value != "pbs-default").then(|| value.to_owned());
                }
                ("state", _) => {
                    let states: Vec<&str> = value.split(',').map(str::trim).collect();
                    if let Some(s) = states
                        .iter()
                        .find(|s| matches!(**s, "down" | "offline" | "state-unknown" | "unknown"))
                    {
                        v.out_of_service = Some((*s).to_owned());
                    }
                }
                (key, _) => {
                    *self
                        .node_attrs_unused
                        .entry(key.split('.').next().unwrap_or(key).to_owned())
                        .or_insert(0) += 1;
                }
            }
        }
        // A vnode without resources_available.host: its Mom is its host.
        if node.get("resources_available.host").is_none() {
            if let Some(m) = mom {
                v.host = m;
            }
        }
        self.vnodes.push(v);
        Ok(())
    }

    fn read_server(&mut self, path: &Path, q: &Qmgr) -> Result<(), ImportError> {
        self.define_lines(path, &q.resources)?;
        for a in &q.server.attrs {
            self.pbs_attr(path, a, "server")?;
        }
        for queue in &q.queues {
            let from = origin(path, queue.line);
            match queue
                .value("queue_type")
                .map(str::to_ascii_lowercase)
                .as_deref()
            {
                Some("route" | "r") => {
                    self.not_modelled(
                        format!("queue {} (routing)", queue.name),
                        from,
                        "a routing queue runs no job: each job is replayed in the queue it ran in",
                    );
                    continue;
                }
                Some("execution" | "e") | None => {}
                Some(other) => {
                    let line = queue.get("queue_type").map_or(queue.line, |a| a.line);
                    return Err(at(
                        path,
                        line,
                        format!(
                            "queue `{}`: queue_type `{other}`: expected Execution or Route",
                            queue.name
                        ),
                    ));
                }
            }
            let mut settings = Vec::new();
            for a in &queue.attrs {
                let value = a.values.first().map_or("", String::as_str);
                let here = origin(path, a.line);
                let setting = |key: &str, value: toml::Value| Setting {
                    key: key.to_owned(),
                    value,
                    origin: here.clone(),
                };
                match a.key.as_str() {
                    "queue_type" => {}
                    "priority" => settings.push(setting(
                        "priority",
                        toml::Value::Integer(value.parse().map_err(|_| {
                            at(
                                path,
                                a.line,
                                format!(
                                    "queue `{}`: priority `{value}`: expected an integer",
                                    queue.name
                                ),
                            )
                        })?),
                    )),
                    "backfill_depth" => settings.push(setting(
                        "backfill_depth",
                        toml::Value::Integer(value.parse().map_err(|_| {
                            at(
                                path,
                                a.line,
                                format!(
                                    "queue `{}`: backfill_depth `{value}`: expected a count",
                                    queue.name
                                ),
                            )
                        })?),
                    )),
                    "node_group_key" => {
                        settings.push(setting("node_group_key", key_list(&a.values)))
                    }
                    "max_run" => {
                        settings.push(setting("max_run", toml::Value::String(value.to_owned())))
                    }
                    key if key.starts_with("max_run_res.") => {
                        settings.push(setting(key, toml::Value::String(value.to_owned())))
                    }
                    "enabled" | "started" => {}
                    "partition" if value == "pbs-default" => {}
                    "partition" => {
                        settings.push(setting("partition", toml::Value::String(value.to_owned())))
                    }
                    key if is_default_chunk(key) => {
                        add_default_chunk(&mut settings, key, value, here.clone())
                    }
                    key => self.not_modelled(
                        format!("queue {} {key} = {value}", queue.name),
                        here.clone(),
                        not_modelled_reason(key),
                    ),
                }
            }
            self.queues.push(SiteQueue {
                name: queue.name.clone(),
                settings,
                origin: from,
            });
        }
        Ok(())
    }

    /// A server or scheduler attribute.
    fn pbs_attr(&mut self, path: &Path, a: &Attr, object: &str) -> Result<(), ImportError> {
        let value = a.values.first().map_or("", String::as_str);
        let here = origin(path, a.line);
        let count_of = |v: &str| {
            v.parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(|| {
                at(
                    path,
                    a.line,
                    format!("{object} {} = `{v}`: expected a count", a.key),
                )
            })
        };
        let push = |site: &mut Site, key: &str, v: toml::Value| {
            set(&mut site.pbs, key, v, here.clone());
        };
        match a.key.as_str() {
            "node_group_enable" | "do_not_span_psets" | "only_explicit_psets" => {
                push(
                    self,
                    &a.key,
                    toml::Value::Boolean(attr_bool(path, a, object)?),
                );
            }
            "node_group_key" => push(self, "node_group_key", key_list(&a.values)),
            "backfill_depth" => push(
                self,
                "backfill_depth",
                toml::Value::Integer(count_of(value)?),
            ),
            "scheduler_iteration" => push(
                self,
                "scheduler_iteration",
                toml::Value::Integer(count_of(value)?),
            ),
            "job_sort_formula" => push(
                self,
                "job_sort_formula",
                toml::Value::String(value.to_owned()),
            ),
            "job_sort_formula_threshold" => {
                let f: f64 = value.parse().map_err(|_| {
                    at(
                        path,
                        a.line,
                        format!(
                            "{object} job_sort_formula_threshold = `{value}`: expected a number"
                        ),
                    )
                })?;
                push(self, "job_sort_formula_threshold", toml::Value::Float(f));
            }
            key if is_limit(key) => {
                set(
                    &mut self.limits,
                    key,
                    toml::Value::String(value.to_owned()),
                    here,
                );
            }
            "opt_backfill_fuzzy" if value.eq_ignore_ascii_case("off") => {
                push(
                    self,
                    "opt_backfill_fuzzy",
                    toml::Value::String("off".to_owned()),
                );
            }
            key if SCHED_HOUSEKEEPING.contains(&key) => {}
            key if object == "server" && is_default_chunk(key) => {
                add_default_chunk(&mut self.pbs, key, value, here);
            }
            key => self.not_modelled(
                format!("{object} {key} = {value}"),
                here,
                not_modelled_reason(key),
            ),
        }
        Ok(())
    }

    fn read_scheds(&mut self, path: &Path, scheds: &[Object]) -> Result<(), ImportError> {
        for s in scheds {
            if s.name != "default" {
                self.read_multisched(path, s)?;
                continue;
            }
            for a in &s.attrs {
                self.pbs_attr(path, a, "sched")?;
            }
        }
        Ok(())
    }

    /// A scheduler other than the default (`qmgr list sched`'s `Sched sc1`): its partition
    /// and its own placement-set flags; it becomes a `[[pbs.sched]]`.
    fn read_multisched(&mut self, path: &Path, s: &Object) -> Result<(), ImportError> {
        let mut sched = SiteSched {
            name: s.name.clone(),
            partition: None,
            settings: Vec::new(),
            origin: origin(path, s.line),
        };
        for a in &s.attrs {
            let value = a.values.first().map_or("", String::as_str);
            let here = origin(path, a.line);
            match a.key.as_str() {
                "partition" => sched.partition = Some(value.to_owned()),
                "do_not_span_psets" | "only_explicit_psets" => {
                    let flag = attr_bool(path, a, &format!("sched {}", s.name))?;
                    set(&mut sched.settings, &a.key, toml::Value::Boolean(flag), here);
                }
                "scheduling" if boolean(value) == Some(false) => self.not_modelled(
                    format!("sched {} scheduling = {value}", s.name),
                    here,
                    "a scheduler that is off starts no job; it is written as running, as it would be once turned on",
                ),
                key if SCHED_HOUSEKEEPING.contains(&key) => {}
                key => self.not_modelled(
                    format!("sched {} {key} = {value}", s.name),
                    here,
                    not_modelled_reason(key),
                ),
            }
        }
        if sched.partition.is_none() {
            self.not_modelled(
                format!("sched {}", s.name),
                sched.origin,
                "a scheduler with no partition schedules nothing",
            );
            return Ok(());
        }
        self.scheds.push(sched);
        Ok(())
    }

    /// A multi-scheduler's own `sched_config` (`sched_priv_<name>/sched_config`): its
    /// `strict_ordering`, `job_sort_key` and `node_sort_key`; its other options are the
    /// default scheduler's in a scenario, and are reported.
    fn read_multisched_config(
        &mut self,
        k: usize,
        path: &Path,
        options: &[SchedOption],
    ) -> Result<(), ImportError> {
        let name = self.scheds[k].name.clone();
        let chosen = self.chosen_sched_options(path, options);
        let mut keys: [(&str, Vec<toml::Value>, Vec<String>); 2] = [
            ("job_sort_key", Vec::new(), Vec::new()),
            ("node_sort_key", Vec::new(), Vec::new()),
        ];
        for o in chosen {
            // Named with its directory: the default scheduler's file has the same name.
            let here = format!("sched_priv_{name}/{}", origin(path, o.line));
            match o.name.as_str() {
                "strict_ordering" => {
                    let flag = option_bool(path, o)?;
                    set(
                        &mut self.scheds[k].settings,
                        "strict_ordering",
                        toml::Value::Boolean(flag),
                        here,
                    );
                }
                "job_sort_key" | "node_sort_key" => {
                    if let Some((_, values, origins)) =
                        keys.iter_mut().find(|(key, ..)| *key == o.name)
                    {
                        values.push(toml::Value::String(o.value.clone()));
                        origins.push(here);
                    }
                }
                other => self.not_modelled(
                    format!("sched {name} sched_config {other}: {}", o.value),
                    here,
                    "a multi-scheduler's own option other than strict_ordering and the sort keys: the server's and default scheduler's apply",
                ),
            }
        }
        for (key, values, origins) in keys {
            if !values.is_empty() {
                set(
                    &mut self.scheds[k].settings,
                    key,
                    toml::Value::Array(values),
                    origins.join(", "),
                );
            }
        }
        Ok(())
    }

    fn read_sched_config(
        &mut self,
        path: &Path,
        options: &[SchedOption],
    ) -> Result<(), ImportError> {
        let chosen = self.chosen_sched_options(path, options);
        self.read_chosen_sched_options(path, chosen)
    }

    /// The options of a `sched_config` that apply: an option written for prime and non-prime
    /// time separately gives its prime-time value, with a note when the two differ (placesim
    /// has no prime time); one for neither is noted.
    fn chosen_sched_options<'o>(
        &mut self,
        path: &Path,
        options: &'o [SchedOption],
    ) -> Vec<&'o SchedOption> {
        let mut chosen: Vec<&SchedOption> = Vec::new();
        for o in options {
            if o.when == "none" {
                self.not_modelled(
                    format!("sched_config {}: {} none", o.name, o.value),
                    origin(path, o.line),
                    "an option set for neither prime nor non-prime time applies at no time",
                );
                continue;
            }
            // Options that take a list repeat their name, one value per line.
            if matches!(o.name.as_str(), "job_sort_key" | "node_sort_key") {
                if o.when != "non_prime" {
                    chosen.push(o);
                }
                continue;
            }
            match chosen.iter().position(|c| c.name == o.name) {
                Some(i) if o.when == "non_prime" && chosen[i].when != "non_prime" => {
                    if chosen[i].value != o.value {
                        self.not_modelled(
                            format!("sched_config {}: {} non_prime", o.name, o.value),
                            origin(path, o.line),
                            "prime time is not modelled: the prime-time (or ALL) value is used",
                        );
                    }
                }
                Some(i) => chosen[i] = o,
                None => chosen.push(o),
            }
        }
        chosen
    }

    fn read_chosen_sched_options(
        &mut self,
        path: &Path,
        chosen: Vec<&SchedOption>,
    ) -> Result<(), ImportError> {
        let mut job_sort_key = Vec::new();
        let mut node_sort_key = Vec::new();
        for o in chosen {
            let here = origin(path, o.line);
            let value = match o.name.as_str() {
                "strict_ordering" | "by_queue" | "round_robin" | "fair_share" => {
                    Some(toml::Value::Boolean(option_bool(path, o)?))
                }
                "job_sort_key" => {
                    job_sort_key.push((o.value.clone(), here.clone()));
                    None
                }
                "node_sort_key" => {
                    node_sort_key.push((o.value.clone(), here.clone()));
                    None
                }
                "fairshare_usage_res" | "fairshare_entity" | "fairshare_decay_time" => {
                    if o.name == "fairshare_entity" {
                        self.fairshare_entity.clone_from(&o.value);
                    }
                    Some(toml::Value::String(o.value.clone()))
                }
                "fairshare_decay_factor" => {
                    Some(toml::Value::Float(o.value.parse().map_err(|_| {
                        at(
                            path,
                            o.line,
                            format!(
                                "option `fairshare_decay_factor`: `{}`: expected a number",
                                o.value
                            ),
                        )
                    })?))
                }
                "unknown_shares" => Some(toml::Value::Integer(o.value.parse().map_err(|_| {
                    at(
                        path,
                        o.line,
                        format!(
                            "option `unknown_shares`: `{}`: expected an integer",
                            o.value
                        ),
                    )
                })?)),
                "resources" => {
                    self.sched_resources = Some(
                        o.value
                            .split(',')
                            .map(|s| s.trim().to_owned())
                            .filter(|s| !s.is_empty())
                            .collect(),
                    );
                    None
                }
                "backfill_prime"
                | "prime_exempt_anytime_queues"
                | "smp_cluster_dist"
                | "preemptive_sched"
                | "primetime_prefix"
                | "nonprimetime_prefix"
                | "dedicated_prefix"
                | "log_filter"
                | "provision_policy"
                | "load_balancing"
                | "help_starving_jobs"
                | "max_starve"
                | "preempt_queue_prio"
                | "preempt_prio"
                | "preempt_order"
                | "preempt_sort"
                | "server_dyn_res"
                | "mom_resources"
                | "sort_queues"
                | "peer_queue"
                | "half_life"
                | "fairshare_enforce_no_shares"
                | "resource_unset_infinite"
                | "dont_preempt_starving"
                | "enforce_no_shares" => {
                    self.not_modelled(
                        format!("sched_config {}: {}", o.name, o.value),
                        here.clone(),
                        not_modelled_reason(&o.name),
                    );
                    None
                }
                other => {
                    self.not_modelled(
                        format!("sched_config {other}: {}", o.value),
                        here.clone(),
                        "an option placesim does not know",
                    );
                    None
                }
            };
            if let Some(v) = value {
                set(&mut self.pbs, &o.name, v, here);
            }
        }
        for (key, list) in [
            ("job_sort_key", job_sort_key),
            ("node_sort_key", node_sort_key),
        ] {
            if list.is_empty() {
                continue;
            }
            let origins: Vec<String> = list.iter().map(|(_, o)| o.clone()).collect();
            let values = list
                .into_iter()
                .map(|(v, _)| toml::Value::String(v))
                .collect();
            set(
                &mut self.pbs,
                key,
                toml::Value::Array(values),
                origins.join(", "),
            );
        }
        Ok(())
    }

    /// Whether the scheduler matches `resource` in a chunk: PBS always matches ncpus, mem,
    /// host and vnode, and the others only when sched_config's `resources:` line names them;
    /// without a sched_config, placesim matches every resource.
    pub(crate) fn matches_in_chunks(&self, resource: &str) -> bool {
        matches!(resource, "ncpus" | "mem" | "host" | "vnode")
            || self
                .sched_resources
                .as_ref()
                .is_none_or(|list| list.iter().any(|r| r == resource))
    }

    /// `scenario.toml`.
    pub(crate) fn scenario_toml(&self, replay: &Replay) -> String {
        let mut out = String::new();
        let command = match self.scheduler {
            Scheduler::Pbs => "pbs",
            Scheduler::Moab => "torque-moab",
        };
        let _ = writeln!(out, "# Written by `placesim import {command}` from:");
        for s in &self.sources {
            let _ = writeln!(out, "#   {}", s.display());
        }
        if let Some(first) = replay.accounting_files.first() {
            let _ = writeln!(
                out,
                "#   {} accounting file(s), {} to {}",
                replay.accounting_files.len(),
                first.display(),
                replay.accounting_files.last().unwrap_or(first).display()
            );
        }
        let _ = writeln!(
            out,
            "# Simulated time 0 is the epoch second {} (the first time the logs record).",
            replay.t0
        );
        let _ = writeln!(
            out,
            "# Users and groups are numbered in ids.tsv; what really happened is in recorded.tsv."
        );
        let _ = writeln!(
            out,
            "# import-report.md lists every count and every setting not modelled.\n"
        );
        let _ = writeln!(out, "name = \"site\"\n\n[run]");
        match self.scheduler {
            Scheduler::Pbs => {
                let _ = writeln!(
                    out,
                    "placement = \"pbs\"    # PBS's own placement: pools, placement sets, node_sort_key"
                );
                let _ = writeln!(
                    out,
                    "walltime = \"kill\"    # PBS kills a job at its walltime\n"
                );
            }
            Scheduler::Moab => {
                let _ = writeln!(
                    out,
                    "placement = \"moab\"    # Moab's node sets, first fit inside the chosen set"
                );
                let _ = writeln!(
                    out,
                    "walltime = \"kill\"    # Torque kills a job at its walltime\n"
                );
            }
        }
        for r in &self.resources {
            let _ = writeln!(out, "[[resource]]    # {}", r.origin);
            let _ = writeln!(out, "name = {}", toml::Value::String(r.name.clone()));
            let _ = writeln!(out, "type = \"{}\"", r.kind);
            if r.consumable {
                let _ = writeln!(out, "consumable = true");
            }
            out.push('\n');
        }
        for v in &self.vnodes {
            let _ = writeln!(out, "[[vnode]]    # {}", v.origin);
            let _ = writeln!(out, "name = {}", toml::Value::String(v.name.clone()));
            let _ = writeln!(out, "host = {}", toml::Value::String(v.host.clone()));
            let _ = writeln!(out, "ncpus = {}", v.ncpus);
            if let Some(m) = &v.mem {
                let _ = writeln!(out, "mem = {}", toml::Value::String(m.clone()));
            }
            if v.ngpus > 0 {
                let _ = writeln!(out, "ngpus = {}", v.ngpus);
            }
            if let Some(q) = &v.queue {
                let _ = writeln!(out, "queue = {}", toml::Value::String(q.clone()));
            }
            if let Some(p) = v
                .partition
                .as_deref()
                .and_then(|p| self.written_partition(replay, p))
            {
                let _ = writeln!(out, "partition = {}", toml::Value::String(p.to_owned()));
            }
            if let Some(p) = v.sort_priority {
                let _ = writeln!(out, "sort_priority = {p}");
            }
            if let Some(speed) = v.speed {
                let _ = writeln!(out, "speed = {}", toml::Value::Float(speed));
            }
            if !v.resources.is_empty() {
                let table: toml::map::Map<String, toml::Value> =
                    v.resources.iter().cloned().collect();
                let _ = writeln!(out, "resources = {}", toml::Value::Table(table));
            }
            out.push('\n');
        }
        if self.scheduler == Scheduler::Moab {
            self.write_moab(&mut out, replay);
            replay.write_workload_tables(&mut out);
            return out;
        }
        out.push_str("[pbs]\n");
        for s in &self.pbs {
            write_setting(&mut out, &s.key, &s.value, &s.origin);
        }
        if let SharingSeen::Uniform { sharing, from } = self.vnode_sharing() {
            write_setting(
                &mut out,
                "vnode_sharing",
                &toml::Value::String(sharing.to_owned()),
                &format!("every vnode's sharing ({from}, ...)"),
            );
        }
        if let Some((path, _)) = &self.resource_group {
            write_setting(
                &mut out,
                "resource_group",
                &toml::Value::String("resource_group".to_owned()),
                &format!("{} (users and groups as numbers)", short(path)),
            );
        }
        write_limits(&mut out, self.limits.iter(), replay);
        out.push('\n');
        if self.partitions_left_out(replay).is_none() {
            for sched in &self.scheds {
                let _ = writeln!(out, "[[pbs.sched]]    # {}", sched.origin);
                let _ = writeln!(out, "name = {}", toml::Value::String(sched.name.clone()));
                if let Some(p) = &sched.partition {
                    let _ = writeln!(out, "partition = {}", toml::Value::String(p.clone()));
                }
                for s in &sched.settings {
                    write_setting(&mut out, &s.key, &s.value, &s.origin);
                }
                out.push('\n');
            }
        }
        for q in self.written_queues(replay) {
            let _ = writeln!(out, "[[pbs.queue]]    # {}", q.origin);
            let _ = writeln!(out, "name = {}", toml::Value::String(q.name.clone()));
            let (limits, others): (Vec<&Setting>, Vec<&Setting>) =
                q.settings.iter().partition(|s| is_limit(&s.key));
            for s in others {
                let unwritten_partition = s.key == "partition"
                    && s.value
                        .as_str()
                        .and_then(|p| self.written_partition(replay, p))
                        .is_none();
                if !unwritten_partition {
                    write_setting(&mut out, &s.key, &s.value, &s.origin);
                }
            }
            write_limits(&mut out, limits.into_iter(), replay);
            out.push('\n');
        }
        replay.write_workload_tables(&mut out);
        out
    }

    /// Why the site's scheduler partitions are not written, when it has some and they are
    /// not: a scenario does not yet take them beside reservations or fairshare (every vnode
    /// and queue is then the default scheduler's).
    pub(crate) fn partitions_left_out(&self, replay: &Replay) -> Option<&'static str> {
        if self.scheds.is_empty() {
            None
        } else if replay.has_reservations() {
            Some(
                "scheduler partitions are not modelled beside reservations yet: every vnode and queue is written as the default scheduler's",
            )
        } else if self
            .pbs
            .iter()
            .any(|s| s.key == "fair_share" && s.value.as_bool() == Some(true))
        {
            Some(
                "scheduler partitions are not modelled beside fairshare yet (PBS keeps a tree per scheduler): every vnode and queue is written as the default scheduler's",
            )
        } else {
            None
        }
    }

    /// The partition written for a vnode or queue in `partition`: none when partitions are
    /// left out or no scheduler serves it (the report names it).
    fn written_partition<'p>(&self, replay: &Replay, partition: &'p str) -> Option<&'p str> {
        let served = self
            .scheds
            .iter()
            .any(|s| s.partition.as_deref() == Some(partition));
        (served && self.partitions_left_out(replay).is_none()).then_some(partition)
    }

    /// The vnodes' `sharing`: the default everywhere, one other value on every vnode (a
    /// vnode that does not give it has PBS's default, `default_shared`), or different values
    /// (a scenario takes one value for every vnode).
    pub(crate) fn vnode_sharing(&self) -> SharingSeen<'_> {
        let Some(first) = self.vnodes.first() else {
            return SharingSeen::Default;
        };
        if let Some(other) = self
            .vnodes
            .iter()
            .find(|v| sharing_of(v) != sharing_of(first))
        {
            return SharingSeen::Mixed([
                (&first.name, sharing_of(first)),
                (&other.name, sharing_of(other)),
            ]);
        }
        match &first.sharing {
            Some((sharing, from)) if sharing != "default_shared" => {
                SharingSeen::Uniform { sharing, from }
            }
            _ => SharingSeen::Default,
        }
    }

    /// The partitions vnodes or queues name that no scheduler serves.
    pub(crate) fn unserved_partitions(&self) -> Vec<&str> {
        let mut unserved: Vec<&str> = Vec::new();
        let named = self
            .vnodes
            .iter()
            .filter_map(|v| v.partition.as_deref())
            .chain(
                self.queues
                    .iter()
                    .flat_map(|q| &q.settings)
                    .filter(|s| s.key == "partition")
                    .filter_map(|s| s.value.as_str()),
            );
        for p in named {
            let served = self
                .scheds
                .iter()
                .any(|s| s.partition.as_deref() == Some(p));
            if !served && !unserved.contains(&p) {
                unserved.push(p);
            }
        }
        unserved
    }

    /// The queues (PBS) or classes (Moab) the scenario lists: the site's that a replayed job
    /// ran in or a vnode is associated with, then those only the logs name.
    pub(crate) fn written_queues<'s>(
        &'s self,
        replay: &'s Replay,
    ) -> impl Iterator<Item = &'s SiteQueue> + 's {
        self.queues
            .iter()
            .filter(|q| self.queue_written(replay, &q.name))
            .chain(replay.extra_queues.iter())
    }

    /// Whether queue `name` goes into the scenario: a replayed job ran in it, or a vnode is
    /// associated with it (the others change nothing, and the report names them).
    pub(crate) fn queue_written(&self, replay: &Replay, name: &str) -> bool {
        replay.queue_used(name) || self.vnodes.iter().any(|v| v.queue.as_deref() == Some(name))
    }

    /// The fairshare tree with the entities jobs are known by as numbers (`fairshare_entity`
    /// euser or egroup), leaves only; `None` without a tree.
    pub(crate) fn resource_group_text(&self, replay: &Replay) -> Option<String> {
        let (_, text) = self.resource_group.as_ref()?;
        let parents: Vec<&str> = text
            .lines()
            .filter_map(|l| l.split_whitespace().nth(2))
            .collect();
        let mut out = String::new();
        for l in text.lines() {
            let words: Vec<&str> = l.split_whitespace().collect();
            let renamed = match words.first() {
                Some(name) if !name.starts_with('#') && !parents.contains(name) => {
                    match self.fairshare_entity.as_str() {
                        "euser" => replay.user_number(name),
                        "egroup" => replay.group_number(name),
                        _ => None,
                    }
                }
                _ => None,
            };
            match renamed {
                Some(n) => {
                    let _ = writeln!(out, "{n}\t{}", words[1..].join("\t"));
                }
                None => {
                    let _ = writeln!(out, "{l}");
                }
            }
        }
        Some(out)
    }
}

/// A key list as qmgr gives it: values accumulated with `+=`, or comma-separated in one.
fn key_list(values: &[String]) -> toml::Value {
    toml::Value::Array(
        values
            .iter()
            .flat_map(|v| v.split(','))
            .map(|k| toml::Value::String(k.trim().to_owned()))
            .collect(),
    )
}

/// Why a setting placesim reads is not modelled.
fn not_modelled_reason(key: &str) -> &'static str {
    match key {
        k if k.starts_with("resources_default") => {
            "job-wide defaults: the logs record each job's select, walltime and resources as PBS completed them"
        }
        "default_chunk.nchunk" => "every replayed request gives its chunks' count",
        k if k.starts_with("resources_max") || k.starts_with("resources_min") => {
            "admission limits: the logs hold only jobs PBS admitted"
        }
        "default_queue" => "jobs are replayed in the queue they ran in",
        "route_destinations" => "jobs are replayed in the queue they ran in",
        "eligible_time_enable" => "placesim accrues eligible_time as if it were on",
        k if k.starts_with("acl_") || k.ends_with("_enable") => {
            "an access or feature switch that changes no placement or order placesim models"
        }
        "help_starving_jobs" | "max_starve" => "starving-job help is not modelled",
        k if k.starts_with("preempt") || k == "dont_preempt_starving" => {
            "preemption is not modelled"
        }
        "backfill_prime"
        | "prime_exempt_anytime_queues"
        | "primetime_prefix"
        | "nonprimetime_prefix"
        | "dedicated_prefix" => "prime time and dedicated time are not modelled",
        "opt_backfill_fuzzy" => "only opt_backfill_fuzzy = off (exact top-job times) is modelled",
        _ => "not modelled",
    }
}
