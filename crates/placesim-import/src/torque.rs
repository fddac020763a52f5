//! A Torque site scheduled by Moab (`placesim import torque-moab`, site-inputs.md §6, §7.1):
//! its node list (`server_priv/nodes` or `pbsnodes -a`), its accounting logs (PBS's layout,
//! with `exec_host` for where jobs ran and `Resource_List.nodes` for what they asked) and
//! `moab.cfg`. The node list and `moab.cfg` become the same site the PBS import builds, with
//! Moab's settings; the logs go through the PBS import's replay unchanged, since Torque writes
//! the same records.

use crate::files::{self, at};
use crate::settings::{Scheduler, Setting, SiteQueue, boolean, origin, set, write_setting};
use crate::{ImportError, Site};
use placesim_core::ResourceKind;
use std::path::{Path, PathBuf};

/// The files of one Torque/Moab site.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TorqueInputs {
    /// `server_priv/nodes`, `pbsnodes -a` text, or a Maui resource trace (its lines start
    /// with `COMPUTENODE`).
    pub nodes: PathBuf,
    /// `moab.cfg` (or `maui.cfg`), if given.
    pub moab_cfg: Option<PathBuf>,
    /// Accounting log files, in the order they are read; or one Maui workload trace (lines
    /// of whitespace-separated fields, without the logs' `;`).
    pub accounting: Vec<PathBuf>,
}

/// Whether `text`'s first line that is neither blank nor a comment passes `test`.
fn first_line_is(text: &str, test: impl Fn(&str) -> bool) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(test)
}

/// Reads the site's jobs: its accounting logs, or its one Maui workload trace.
pub(crate) fn read_jobs(
    inputs: &TorqueInputs,
    options: crate::ImportOptions,
) -> Result<crate::workload::ReadJobs, ImportError> {
    if let [one] = inputs.accounting.as_slice() {
        let text = placesim_workload::read_text(one)?;
        if first_line_is(&text, |l| !l.contains(';')) {
            return crate::maui::read_workload_trace(one, &text, 0, options);
        }
    }
    crate::workload::read_accounting(&inputs.accounting, options)
}

/// The string array that holds each vnode's Torque properties, which Moab reads as node
/// FEATUREs (and `[moab] feature_resource`'s default).
const FEATURES: &str = "features";

/// `moab.cfg` parameters that are one `[moab]` key each, with the kind of value they take.
const MOAB_KEYS: [(&str, &str, Value); 12] = [
    (
        "NODESETPOLICY",
        "nodeset_policy",
        Value::OneOf(&["ONEOF", "ANYOF", "FIRSTOF"]),
    ),
    (
        "NODESETATTRIBUTE",
        "nodeset_attribute",
        Value::OneOf(&["FEATURE", "VARATTR", "RESERVATION"]),
    ),
    ("NODESETLIST", "nodeset_list", Value::List),
    ("NODESETDELAY", "nodeset_delay", Value::Duration),
    (
        "NODESETPRIORITYTYPE",
        "nodeset_priority_type",
        Value::OneOf(&["FIRSTFIT", "BESTFIT", "WORSTFIT", "MINLOSS", "AFFINITY"]),
    ),
    ("NODESETISOPTIONAL", "nodeset_is_optional", Value::Boolean),
    ("NODESETTOLERANCE", "nodeset_tolerance", Value::Number),
    (
        "NODESETPLUS",
        "nodeset_plus",
        Value::OneOf(&["DELAY", "SPANEVENLY"]),
    ),
    ("RESERVATIONDEPTH", "reservation_depth", Value::Count),
    (
        "RESERVATIONPOLICY",
        "reservation_policy",
        Value::OneOf(&["CURRENTHIGHEST", "HIGHEST", "NEVER"]),
    ),
    (
        "NODEACCESSPOLICY",
        "node_access_policy",
        Value::OneOf(&["SHARED", "SINGLEJOB"]),
    ),
    ("RMPOLLINTERVAL", "rmpoll_interval", Value::Duration),
];

/// `moab.cfg`'s priority weights and caps, each a `[moab.priority]` key of its name in lower
/// case.
const PRIORITY_KEYS: [&str; 29] = [
    "SERVWEIGHT",
    "SERVCAP",
    "QUEUETIMEWEIGHT",
    "QUEUETIMECAP",
    "XFACTORWEIGHT",
    "XFACTORCAP",
    "XFMINWCLIMIT",
    "RESWEIGHT",
    "RESCAP",
    "PROCWEIGHT",
    "MEMWEIGHT",
    "WALLTIMEWEIGHT",
    "PSWEIGHT",
    "PROCCAP",
    "MEMCAP",
    "WALLTIMECAP",
    "PSCAP",
    "CREDWEIGHT",
    "CREDCAP",
    "USERWEIGHT",
    "GROUPWEIGHT",
    "ACCOUNTWEIGHT",
    "CLASSWEIGHT",
    "FSWEIGHT",
    "FSCAP",
    "FSUSERWEIGHT",
    "FSGROUPWEIGHT",
    "FSACCOUNTWEIGHT",
    "FSCLASSWEIGHT",
];

/// `moab.cfg`'s fairshare parameters, each a `[moab.fairshare]` key.
const FAIRSHARE_KEYS: [(&str, &str, Value); 4] = [
    (
        "FSPOLICY",
        "policy",
        Value::OneOf(&[
            "DEDICATEDPS",
            "DEDICATEDPES",
            "DEDICATEDPS%",
            "DEDICATEDPES%",
        ]),
    ),
    ("FSINTERVAL", "interval", Value::Duration),
    ("FSDEPTH", "depth", Value::Count),
    ("FSDECAY", "decay", Value::Number),
];

/// What a `moab.cfg` value must be, checked at its line so that a bad one is named there
/// rather than in the scenario written from it.
#[derive(Debug, Clone, Copy)]
enum Value {
    /// One of these words (any case, written in upper case).
    OneOf(&'static [&'static str]),
    /// Words separated by spaces, commas or colons.
    List,
    /// `[[[DD:]HH:]MM:]SS`.
    Duration,
    /// TRUE or FALSE.
    Boolean,
    /// A number.
    Number,
    /// A whole number, not negative.
    Count,
    /// `[[[DD:]HH:]MM:]SS`, as whole seconds.
    Seconds,
}

impl Value {
    /// `raw` as the scenario's TOML value, or what was expected.
    fn read(self, raw: &str) -> Result<toml::Value, String> {
        let raw = raw.trim();
        match self {
            Value::OneOf(words) => {
                let upper = raw.to_ascii_uppercase();
                words
                    .contains(&upper.as_str())
                    .then_some(toml::Value::String(upper))
                    .ok_or_else(|| format!("one of {}", words.join(", ")))
            }
            Value::List => Ok(toml::Value::Array(
                raw.split([' ', '\t', ',', ':'])
                    .filter(|w| !w.is_empty())
                    .map(|w| toml::Value::String(w.to_owned()))
                    .collect(),
            )),
            Value::Duration => {
                let parts: Vec<&str> = raw.split(':').collect();
                let good = parts.len() <= 4
                    && parts
                        .iter()
                        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
                good.then(|| toml::Value::String(raw.to_owned()))
                    .ok_or_else(|| "a time such as 00:10:00 or 600".to_owned())
            }
            Value::Boolean => boolean(raw)
                .map(toml::Value::Boolean)
                .ok_or_else(|| "TRUE or FALSE".to_owned()),
            Value::Number => raw
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .map(toml::Value::Float)
                .ok_or_else(|| "a number".to_owned()),
            Value::Count => raw
                .parse::<u32>()
                .map(|n| toml::Value::Integer(i64::from(n)))
                .map_err(|_| "a whole number".to_owned()),
            Value::Seconds => {
                let parts: Vec<&str> = raw.split(':').collect();
                let mut seconds: i64 = 0;
                for (part, scale) in parts.iter().rev().zip([1, 60, 3_600, 86_400]) {
                    let n: i64 = part.parse().map_err(|_| "a time such as 00:02:00 or 120")?;
                    seconds = seconds.saturating_add(n.saturating_mul(scale));
                }
                if parts.len() > 4 || seconds < 0 {
                    return Err("a time such as 00:02:00 or 120".to_owned());
                }
                Ok(toml::Value::Integer(seconds))
            }
        }
    }
}

impl Site {
    /// Reads a Torque site's node list and its `moab.cfg`.
    pub fn read_torque(inputs: &TorqueInputs) -> Result<Site, ImportError> {
        let mut site = Site::empty(Scheduler::Moab);
        let path = &inputs.nodes;
        let text = placesim_workload::read_text(path)?;
        let nodes = if first_line_is(&text, |l| l.starts_with("COMPUTENODE")) {
            crate::maui::parse_resource_trace(path, &text)?
        } else {
            files::parse_torque_nodes(path, &text)?
        };
        site.sources.push(path.clone());
        site.define(
            FEATURES,
            ResourceKind::StringArray,
            false,
            "node properties (Torque) or features (Maui), which Moab reads as node FEATUREs"
                .to_owned(),
            path,
            0,
        )?;
        // Properties are booleans too, for old-style node specs' `prop=True`.
        for node in &nodes {
            for p in node
                .value("resources_available.features")
                .into_iter()
                .flat_map(|f| f.split(','))
            {
                if site.defs.lookup(p).is_none() {
                    let from = format!("a Torque node property, {}", origin(path, node.line));
                    site.define(p, ResourceKind::Boolean, false, from, path, node.line)?;
                }
            }
        }
        for node in &nodes {
            site.read_vnode(path, node)?;
        }
        if site.vnodes.is_empty() {
            return Err(at(
                path,
                1,
                "no node found: expected server_priv/nodes lines (`n01 np=8 bigmem`) or pbsnodes -a output",
            ));
        }
        if let Some(cfg) = &inputs.moab_cfg {
            let lines = files::parse_moab_cfg(cfg, &placesim_workload::read_text(cfg)?)?;
            site.read_moab_cfg(cfg, &lines)?;
            site.sources.push(cfg.clone());
        }
        Ok(site)
    }

    /// Reads `moab.cfg`'s lines into `[moab]`, `[moab.priority]`, `[moab.fairshare]`, the
    /// classes' node-set defaults and the nodes' features; every other line is reported as
    /// not modelled, with the reason.
    fn read_moab_cfg(&mut self, path: &Path, lines: &[files::MoabLine]) -> Result<(), ImportError> {
        for l in lines {
            let from = origin(path, l.line);
            let param = l.param.to_ascii_uppercase();
            let bad = |expected: &str| {
                at(
                    path,
                    l.line,
                    format!("{}: `{}`: expected {expected}", l.param, l.value),
                )
            };
            // A parameter's index: Maui's per-partition index 0 is the only one modelled.
            let global = matches!(l.index.as_deref(), None | Some("0"));
            if let Some((_, key, kind)) = MOAB_KEYS.iter().find(|(p, ..)| *p == param) {
                if !global {
                    self.not_modelled(l.text(), from, "per-partition parameters are not modelled");
                    continue;
                }
                if param == "NODESETATTRIBUTE"
                    && let Some(reason) = unmodelled_nodeset_attribute(&l.value)
                {
                    self.not_modelled(l.text(), from, reason);
                    continue;
                }
                let value = kind.read(&l.value).map_err(|e| bad(&e))?;
                set(&mut self.moab, key, value, from);
            } else if PRIORITY_KEYS.contains(&param.as_str()) || param == "ENABLENEGJOBPRIORITY" {
                if !global {
                    self.not_modelled(l.text(), from, "per-partition parameters are not modelled");
                    continue;
                }
                let kind = match param.as_str() {
                    "ENABLENEGJOBPRIORITY" => Value::Boolean,
                    // A time in moab.cfg; seconds in the scenario.
                    "XFMINWCLIMIT" => Value::Seconds,
                    _ => Value::Number,
                };
                let value = match kind.read(&l.value).map_err(|e| bad(&e))? {
                    // Weights are whole numbers in moab.cfg; the scenario reads integers.
                    toml::Value::Float(x) if x.fract() == 0.0 && x.abs() < 1e15 => {
                        toml::Value::Integer(x as i64)
                    }
                    v => v,
                };
                set(
                    &mut self.moab_priority,
                    &param.to_ascii_lowercase(),
                    value,
                    from,
                );
            } else if let Some((_, key, kind)) = FAIRSHARE_KEYS.iter().find(|(p, ..)| *p == param) {
                let value = kind.read(&l.value).map_err(|e| bad(&e))?;
                set(&mut self.moab_fairshare, key, value, from);
            } else if param == "NODECFG" {
                self.read_nodecfg(path, l)?;
            } else if param == "SRCFG" {
                self.read_srcfg(path, l)?;
            } else if let Some(kind) = Credential::of_param(&param) {
                self.read_credential(path, l, kind)?;
            } else {
                let reason = match param.as_str() {
                    "SCHEDCFG" | "RMCFG" | "ADMINCFG" | "LOGLEVEL" | "LOGFILE" => {
                        "how Moab runs and connects, which changes no order or placement"
                    }
                    "QOSCFG" => "QOS credentials are not modelled",
                    "BACKFILLPOLICY" | "BACKFILLDEPTH" => {
                        "backfill follows the reservation depth and policy"
                    }
                    _ => "not modelled",
                };
                self.not_modelled(l.text(), from, reason);
            }
        }
        // Fairshare counts only through a fairshare subweight, and the scenario refuses its
        // parameters without one, as they would do nothing.
        let subweight = self.moab_priority.iter().any(|s| {
            s.key.starts_with("fs")
                && s.key.ends_with("weight")
                && s.key != "fsweight"
                && s.value.as_integer() != Some(0)
        });
        if !subweight {
            for s in std::mem::take(&mut self.moab_fairshare) {
                let param = FAIRSHARE_KEYS
                    .iter()
                    .find(|(_, key, _)| *key == s.key)
                    .map_or(s.key.as_str(), |(param, ..)| param);
                let value = s
                    .value
                    .as_str()
                    .map_or_else(|| s.value.to_string(), str::to_owned);
                self.not_modelled(
                    format!("{param} {value}"),
                    s.origin,
                    "without effect: no fairshare subweight (FSUSERWEIGHT, ...) is set",
                );
            }
            let (targets, kept) = std::mem::take(&mut self.moab_credentials)
                .into_iter()
                .partition(|c| c.attr == "FSTARGET");
            self.moab_credentials = kept;
            for c in targets {
                self.not_modelled(
                    c.text(),
                    c.origin.clone(),
                    "without effect: no fairshare subweight (FSUSERWEIGHT, ...) is set",
                );
            }
        }
        Ok(())
    }

    /// `NODECFG[node] FEATURES=a,b`: features added to the node's (`DEFAULT`: every node's),
    /// also as booleans, so that old-style node specs naming them match.
    fn read_nodecfg(&mut self, path: &Path, l: &files::MoabLine) -> Result<(), ImportError> {
        let from = origin(path, l.line);
        let Some(node) = l.index.clone() else {
            return Err(at(
                path,
                l.line,
                "NODECFG: expected NODECFG[<node>] <ATTR>=<value> ...",
            ));
        };
        for (attr, value) in l.attrs(path)? {
            if !attr.eq_ignore_ascii_case("FEATURES") {
                self.not_modelled(
                    format!("NODECFG[{node}] {attr}={value}"),
                    from.clone(),
                    "node attributes other than FEATURES are not modelled",
                );
                continue;
            }
            let features: Vec<&str> = value
                .split([',', ':', ' '])
                .filter(|f| !f.is_empty())
                .collect();
            let targets: Vec<usize> = if node.eq_ignore_ascii_case("DEFAULT") {
                (0..self.vnodes.len()).collect()
            } else {
                self.vnodes
                    .iter()
                    .position(|v| v.name == node)
                    .into_iter()
                    .collect()
            };
            if targets.is_empty() {
                self.not_modelled(
                    format!("NODECFG[{node}] FEATURES={value}"),
                    from.clone(),
                    "the node list has no node of that name",
                );
                continue;
            }
            for f in &features {
                if self.defs.lookup(f).is_none() {
                    self.define(
                        f,
                        ResourceKind::Boolean,
                        false,
                        format!("a node feature, {from}"),
                        path,
                        l.line,
                    )?;
                }
            }
            for i in targets {
                for f in &features {
                    add_feature(&mut self.vnodes[i].resources, f);
                }
            }
        }
        Ok(())
    }

    /// `USERCFG[name]`, `GROUPCFG`, `ACCOUNTCFG` and `CLASSCFG` lines: throttling limits
    /// (`MAXJOB`, `MAXPROC`, `MAXPS`), `PRIORITY` and `FSTARGET`, kept under the name to be
    /// written with the replay's numbers; a class's `DEFAULT.NODESET` on its
    /// `[[moab.class]]`.
    fn read_credential(
        &mut self,
        path: &Path,
        l: &files::MoabLine,
        kind: Credential,
    ) -> Result<(), ImportError> {
        let from = origin(path, l.line);
        let name = l.indexed_name(path)?;
        for (attr, value) in l.attrs(path)? {
            let upper = attr.to_ascii_uppercase();
            let bad = |expected: &str| l.bad_attr(path, &name, (&attr, &value), expected);
            let checked = match upper.as_str() {
                "MAXJOB" | "MAXPROC" | "MAXPS" => value
                    .split(',')
                    .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                    .then_some(())
                    .ok_or_else(|| bad("[<soft>,]<hard>, whole numbers")),
                "PRIORITY" => value
                    .parse::<i64>()
                    .map(|_| ())
                    .map_err(|_| bad("a whole number")),
                "FSTARGET" => value
                    .trim_end_matches(['+', '-'])
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .map(|_| ())
                    .ok_or_else(|| bad("a percentage, with + for a floor or - for a ceiling")),
                "DEFAULT.NODESET" if kind == Credential::Class => {
                    self.class_default_nodeset(&name, value, from.clone());
                    continue;
                }
                _ => {
                    self.not_modelled(
                        format!("{}[{name}] {attr}={value}", l.param),
                        from.clone(),
                        "credential attributes other than MAXJOB, MAXPROC, MAXPS, PRIORITY, FSTARGET and a class's DEFAULT.NODESET are not modelled",
                    );
                    continue;
                }
            };
            checked?;
            self.moab_credentials.push(CredentialSetting {
                kind,
                name: name.clone(),
                attr: upper,
                value,
                origin: from.clone(),
            });
        }
        Ok(())
    }

    /// `CLASSCFG[class] DEFAULT.NODESET=<POLICY>:<ATTR>[:<v>...]`: the class's node-set
    /// default, written on its `[[moab.class]]`.
    fn class_default_nodeset(&mut self, class: &str, value: String, from: String) {
        if let Some(reason) = nodeset_not_modelled(&value) {
            self.not_modelled(
                format!("CLASSCFG[{class}] DEFAULT.NODESET={value}"),
                from,
                reason,
            );
            return;
        }
        let value = toml::Value::String(value);
        match self.queues.iter_mut().find(|q| q.name == class) {
            Some(q) => set(&mut q.settings, "default_nodeset", value, from),
            None => self.queues.push(SiteQueue {
                name: class.to_owned(),
                settings: vec![Setting {
                    key: "default_nodeset".to_owned(),
                    value,
                    origin: from.clone(),
                }],
                origin: from,
            }),
        }
    }

    /// The Moab part of `scenario.toml`: `[moab]`, `[moab.priority]`, `[moab.fairshare]`,
    /// and a `[[moab.class]]` per queue the replay uses (jobs name theirs with `-q`).
    pub(crate) fn write_moab(&self, out: &mut String, replay: &crate::workload::Replay) {
        use std::fmt::Write as _;
        let write = |out: &mut String, s: &Setting| write_setting(out, &s.key, &s.value, &s.origin);
        let reservations = self.srcfg_entries(replay);
        out.push_str("[moab]\n");
        // RESERVATION node sets of reservations not written are left out: the scenario
        // refuses a set of an unknown reservation (the report names them).
        let unwritten = self.reservation_sets_not_written(&reservations.names);
        for s in &self.moab {
            match s.value.as_array() {
                Some(list) if s.key == "nodeset_list" && !unwritten.is_empty() => {
                    let kept = list
                        .iter()
                        .filter(|v| v.as_str().is_none_or(|n| !unwritten.iter().any(|u| u == n)))
                        .cloned()
                        .collect();
                    write_setting(out, &s.key, &toml::Value::Array(kept), &s.origin);
                }
                _ => write(out, s),
            }
        }
        if let Some(clock) = reservations.clock {
            clock.write(out, replay.t0);
        }
        out.push('\n');
        let credentials = self.numbered_credentials(replay);
        // One table per credential kind of the settings of `attrs`: a limit's entries of one
        // credential joined into one text, as `[moab.limits]` reads them.
        let tables = |attrs: &[&str]| -> Vec<(&'static str, toml::Value, String)> {
            Credential::ALL
                .iter()
                .filter_map(|kind| {
                    let mut table = toml::map::Map::new();
                    let mut origins: Vec<&str> = Vec::new();
                    for (c, name) in &credentials {
                        if c.kind != *kind || !attrs.contains(&c.attr.as_str()) {
                            continue;
                        }
                        let value = match (c.attr.as_str(), table.get(name)) {
                            ("PRIORITY", _) => toml::Value::Integer(c.value.parse().unwrap_or(0)),
                            ("FSTARGET", _) => toml::Value::String(c.value.clone()),
                            (_, Some(toml::Value::String(before))) => {
                                toml::Value::String(format!("{before} {}={}", c.attr, c.value))
                            }
                            _ => toml::Value::String(format!("{}={}", c.attr, c.value)),
                        };
                        table.insert(name.clone(), value);
                        if !origins.contains(&c.origin.as_str()) {
                            origins.push(&c.origin);
                        }
                    }
                    (!table.is_empty())
                        .then(|| (kind.word(), toml::Value::Table(table), origins.join(", ")))
                })
                .collect()
        };
        let priorities = tables(&["PRIORITY"])
            .into_iter()
            .map(|(kind, t, o)| (format!("{kind}_priority"), t, o))
            .collect();
        let targets = tables(&["FSTARGET"])
            .into_iter()
            .map(|(kind, t, o)| (kind.to_owned(), t, o))
            .collect();
        let limits = tables(&["MAXJOB", "MAXPROC", "MAXPS"])
            .into_iter()
            .map(|(kind, t, o)| (kind.to_owned(), t, o))
            .collect();
        let no_settings = Vec::new();
        for (table, settings, credential_tables) in [
            ("[moab.priority]", &self.moab_priority, priorities),
            ("[moab.fairshare]", &self.moab_fairshare, targets),
            ("[moab.limits]", &no_settings, limits),
        ] {
            let credential_tables: Vec<(String, toml::Value, String)> = credential_tables;
            if settings.is_empty() && credential_tables.is_empty() {
                continue;
            }
            let _ = writeln!(out, "{table}");
            for s in settings {
                write(out, s);
            }
            for (key, value, from) in credential_tables {
                write_setting(out, &key, &value, &from);
            }
            out.push('\n');
        }
        for q in self.written_queues(replay) {
            let _ = writeln!(out, "[[moab.class]]    # {}", q.origin);
            let _ = writeln!(out, "name = {}", toml::Value::String(q.name.clone()));
            for s in &q.settings {
                write(out, s);
            }
            out.push('\n');
        }
        for entry in &reservations.entries {
            out.push_str(entry);
            out.push('\n');
        }
    }

    /// What `NODESETLIST` names under `NODESETATTRIBUTE RESERVATION` that is not a written
    /// reservation.
    pub(crate) fn reservation_sets_not_written(&self, written: &[String]) -> Vec<String> {
        self.moab
            .iter()
            .find(|s| s.key == "nodeset_list")
            .filter(|_| self.reservation_node_sets())
            .and_then(|s| s.value.as_array())
            .map(|list| {
                list.iter()
                    .filter_map(|v| v.as_str())
                    .filter(|n| !written.iter().any(|w| w == n))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether `NODESETATTRIBUTE` is RESERVATION.
    fn reservation_node_sets(&self) -> bool {
        self.moab.iter().any(|s| {
            s.key == "nodeset_attribute"
                && s.value
                    .as_str()
                    .is_some_and(|a| a.eq_ignore_ascii_case("RESERVATION"))
        })
    }
}

/// A Moab credential kind, in `[moab.*]` tables' order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Credential {
    User,
    Group,
    Account,
    Class,
}

impl Credential {
    const ALL: [Credential; 4] = [
        Credential::User,
        Credential::Group,
        Credential::Account,
        Credential::Class,
    ];

    /// The credential a `moab.cfg` parameter configures (`USERCFG`: users).
    fn of_param(param: &str) -> Option<Credential> {
        match param {
            "USERCFG" => Some(Credential::User),
            "GROUPCFG" => Some(Credential::Group),
            "ACCOUNTCFG" => Some(Credential::Account),
            "CLASSCFG" => Some(Credential::Class),
            _ => None,
        }
    }

    /// Its key in the scenario's credential tables.
    fn word(self) -> &'static str {
        match self {
            Credential::User => "user",
            Credential::Group => "group",
            Credential::Account => "account",
            Credential::Class => "class",
        }
    }
}

/// One credential's attribute in `moab.cfg` (`USERCFG[alice] MAXJOB=2,4`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CredentialSetting {
    pub kind: Credential,
    pub name: String,
    /// `MAXJOB`, `MAXPROC`, `MAXPS`, `PRIORITY` or `FSTARGET`.
    pub attr: String,
    pub value: String,
    pub origin: String,
}

impl CredentialSetting {
    /// The setting as `moab.cfg` writes it.
    pub(crate) fn text(&self) -> String {
        let param = match self.kind {
            Credential::User => "USERCFG",
            Credential::Group => "GROUPCFG",
            Credential::Account => "ACCOUNTCFG",
            Credential::Class => "CLASSCFG",
        };
        format!("{param}[{}] {}={}", self.name, self.attr, self.value)
    }
}

impl Site {
    /// The credential settings whose credential the replay knows, each with the name the
    /// scenario knows it by: users and groups by the replay's numbers (SWF carries numbers),
    /// accounts by project, classes by name, `DEFAULT` as it is. A user or group no replayed
    /// job has would configure nobody, and is left out (the report names it).
    pub(crate) fn numbered_credentials(
        &self,
        replay: &crate::workload::Replay,
    ) -> Vec<(&CredentialSetting, String)> {
        self.moab_credentials
            .iter()
            .filter_map(|c| {
                let name = match c.kind {
                    _ if c.name == "DEFAULT" => Some(c.name.clone()),
                    Credential::User => replay.user_number(&c.name).map(|n| n.to_string()),
                    Credential::Group => replay.group_number(&c.name).map(|n| n.to_string()),
                    Credential::Account => Some(c.name.clone()),
                    // A class no replayed job ran in is not written.
                    Credential::Class => replay.queue_used(&c.name).then(|| c.name.clone()),
                };
                Some((c, name?))
            })
            .collect()
    }
}

/// Why a Moab node-set specification (`ONEOF:FEATURE:a:b`: a job's `-l nodeset=`, a class's
/// `DEFAULT.NODESET`) cannot be imported, or `None` when its attribute is one the import
/// models (FEATURE or VARATTR). The request language reads it as written: its values joined
/// by `:` or `,`, as Moab's `MNSFromString` splits them.
pub(crate) fn nodeset_not_modelled(text: &str) -> Option<&'static str> {
    let attribute = text.split(':').nth(1).unwrap_or("");
    match attribute.trim().to_ascii_uppercase().as_str() {
        "FEATURE" | "VARATTR" => None,
        // NODESETATTRIBUTE RESERVATION is imported with the SRCFG reservations it names; a
        // job's or class's own list could name one that is not written.
        "RESERVATION" => Some("a job's or class's own RESERVATION node sets are not imported"),
        _ => Some(unmodelled_nodeset_attribute(attribute).unwrap_or(UNMODELLED_NODESET)),
    }
}

const UNMODELLED_NODESET: &str = "only FEATURE and VARATTR node sets are imported";

/// Why node sets on `attribute`, one Moab knows, are not imported as `NODESETATTRIBUTE`;
/// `None` for FEATURE, VARATTR and RESERVATION (with the SRCFG reservations), and for a name
/// Moab does not know (an error where a setting names it).
fn unmodelled_nodeset_attribute(attribute: &str) -> Option<&'static str> {
    match attribute.trim().to_ascii_uppercase().as_str() {
        "MEMORY" | "NETWORK" => Some("MEMORY and NETWORK node sets are not modelled"),
        // The scenario format has CLASS sets over a `classes` resource; the import does not
        // write the classes a node carries.
        "CLASS" => Some(
            "CLASS node sets need the classes each node carries, which the import does not write",
        ),
        // The scenario format has PROCSPEED sets over the vnodes' `speed`; Moab's speeds are
        // NODECFG PROCSPEED values in MHz, which the import does not read.
        "PROCSPEED" => Some(
            "PROCSPEED node sets need each node's speed (NODECFG PROCSPEED), which the import does not read",
        ),
        _ => None,
    }
}

/// Adds feature `f` to a vnode's resources: to its `features` array, and as a boolean.
fn add_feature(resources: &mut Vec<(String, toml::Value)>, f: &str) {
    if !resources.iter().any(|(name, _)| name == FEATURES) {
        resources.push((FEATURES.to_owned(), toml::Value::Array(Vec::new())));
    }
    if let Some((_, toml::Value::Array(list))) =
        resources.iter_mut().find(|(name, _)| name == FEATURES)
    {
        if !list.iter().any(|v| v.as_str() == Some(f)) {
            list.push(toml::Value::String(f.to_owned()));
        }
    }
    if !resources.iter().any(|(name, _)| name == f) {
        resources.push((f.to_owned(), toml::Value::Boolean(true)));
    }
}
