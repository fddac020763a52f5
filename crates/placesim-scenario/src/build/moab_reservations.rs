//! `[[moab.reservation]]`: Moab's standing (SRCFG) and administrative (`mrsvctl -c`)
//! reservations, read into site reservations that hold nothing and carry an ACL
//! (reservations-and-partitions.md §5).
//!
//! Scenario times carry no date, so t = 0 is taken as the local time `[moab] time0`
//! (midnight by default) of weekday `[moab] day0` (Sunday by default); periods are whole days
//! of 86,400 s (no daylight-saving shift) and weeks start on Sunday 00:00, day 0, as Moab
//! counts them.

use super::{Cx, RESERVATION_HORIZON_S};
use crate::ScenarioError;
use crate::schema::{MoabReservationToml, ScenarioToml};
use placesim_core::{
    Acl, AclEntry, AclModifier, Affinity, Allocation, Cluster, Credential, HostId,
    ReservationAccess, Sharing, SimTime, SiteReservation, VnodeId,
};
use std::sync::Arc;
use toml::Spanned;

const DAY_S: u64 = 86_400;
const WEEK_S: u64 = 7 * DAY_S;
/// Moab's weekday names, day 0 = Sunday.
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// The Moab reservations of a scenario: every occurrence, and each reservation's host list's
/// vnodes by name (what RESERVATION node sets are built from).
pub(super) struct MoabReservations {
    pub(super) occurrences: Vec<SiteReservation>,
    pub(super) hosts: Vec<(String, Vec<VnodeId>)>,
}

/// Where t = 0 falls in the local week: its weekday (day 0 = Sunday) and time of day.
#[derive(Clone, Copy)]
struct LocalClock {
    day0: u64,
    time0: u64,
}

impl LocalClock {
    /// Seconds from the Sunday midnight before (or at) t = 0 to t = 0.
    fn since_sunday_s(self) -> u64 {
        self.day0 * DAY_S + self.time0
    }
}

/// How a standing reservation recurs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Period {
    Day,
    Week,
    Infinity,
}

impl Cx<'_> {
    /// Reads `[[moab.reservation]]`: names unique (among `[[reservation]]`'s too), host
    /// lists of known hosts, an administrative window (`start` with `end` or `duration`) or a
    /// standing one (`period`, `days`, `starttime`, `endtime`, `depth`), and the ACL lists.
    pub(super) fn moab_reservations(
        &self,
        raw: &ScenarioToml,
        cluster: &Cluster,
        moab_placement: bool,
    ) -> Result<MoabReservations, ScenarioError> {
        let list = &raw.moab.reservation;
        if let Some(first) = list.first()
            && !moab_placement
        {
            return Err(self.at(
                &first.name,
                "moab.reservation",
                "Moab's reservations go with Moab's placement (run.placement = \"moab\"); \
                 PBS's are [[reservation]]"
                    .to_owned(),
            ));
        }
        let day0 = match &raw.moab.day0 {
            None => 0,
            Some(d) => weekday(d.get_ref())
                .ok_or_else(|| self.at(d, "moab.day0", weekday_expected(d.get_ref())))?,
        };
        let time0 = match &raw.moab.time0 {
            None => 0,
            Some(t) => placesim_request::parse_duration(t.get_ref())
                .filter(|&s| s < DAY_S)
                .ok_or_else(|| {
                    self.at(
                        t,
                        "moab.time0",
                        format!(
                            "`{}`: expected the local time of day at t = 0, HH:MM:SS before 24:00:00",
                            t.get_ref()
                        ),
                    )
                })?,
        };
        let clock0 = LocalClock { day0, time0 };
        let mut made = MoabReservations {
            occurrences: Vec::new(),
            hosts: Vec::new(),
        };
        for r in list {
            let name = r.name.get_ref();
            if name.is_empty() {
                return Err(self.at(
                    &r.name,
                    "moab.reservation.name",
                    "expected a name".to_owned(),
                ));
            }
            let twice = made.hosts.iter().any(|(n, _)| n == name)
                || raw.reservation.iter().any(|p| p.name.get_ref() == name);
            if twice {
                return Err(self.at(
                    &r.name,
                    "moab.reservation.name",
                    format!("reservation `{name}` is given twice"),
                ));
            }
            // One allocation for every window: a weekday reservation makes hundreds.
            let allocation = Arc::new(self.moab_hostlist(r, cluster)?);
            let acl = Arc::new(self.acl(r, raw)?);
            for (start, end, known_from) in self.moab_windows(r, clock0)? {
                made.occurrences.push(SiteReservation {
                    name: Arc::from(name.as_str()),
                    start: SimTime(start),
                    end: SimTime(end),
                    allocation: allocation.clone(),
                    queue: None,
                    access: ReservationAccess::Acl {
                        acl: acl.clone(),
                        known_from: SimTime(known_from),
                    },
                });
            }
            made.hosts
                .push((name.clone(), allocation.vnodes().collect()));
        }
        Ok(made)
    }

    /// The vnodes of a reservation's HOSTLIST, whole: every vnode of each host with all it has.
    fn moab_hostlist(
        &self,
        r: &MoabReservationToml,
        cluster: &Cluster,
    ) -> Result<Allocation, ScenarioError> {
        let key = "moab.reservation.hostlist";
        let hosts = &r.hostlist;
        if hosts.get_ref().is_empty() {
            return Err(self.at(hosts, key, "expected at least one host".to_owned()));
        }
        // Held by no one: the vnodes are what it is on (the jobs it blocks are kept off
        // them whole, by the discipline).
        let mut allocation = Allocation::new(Sharing::Shared);
        allocation.label = Some(Arc::from(r.name.get_ref().as_str()));
        let mut names = Vec::new();
        for entry in hosts.get_ref() {
            // Each host once: more names than the cluster has hosts repeat one or name an
            // unknown one, which the check below finds; a range is never expanded past that.
            let room = (cluster.hosts().len() + 1).saturating_sub(names.len());
            expand_hosts(entry, room, &mut names)
                .map_err(|why| self.at(hosts, key, format!("`{entry}`: {why}")))?;
        }
        for host in &names {
            let h = cluster
                .hosts()
                .iter()
                .position(|n| n == host)
                .ok_or_else(|| self.at(hosts, key, format!("unknown host `{host}`")))?;
            for &v in cluster.host_vnodes(HostId::from_index(h)) {
                if allocation.holds(v) {
                    return Err(self.at(hosts, key, format!("host `{host}` is given twice")));
                }
                allocation.push(v, cluster.capacity(v));
            }
        }
        Ok(allocation)
    }

    /// A reservation's windows, each `(start, end, known_from)` in seconds after t = 0: one
    /// for an administrative reservation (known from the start of the run); for a standing
    /// one, one per active period up to the horizon, each known from the period DEPTH − 1
    /// before its own (Moab creates them DEPTH periods ahead, §5.1), the current period's
    /// starting no earlier than t = 0.
    fn moab_windows(
        &self,
        r: &MoabReservationToml,
        clock0: LocalClock,
    ) -> Result<Vec<(u64, u64, u64)>, ScenarioError> {
        let key = "moab.reservation";
        let standing_keys = [
            r.days.as_ref().map(|d| d.span()),
            r.starttime.as_ref().map(|s| s.span()),
            r.endtime.as_ref().map(|s| s.span()),
            r.depth.as_ref().map(|d| d.span()),
        ];
        let Some(period_text) = &r.period else {
            let Some(start) = &r.start else {
                return Err(self.at(
                    &r.name,
                    key,
                    "expected `start` (an administrative reservation) or `period` (a standing \
                     one)"
                        .to_owned(),
                ));
            };
            if let Some(span) = standing_keys.into_iter().flatten().next() {
                return Err(self.error(
                    span,
                    Some(key),
                    "`days`, `starttime`, `endtime` and `depth` go with `period`".to_owned(),
                ));
            }
            let (start, end) =
                self.window(key, &r.name, start, r.end.as_ref(), r.duration.as_ref())?;
            return Ok(vec![(start, end, 0)]);
        };
        if let Some(extra) = r.start.as_ref().or(r.end.as_ref()).or(r.duration.as_ref()) {
            return Err(self.at(
                extra,
                key,
                "`start`, `end` and `duration` make an administrative reservation; a standing \
                 one (`period`) takes `starttime` and `endtime`"
                    .to_owned(),
            ));
        }
        let period = match period_text.get_ref().to_ascii_uppercase().as_str() {
            "DAY" => Period::Day,
            "WEEK" => Period::Week,
            "INFINITY" => Period::Infinity,
            other => {
                return Err(self.at(
                    period_text,
                    "moab.reservation.period",
                    format!("PERIOD={other}: expected DAY, WEEK or INFINITY"),
                ));
            }
        };
        if period == Period::Infinity {
            if let Some(span) = standing_keys.into_iter().flatten().next() {
                return Err(self.error(
                    span,
                    Some(key),
                    "PERIOD=INFINITY reserves from t = 0 on: `days`, `starttime`, `endtime` \
                     and `depth` do not go with it"
                        .to_owned(),
                ));
            }
            return Ok(vec![(0, RESERVATION_HORIZON_S, 0)]);
        }
        let length = if period == Period::Day { DAY_S } else { WEEK_S };
        let offset = |v: Option<&Spanned<String>>, name: &str, default: u64| {
            let Some(v) = v else {
                return Ok(default);
            };
            let field = format!("moab.reservation.{name}");
            placesim_request::parse_duration(v.get_ref())
                .filter(|&s| s <= length)
                .ok_or_else(|| {
                    self.at(
                        v,
                        &field,
                        format!(
                            "`{}`: expected an offset in the period, {} (at most {length} s)",
                            v.get_ref(),
                            if period == Period::Day {
                                "HH:MM:SS"
                            } else {
                                "DD:HH:MM:SS, day 0 = Sunday"
                            }
                        ),
                    )
                })
        };
        let from = offset(r.starttime.as_ref(), "starttime", 0)?;
        let until = offset(r.endtime.as_ref(), "endtime", length)?;
        if until <= from {
            let at = r
                .endtime
                .as_ref()
                .map_or_else(|| period_text.span(), |e| e.span());
            return Err(self.error(
                at,
                Some("moab.reservation.endtime"),
                format!(
                    "expected ENDTIME after STARTTIME ({from} s into the period), found {until} s"
                ),
            ));
        }
        let days: [bool; 7] = match &r.days {
            None => [true; 7],
            Some(_) if period == Period::Week => {
                let span = r.days.as_ref().map(|d| d.span()).unwrap_or_default();
                return Err(self.error(
                    span,
                    Some("moab.reservation.days"),
                    "DAYS goes with PERIOD=DAY".to_owned(),
                ));
            }
            Some(list) => {
                let mut days = [false; 7];
                for d in list.get_ref() {
                    if d.eq_ignore_ascii_case("ALL") {
                        days = [true; 7];
                        continue;
                    }
                    let w = weekday(d).ok_or_else(|| {
                        self.at(list, "moab.reservation.days", weekday_expected(d))
                    })?;
                    days[w as usize] = true;
                }
                days
            }
        };
        let depth = match &r.depth {
            None => 2,
            Some(d) if *d.get_ref() == 0 => {
                return Err(self.at(
                    d,
                    "moab.reservation.depth",
                    "expected DEPTH of 1 or more periods".to_owned(),
                ));
            }
            Some(d) => u64::from(*d.get_ref()),
        };
        // Local time counts from the Sunday midnight before t = 0, which is `first` seconds
        // after it: periods start there, the first one the period holding t = 0.
        let first = clock0.since_sunday_s();
        let mut windows = Vec::new();
        for k in (first / length).. {
            let period_start = k * length;
            if period_start >= RESERVATION_HORIZON_S + first {
                break;
            }
            if period == Period::Day && !days[(k % 7) as usize] {
                continue;
            }
            let end = (period_start + until).saturating_sub(first);
            if end == 0 {
                continue;
            }
            let start = (period_start + from).saturating_sub(first);
            let known_from = (k + 1).saturating_sub(depth) * length;
            windows.push((start, end, known_from.saturating_sub(first)));
        }
        Ok(windows)
    }

    /// A reservation's ACL: its USERLIST, GROUPLIST, ACCOUNTLIST and CLASSLIST entries in the
    /// order the file gives them (the last match gives the affinity, as the lines of
    /// moab.cfg would).
    fn acl(&self, r: &MoabReservationToml, raw: &ScenarioToml) -> Result<Acl, ScenarioError> {
        let lists = [
            (&r.userlist, "userlist", "USER"),
            (&r.grouplist, "grouplist", "GROUP"),
            (&r.accountlist, "accountlist", "ACCT"),
            (&r.classlist, "classlist", "CLASS"),
        ];
        let mut entries: Vec<(usize, AclEntry, String)> = Vec::new();
        for (list, name, kind) in lists {
            let field = format!("moab.reservation.{name}");
            for e in list {
                let text = e.get_ref();
                let bad = |why: String| self.at(e, &field, format!("`{text}`: {why}"));
                let (who, modifier, affinity) = acl_entry(text).map_err(bad)?;
                let number = || {
                    who.parse::<u32>().map_err(|_| {
                        bad(format!(
                            "expected a {} number, as the workload numbers them",
                            kind.to_ascii_lowercase()
                        ))
                    })
                };
                let credential = match kind {
                    "USER" => Credential::User(number()?),
                    "GROUP" => Credential::Group(number()?),
                    "ACCT" => Credential::Account(Arc::from(who)),
                    _ => {
                        let class = raw.moab.class.iter().position(|c| c.name == who);
                        Credential::Class(class.ok_or_else(|| {
                            bad(format!(
                                "unknown class `{who}`: expected a [[moab.class]] name"
                            ))
                        })? as u32)
                    }
                };
                entries.push((
                    e.span().start,
                    AclEntry {
                        credential,
                        modifier,
                        affinity,
                    },
                    format!("{kind}=={text}"),
                ));
            }
        }
        entries.sort_by_key(|(at, _, _)| *at);
        let text: Vec<&str> = entries.iter().map(|(_, _, t)| t.as_str()).collect();
        Ok(Acl {
            text: Arc::from(text.join(",")),
            entries: entries.into_iter().map(|(_, e, _)| e).collect(),
        })
    }
}

/// An ACL entry `name[modifier]`: the name, and what its last character says (MACL.c parses
/// only that one): `!` not, `*` required, `+` `=` `-` the affinity (positive by default).
fn acl_entry(text: &str) -> Result<(&str, AclModifier, Affinity), String> {
    let (modifier, affinity) = match text.chars().last() {
        Some('!') => (AclModifier::Not, Affinity::Positive),
        Some('*') => (AclModifier::Required, Affinity::Positive),
        Some('+') => (AclModifier::Plain, Affinity::Positive),
        Some('=') => (AclModifier::Plain, Affinity::Neutral),
        Some('-') => (AclModifier::Plain, Affinity::Negative),
        Some('^') => {
            return Err(
                "the XOR modifier `^` is in Moab's code only, not its documentation: \
                        not modelled"
                    .to_owned(),
            );
        }
        _ if text.is_empty() => return Err("expected a name".to_owned()),
        _ => return Ok((text, AclModifier::Plain, Affinity::Positive)),
    };
    // Every modifier is one ASCII character.
    let who = &text[..text.len() - 1];
    if who.is_empty() {
        return Err("expected a name before the modifier".to_owned());
    }
    Ok((who, modifier, affinity))
}

/// Appends the hosts `entry` names: a host, or a numbered range `prefix[first-last]suffix`
/// (`n[1-64]` is n1 to n64; `n[01-16]` keeps the width, n01 to n16), several ranges inside
/// the brackets separated by `,` (`n[1-4,9]`), as Slurm and pbsnodes-style tools write them;
/// at most `room` names in all.
fn expand_hosts(entry: &str, room: usize, out: &mut Vec<String>) -> Result<(), String> {
    let Some((prefix, rest)) = entry.split_once('[') else {
        out.push(entry.to_owned());
        return Ok(());
    };
    let (ranges, suffix) = rest
        .split_once(']')
        .ok_or_else(|| "expected `]` after the range".to_owned())?;
    let limit = out.len().saturating_add(room);
    for range in ranges.split(',') {
        let (first, last) = range.split_once('-').unwrap_or((range, range));
        let bad = || format!("expected a range of numbers `first-last`, found `{range}`");
        let from: u64 = first.parse().map_err(|_| bad())?;
        let to: u64 = last.parse().map_err(|_| bad())?;
        if to < from || to - from >= placesim_core::MAX_VNODES as u64 {
            return Err(bad());
        }
        let width = if first.starts_with('0') {
            first.len()
        } else {
            0
        };
        out.extend(
            (from..=to)
                .take(limit.saturating_sub(out.len()))
                .map(|n| format!("{prefix}{n:0width$}{suffix}")),
        );
    }
    Ok(())
}

/// A weekday's number, day 0 = Sunday, from its three-letter name in any case.
fn weekday(name: &str) -> Option<u64> {
    WEEKDAYS
        .iter()
        .position(|d| d.eq_ignore_ascii_case(name))
        .map(|d| d as u64)
}

fn weekday_expected(found: &str) -> String {
    format!("expected a weekday, SUN, MON, TUE, WED, THU, FRI or SAT, found `{found}`")
}
