//! `moab.cfg`'s standing reservations (`SRCFG[name]`, reservations-and-partitions.md §5.1)
//! written as `[[moab.reservation]]`: their windows, hosts and ACL, with user and group names
//! as the replay's numbers, and t = 0's local weekday and time of day (`[moab] day0`,
//! `time0`) so that their periods fall where the site's did.

use crate::files;
use crate::settings::origin;
use crate::workload::Replay;
use crate::{ImportError, Site};
use std::fmt::Write as _;
use std::path::Path;

/// One `SRCFG[name]`: its attributes as the lines give them (a later line's value for an
/// attribute replaces an earlier one's, as Moab reads the file), each with its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Srcfg {
    pub name: String,
    /// (attribute in capitals, value, where it was given).
    pub attrs: Vec<(String, String, String)>,
    /// Where it was first given.
    pub origin: String,
}

/// The attributes written as keys of `[[moab.reservation]]`.
const WRITTEN: [&str; 10] = [
    "PERIOD",
    "DAYS",
    "STARTTIME",
    "ENDTIME",
    "DEPTH",
    "HOSTLIST",
    "USERLIST",
    "GROUPLIST",
    "ACCOUNTLIST",
    "CLASSLIST",
];

/// Moab's ACL list separators (MACL.c splits on exactly these).
const LIST_SEPARATORS: [char; 3] = [',', '|', ':'];

impl Site {
    /// An `SRCFG[name] ATTR=value ...` line: each value checked here, so that a bad one is
    /// named at its line.
    pub(crate) fn read_srcfg(
        &mut self,
        path: &Path,
        l: &files::MoabLine,
    ) -> Result<(), ImportError> {
        let name = l.indexed_name(path)?;
        let k = match self.moab_reservations.iter().position(|r| r.name == name) {
            Some(k) => k,
            None => {
                self.moab_reservations.push(Srcfg {
                    name: name.clone(),
                    attrs: Vec::new(),
                    origin: origin(path, l.line),
                });
                self.moab_reservations.len() - 1
            }
        };
        for (attr, value) in l.attrs(path)? {
            let upper = attr.to_ascii_uppercase();
            if let Some(expected) = expected_of(&upper, &value) {
                return Err(l.bad_attr(path, &name, (&attr, &value), expected));
            }
            let attrs = &mut self.moab_reservations[k].attrs;
            attrs.retain(|(a, ..)| *a != upper);
            attrs.push((upper, value, origin(path, l.line)));
        }
        Ok(())
    }

    /// The `[[moab.reservation]]` entries of the site's SRCFG reservations, with the local
    /// clock of t = 0 they need, and what was not written or not modelled.
    pub(crate) fn srcfg_entries(&self, replay: &Replay) -> SrcfgEntries {
        let mut made = SrcfgEntries::default();
        let classes: Vec<&str> = self
            .written_queues(replay)
            .map(|q| q.name.as_str())
            .collect();
        for r in &self.moab_reservations {
            let get = |attr: &str| r.attrs.iter().find(|(a, ..)| a == attr);
            let text = |(a, v, _): &(String, String, String)| format!("SRCFG[{}] {a}={v}", r.name);
            if let Some(t) = get("TASKCOUNT").filter(|(_, v, _)| v != "0") {
                made.not_written.push((
                    text(t),
                    t.2.clone(),
                    "a floating reservation (TASKCOUNT) is not modelled: Moab chooses its hosts as it runs; the reservation is not written".to_owned(),
                ));
                continue;
            }
            for a in r
                .attrs
                .iter()
                .filter(|(a, ..)| !WRITTEN.contains(&a.as_str()))
            {
                let why = match a.0.as_str() {
                    "TASKCOUNT" => continue,
                    "RESOURCES" => "with HOSTLIST and no TASKCOUNT the hosts are reserved whole",
                    "ACCESS" => {
                        "changes nothing here: Moab reservations hold no resources, so they may overlap"
                    }
                    "FLAGS"
                        if a.1
                            .split(LIST_SEPARATORS)
                            .any(|f| f.eq_ignore_ascii_case("BYNAME")) =>
                    {
                        "BYNAME admits only jobs that name the reservation, and no replayed job does: written with no ACL, admitting none; other flags are not modelled"
                    }
                    "QOSLIST" => "jobs carry no QOS here: its entries admit no replayed job",
                    _ => "not modelled",
                };
                made.not_written
                    .push((text(a), a.2.clone(), why.to_owned()));
            }
            let by_name = get("FLAGS").is_some_and(|(_, v, _)| {
                v.split(LIST_SEPARATORS)
                    .any(|f| f.eq_ignore_ascii_case("BYNAME"))
            });
            // The ACL, entry by entry with its modifier, names as the scenario knows them.
            let mut lists: Vec<(&str, Vec<String>)> = Vec::new();
            let mut admits_none = by_name;
            let mut admits_all = None;
            let mut xor = None;
            // In the order the lines give them: the last entry a job matches gives its
            // affinity, and the scenario keeps its lists' order.
            for list in &r.attrs {
                let (attr, key) = match list.0.as_str() {
                    "USERLIST" => ("USERLIST", "userlist"),
                    "GROUPLIST" => ("GROUPLIST", "grouplist"),
                    "ACCOUNTLIST" => ("ACCOUNTLIST", "accountlist"),
                    "CLASSLIST" => ("CLASSLIST", "classlist"),
                    _ => continue,
                };
                let mut entries = Vec::new();
                for entry in list.1.split(LIST_SEPARATORS).filter(|e| !e.is_empty()) {
                    let name = entry.trim_end_matches(['+', '=', '-', '!', '*', '^']);
                    let modifier = &entry[name.len()..];
                    if name.eq_ignore_ascii_case("ALL") {
                        admits_all = Some(text(list));
                        continue;
                    }
                    if modifier.ends_with('^') {
                        xor = Some(text(list));
                        continue;
                    }
                    let known = match attr {
                        "USERLIST" => replay.user_number(name).map(|n| n.to_string()),
                        "GROUPLIST" => replay.group_number(name).map(|n| n.to_string()),
                        "CLASSLIST" => classes.contains(&name).then(|| name.to_owned()),
                        _ => Some(name.to_owned()),
                    };
                    match known {
                        Some(n) => entries.push(format!("{n}{modifier}")),
                        None => {
                            // A required entry no replayed job matches admits none of them.
                            admits_none |= modifier.ends_with('*');
                            made.not_written.push((
                                format!("SRCFG[{}] {attr} entry {entry}", r.name),
                                list.2.clone(),
                                "no replayed job has this credential: the entry matches none"
                                    .to_owned(),
                            ));
                        }
                    }
                }
                if !entries.is_empty() {
                    lists.push((key, entries));
                }
            }
            if let Some(all) = admits_all {
                made.not_written.push((
                    all,
                    r.origin.clone(),
                    "an ACL of ALL admits every job, which changes only the order hosts are taken in (affinity), not modelled: the reservation is not written".to_owned(),
                ));
                continue;
            }
            if let Some(list) = xor {
                made.not_written.push((
                    list,
                    r.origin.clone(),
                    "an XOR entry (`^`, in Maui's code only) is not modelled: the reservation is not written".to_owned(),
                ));
                continue;
            }
            // Its hosts: HOSTLIST (ranges as written, `n[01-16]`), else every host.
            let hosts: Vec<String> = match get("HOSTLIST") {
                Some((_, v, _)) if !v.eq_ignore_ascii_case("ALL") => {
                    let mut hosts = Vec::new();
                    for h in v.split([',', '|', ' ']).filter(|h| !h.is_empty()) {
                        if h.contains('[') || self.vnodes.iter().any(|n| n.host == h) {
                            hosts.push(h.to_owned());
                        } else {
                            made.not_written.push((
                                format!("SRCFG[{}] HOSTLIST entry {h}", r.name),
                                r.origin.clone(),
                                "the node list has no host of that name".to_owned(),
                            ));
                        }
                    }
                    hosts
                }
                _ => {
                    let mut seen = std::collections::HashSet::new();
                    self.vnodes
                        .iter()
                        .filter(|v| seen.insert(v.host.as_str()))
                        .map(|v| v.host.clone())
                        .collect()
                }
            };
            if hosts.is_empty() {
                made.not_written.push((
                    format!("SRCFG[{}]", r.name),
                    r.origin.clone(),
                    "none of its hosts is in the node list: the reservation is not written"
                        .to_owned(),
                ));
                continue;
            }
            let quoted = |items: &[String]| {
                toml::Value::Array(items.iter().cloned().map(toml::Value::String).collect())
            };
            let mut entry = String::new();
            let _ = writeln!(
                entry,
                "[[moab.reservation]]    # SRCFG[{}] in {}",
                r.name, r.origin
            );
            let _ = writeln!(entry, "name = {}", toml::Value::String(r.name.clone()));
            let _ = writeln!(entry, "hostlist = {}", quoted(&hosts));
            // A standing reservation, DAY by default (msched.h).
            let period = get("PERIOD").map_or("DAY".to_owned(), |(_, v, _)| v.to_ascii_uppercase());
            let _ = writeln!(entry, "period = {}", toml::Value::String(period.clone()));
            // What the period does not take is reported, not written (the scenario refuses it).
            for a in r.attrs.iter().filter(|(a, ..)| {
                (a == "DAYS" && period != "DAY")
                    || (period == "INFINITY"
                        && matches!(a.as_str(), "STARTTIME" | "ENDTIME" | "DEPTH"))
            }) {
                made.not_written.push((
                    text(a),
                    a.2.clone(),
                    format!("does nothing with PERIOD={period}: not written"),
                ));
            }
            if period != "INFINITY" {
                if let Some((_, v, _)) = get("DAYS").filter(|(_, v, _)| {
                    period == "DAY"
                        && !v.eq_ignore_ascii_case("ALL")
                        && !v.eq_ignore_ascii_case("[ALL]")
                }) {
                    let days: Vec<String> = v
                        .trim_matches(['[', ']'])
                        .split(LIST_SEPARATORS)
                        .filter(|d| !d.is_empty())
                        .map(str::to_ascii_uppercase)
                        .collect();
                    let _ = writeln!(entry, "days = {}", quoted(&days));
                }
                for (attr, key) in [("STARTTIME", "starttime"), ("ENDTIME", "endtime")] {
                    if let Some((_, v, _)) = get(attr) {
                        let _ = writeln!(entry, "{key} = {}", toml::Value::String(v.clone()));
                    }
                }
                if let Some((_, v, _)) = get("DEPTH") {
                    let _ = writeln!(entry, "depth = {v}");
                }
            }
            if !admits_none {
                for (key, entries) in &lists {
                    let _ = writeln!(entry, "{key} = {}", quoted(entries));
                }
            }
            made.entries.push(entry);
            made.names.push(r.name.clone());
        }
        if !made.entries.is_empty() {
            made.clock = Some(LocalT0::of(replay.t0, &replay.utc_offsets));
        }
        made
    }
}

/// What an SRCFG attribute's value should be, when `value` is not one; `None` when it reads
/// (or the attribute is one whose value is not checked).
fn expected_of(attr: &str, value: &str) -> Option<&'static str> {
    let weekday = |d: &str| {
        d.eq_ignore_ascii_case("ALL")
            || ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
                .iter()
                .any(|w| w.eq_ignore_ascii_case(d))
    };
    let reads = match attr {
        "PERIOD" => ["DAY", "WEEK", "INFINITY"].contains(&value.to_ascii_uppercase().as_str()),
        "DEPTH" => value.parse::<u32>().is_ok_and(|d| d > 0),
        "STARTTIME" | "ENDTIME" => placesim_request::parse_duration(value).is_some(),
        "DAYS" => value
            .trim_matches(['[', ']'])
            .split(LIST_SEPARATORS)
            .all(weekday),
        "TASKCOUNT" => value.parse::<u64>().is_ok(),
        _ => true,
    };
    (!reads).then_some(match attr {
        "PERIOD" => "DAY, WEEK or INFINITY",
        "DEPTH" => "a whole number of periods, 1 or more",
        "STARTTIME" | "ENDTIME" => {
            "an offset in the period, HH:MM:SS (DD:HH:MM:SS for PERIOD=WEEK)"
        }
        "DAYS" => "weekdays (MON,TUE,...) or ALL",
        _ => "a whole number of tasks",
    })
}

/// What the import makes of the SRCFG reservations.
#[derive(Debug, Default)]
pub(crate) struct SrcfgEntries {
    /// `[[moab.reservation]]` entries, as text.
    pub entries: Vec<String>,
    /// Their names.
    pub names: Vec<String>,
    /// (setting, origin, why) of each reservation or attribute not written as given.
    pub not_written: Vec<(String, String, String)>,
    /// t = 0 in local time, when any is written.
    pub clock: Option<LocalT0>,
}

/// t = 0 in the site's local time: its weekday (day 0 = Sunday) and time of day, and the
/// UTC offset it was read by (`None`: the records show none, UTC is taken).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LocalT0 {
    pub weekday: usize,
    pub time_of_day_s: i64,
    pub utc_offset_s: Option<i64>,
}

impl LocalT0 {
    /// The local time of epoch second `t0` by the offset in force then.
    pub(crate) fn of(t0: i64, utc_offsets: &[(i64, i64)]) -> LocalT0 {
        let offset = utc_offsets
            .iter()
            .take_while(|(from, _)| *from <= t0)
            .last()
            .or(utc_offsets.first())
            .map(|o| o.1);
        let local = t0 + offset.unwrap_or(0);
        // 1 January 1970 was a Thursday, day 4.
        LocalT0 {
            weekday: (local.div_euclid(86_400) + 4).rem_euclid(7) as usize,
            time_of_day_s: local.rem_euclid(86_400),
            utc_offset_s: offset,
        }
    }

    /// The `[moab]` lines that say it.
    pub(crate) fn write(&self, out: &mut String, t0: i64) {
        const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
        let s = self.time_of_day_s;
        let time = format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
        let by = match self.utc_offset_s {
            Some(o) => format!(
                "UTC{}{:02}:{:02}, as the records' local times show",
                if o < 0 { '-' } else { '+' },
                o.abs() / 3600,
                o.abs() / 60 % 60
            ),
            None => "UTC: the records show no local time".to_owned(),
        };
        let _ = writeln!(
            out,
            "day0 = \"{}\"    # t = 0 is epoch {t0}, local time ({by}): where SRCFG periods count from",
            WEEKDAYS[self.weekday]
        );
        let _ = writeln!(out, "time0 = \"{time}\"");
    }
}
