//! The PBS site files, each read into plain records with the line it came from
//! (site-inputs.md §4): `pbsnodes -av` as text and as JSON, `qmgr` output (`print server`,
//! `print node`, `print resource`, `list sched`), `sched_config` and `resourcedef`.
//! Nothing here interprets a value; `site` does.

use crate::ImportError;
use std::path::Path;

/// One attribute as a file gives it: `key` (`resources_available.ncpus`, `queue`), its values
/// (more than one only where qmgr accumulates `+=`), and the line it was set on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attr {
    /// The attribute's name, with its resource after a dot.
    pub key: String,
    /// Its values, in order, quotes taken off.
    pub values: Vec<String>,
    /// The 1-based line of its (first) setting; 0 when the format has no lines (JSON).
    pub line: usize,
}

/// A named object and its attributes in written order: a vnode, a queue, a scheduler.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Object {
    /// Its name.
    pub name: String,
    /// The 1-based line naming it (0 for JSON).
    pub line: usize,
    /// Its attributes.
    pub attrs: Vec<Attr>,
}

impl Object {
    /// The attribute `key`, if set.
    pub fn get(&self, key: &str) -> Option<&Attr> {
        self.attrs.iter().find(|a| a.key == key)
    }

    /// `key`'s first value, if set.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.get(key)
            .and_then(|a| a.values.first())
            .map(String::as_str)
    }

    /// Sets `key` to `value` (`accumulate`: add it to the values already set, qmgr's `+=`).
    fn set(&mut self, key: &str, value: String, line: usize, accumulate: bool) {
        match self.attrs.iter_mut().find(|a| a.key == key) {
            Some(a) if accumulate => a.values.push(value),
            Some(a) => {
                a.values = vec![value];
                a.line = line;
            }
            None => self.attrs.push(Attr {
                key: key.to_owned(),
                values: vec![value],
                line,
            }),
        }
    }
}

/// A resource definition: `resourcedef`'s `name type=T flag=F` or qmgr's `create resource`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceLine {
    /// Its name.
    pub name: String,
    /// Its type as written: boolean, long, string, size, float, string_array.
    pub kind: String,
    /// Its flags (`h`, `nh`, `fh`, `q`, ...), empty when none.
    pub flags: String,
    /// The 1-based line.
    pub line: usize,
}

/// Takes one level of matching quotes off `value`.
fn unquote(value: &str) -> &str {
    let v = value.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

/// An error at `line` of `path`.
pub(crate) fn at(path: &Path, line: usize, message: impl Into<String>) -> ImportError {
    ImportError::Parse {
        path: path.to_owned(),
        line,
        message: message.into(),
    }
}

/// Reads `pbsnodes -av` text (a vnode-name line, attribute lines indented, a blank line) or
/// `pbsnodes -av -F json`, told apart by the first character that is not white space.
pub fn parse_pbsnodes(path: &Path, text: &str) -> Result<Vec<Object>, ImportError> {
    if text.trim_start().starts_with('{') {
        parse_pbsnodes_json(path, text)
    } else {
        parse_pbsnodes_text(path, text)
    }
}

fn parse_pbsnodes_text(path: &Path, text: &str) -> Result<Vec<Object>, ImportError> {
    parse_blocks(
        path,
        text,
        |raw| (!raw.starts_with([' ', '\t'])).then(|| raw.trim()),
        "a vnode name at the start of a line before its indented attributes",
        false,
    )
}

/// Objects written as a header line and then their `<attr> = <value>` lines: `header` gives
/// a line's object name when it starts one; with `continued`, a line starting with a tab
/// continues the value before it (qmgr wraps values past 80 columns).
fn parse_blocks<'t>(
    path: &Path,
    text: &'t str,
    header: impl Fn(&'t str) -> Option<&'t str>,
    expected_header: &str,
    continued: bool,
) -> Result<Vec<Object>, ImportError> {
    let mut objects: Vec<Object> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        if let Some(name) = header(raw) {
            objects.push(Object {
                name: name.to_owned(),
                line,
                attrs: Vec::new(),
            });
            continue;
        }
        let Some(object) = objects.last_mut() else {
            return Err(at(path, line, format!("expected {expected_header}")));
        };
        if continued && raw.starts_with('\t') {
            if let Some(value) = object.attrs.last_mut().and_then(|a| a.values.last_mut()) {
                value.push_str(raw.trim());
                continue;
            }
        }
        let Some((key, value)) = raw.split_once('=') else {
            return Err(at(
                path,
                line,
                format!(
                    "expected `<attribute> = <value>` under `{}`, found `{}`",
                    object.name,
                    raw.trim()
                ),
            ));
        };
        object.set(key.trim(), unquote(value).to_owned(), line, false);
    }
    Ok(objects)
}

/// Reads `pbs_rstat -f`: a `Resv ID: <id>` line per reservation, then its `<attr> = <value>`
/// lines (a long value continued on tab-indented lines), then a blank line (site-inputs.md
/// §4.6).
pub fn parse_rstat(path: &Path, text: &str) -> Result<Vec<Object>, ImportError> {
    parse_blocks(
        path,
        text,
        |raw| raw.strip_prefix("Resv ID:").map(str::trim),
        "a `Resv ID: <id>` line before its attributes",
        true,
    )
}

/// Seconds since 1970-01-01 00:00:00 of a wall-clock date and time, read as if it were UTC
/// (Howard Hinnant's `days_from_civil`): what a local time less its UTC offset turns into
/// an epoch second.
pub(crate) fn wall_clock_seconds(year: i64, month: i64, day: i64, secs_of_day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe - 719_468) * 86_400 + secs_of_day
}

/// The years a site's times are read in: what a calendar date can hold without overflow, and
/// more than any log spans.
const YEARS: std::ops::RangeInclusive<i64> = 1970..=9999;

/// `HH:MM:SS` as seconds of the day.
fn time_of_day(text: &str) -> Option<i64> {
    let mut parts = text.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m, s) = (parts.next()??, parts.next()??, parts.next()??);
    // Computed only once the parts are in range: an hour of 10^17 would overflow.
    ((0..24).contains(&h) && (0..60).contains(&m) && (0..61).contains(&s) && parts.next().is_none())
        .then(|| h * 3600 + m * 60 + s)
}

/// An accounting line's stamp, `MM/DD/YYYY HH:MM:SS` (local time), read as wall-clock
/// seconds.
pub(crate) fn parse_stamp(stamp: &str) -> Option<i64> {
    let (date, time) = stamp.trim().split_once(' ')?;
    let mut d = date.split('/').map(|p| p.parse::<i64>().ok());
    let (month, day, year) = (d.next()??, d.next()??, d.next()??);
    let valid = (1..=12).contains(&month) && (1..=31).contains(&day) && YEARS.contains(&year);
    valid
        .then(|| {
            Some(wall_clock_seconds(
                year,
                month,
                day,
                time_of_day(time.trim())?,
            ))
        })
        .flatten()
}

/// `pbs_rstat`'s time, `%a %b %d %H:%M:%S %Y` (`Wed Nov 12 12:00:00 2025`, local time), read
/// as wall-clock seconds.
pub(crate) fn parse_rstat_time(text: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let mut words = text.split_whitespace();
    let (_weekday, month, day, time, year) = (
        words.next()?,
        words.next()?,
        words.next()?,
        words.next()?,
        words.next()?,
    );
    let month = MONTHS.iter().position(|m| *m == month)? as i64 + 1;
    let day: i64 = day.parse().ok().filter(|d| (1..=31).contains(d))?;
    let year: i64 = year.parse().ok().filter(|y| YEARS.contains(y))?;
    words
        .next()
        .is_none()
        .then(|| Some(wall_clock_seconds(year, month, day, time_of_day(time)?)))
        .flatten()
}

fn parse_pbsnodes_json(path: &Path, text: &str) -> Result<Vec<Object>, ImportError> {
    let root: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        at(
            path,
            e.line(),
            format!("column {}: not pbsnodes -F json output: {e}", e.column()),
        )
    })?;
    let Some(nodes) = root.get("nodes").and_then(serde_json::Value::as_object) else {
        return Err(at(
            path,
            1,
            "expected a JSON object with a `nodes` object, as `pbsnodes -av -F json` writes",
        ));
    };
    let scalar = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(if *b { "True" } else { "False" }.to_owned()),
        _ => None,
    };
    let mut out = Vec::new();
    for (name, node) in nodes {
        let Some(fields) = node.as_object() else {
            return Err(at(
                path,
                0,
                format!("vnode `{name}`: expected an object of attributes"),
            ));
        };
        let mut object = Object {
            name: name.clone(),
            line: 0,
            attrs: Vec::new(),
        };
        for (key, value) in fields {
            match value {
                serde_json::Value::Object(inner) => {
                    for (res, v) in inner {
                        let Some(v) = scalar(v) else {
                            return Err(at(
                                path,
                                0,
                                format!(
                                    "vnode `{name}`: `{key}.{res}` is not a string, number or boolean"
                                ),
                            ));
                        };
                        object.set(&format!("{key}.{res}"), v, 0, false);
                    }
                }
                // `jobs` and other lists are not read.
                serde_json::Value::Array(_) | serde_json::Value::Null => {}
                v => {
                    if let Some(v) = scalar(v) {
                        object.set(key, v, 0, false);
                    }
                }
            }
        }
        out.push(object);
    }
    Ok(out)
}

/// What `qmgr -c 'print server'` (or `print node`, `print resource`, `print sched`) prints:
/// re-creatable commands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Qmgr {
    /// `set server` attributes.
    pub server: Object,
    /// Queues, in order of `create queue`.
    pub queues: Vec<Object>,
    /// Nodes, in order of `create node`.
    pub nodes: Vec<Object>,
    /// Schedulers (`create sched`, `set sched`; the default one written without its name).
    pub scheds: Vec<Object>,
    /// `create resource` lines.
    pub resources: Vec<ResourceLine>,
}

/// Finds or makes the object named `name` in `objects`.
fn object<'a>(objects: &'a mut Vec<Object>, name: &str, line: usize) -> &'a mut Object {
    let i = match objects.iter().position(|o| o.name == name) {
        Some(i) => i,
        None => {
            objects.push(Object {
                name: name.to_owned(),
                line,
                attrs: Vec::new(),
            });
            objects.len() - 1
        }
    };
    &mut objects[i]
}

/// Reads qmgr's `print` output: `create <object> <name> [...]` and `set <object> [<name>]
/// <attr> = <value>` (`+=` adds a value), `#` comments.
pub fn parse_qmgr(path: &Path, text: &str) -> Result<Qmgr, ImportError> {
    let mut q = Qmgr {
        server: Object {
            name: "server".to_owned(),
            ..Object::default()
        },
        ..Qmgr::default()
    };
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut words = l.split_whitespace();
        let (Some(verb), Some(kind)) = (words.next(), words.next()) else {
            return Err(at(
                path,
                line,
                format!("expected a qmgr command (`create` or `set` and an object), found `{l}`"),
            ));
        };
        match verb {
            "create" => {
                let Some(name) = words.next() else {
                    return Err(at(
                        path,
                        line,
                        format!("expected a name after `create {kind}`"),
                    ));
                };
                match kind {
                    "queue" => {
                        object(&mut q.queues, name, line);
                    }
                    "node" => {
                        object(&mut q.nodes, name, line);
                    }
                    "sched" => {
                        object(&mut q.scheds, name, line);
                    }
                    "resource" => {
                        // `create resource foo type = string, flag = h`
                        let rest: String = words.collect::<Vec<_>>().join(" ");
                        let mut kind_of = None;
                        let mut flags = String::new();
                        for part in rest.split(',') {
                            let Some((k, v)) = part.split_once('=') else {
                                continue;
                            };
                            match k.trim() {
                                "type" => kind_of = Some(unquote(v).to_owned()),
                                "flag" => flags = unquote(v).to_owned(),
                                _ => {}
                            }
                        }
                        let Some(kind) = kind_of else {
                            return Err(at(
                                path,
                                line,
                                format!("resource `{name}`: expected `type = <type>`"),
                            ));
                        };
                        q.resources.push(ResourceLine {
                            name: name.to_owned(),
                            kind,
                            flags,
                            line,
                        });
                    }
                    other => {
                        return Err(at(
                            path,
                            line,
                            format!(
                                "unknown object `{other}`: expected queue, node, sched or resource"
                            ),
                        ));
                    }
                }
            }
            "set" => {
                let rest = l["set".len()..].trim_start()[kind.len()..].trim_start();
                let Some(eq) = rest.find('=') else {
                    return Err(at(
                        path,
                        line,
                        format!("expected `set {kind} [<name>] <attribute> = <value>`"),
                    ));
                };
                let accumulate = rest[..eq].ends_with('+');
                let lhs = rest[..eq].trim_end_matches('+').trim();
                let value = unquote(&rest[eq + 1..]).to_owned();
                let lhs_words: Vec<&str> = lhs.split_whitespace().collect();
                let (name, attr) = match lhs_words.as_slice() {
                    [attr] => (None, *attr),
                    [name, attr] => (Some(*name), *attr),
                    _ => {
                        return Err(at(
                            path,
                            line,
                            format!(
                                "expected `set {kind} [<name>] <attribute> = <value>`, found `{l}`"
                            ),
                        ));
                    }
                };
                let target = match (kind, name) {
                    ("server", _) => &mut q.server,
                    ("queue", Some(n)) => object(&mut q.queues, n, line),
                    ("node", Some(n)) => object(&mut q.nodes, n, line),
                    ("sched", n) => object(&mut q.scheds, n.unwrap_or("default"), line),
                    ("queue" | "node", None) => {
                        return Err(at(
                            path,
                            line,
                            format!("expected the {kind}'s name after `set {kind}`"),
                        ));
                    }
                    (other, _) => {
                        return Err(at(
                            path,
                            line,
                            format!(
                                "unknown object `{other}`: expected server, queue, node or sched"
                            ),
                        ));
                    }
                };
                target.set(attr, value, line, accumulate);
            }
            other => {
                return Err(at(
                    path,
                    line,
                    format!("expected `create` or `set`, found `{other}`"),
                ));
            }
        }
    }
    Ok(q)
}

/// Reads `qmgr -c 'list sched'`: `Sched <name>`, then `    <attr> = <value>` lines, a value
/// longer than 80 columns continued on lines starting with a tab.
pub fn parse_list_sched(path: &Path, text: &str) -> Result<Vec<Object>, ImportError> {
    parse_blocks(
        path,
        text,
        |raw| raw.strip_prefix("Sched ").map(str::trim),
        "`Sched <name>` before the scheduler's attributes",
        true,
    )
}

/// One `sched_config` setting: `<option>: <value> [prime|non_prime|all|none]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedOption {
    /// The option.
    pub name: String,
    /// Its value, quotes taken off.
    pub value: String,
    /// When it applies, lower case: `all` when not written.
    pub when: String,
    /// The 1-based line.
    pub line: usize,
}

/// Reads `sched_priv/sched_config`; `#` starts a comment line.
pub fn parse_sched_config(path: &Path, text: &str) -> Result<Vec<SchedOption>, ImportError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let Some((name, rest)) = l.split_once(':') else {
            return Err(at(
                path,
                line,
                format!("expected `<option>: <value> [prime|non_prime|all|none]`, found `{l}`"),
            ));
        };
        let rest = rest.trim();
        let (value, when) = if let Some(quoted) = rest.strip_prefix('"') {
            let Some(end) = quoted.find('"') else {
                return Err(at(
                    path,
                    line,
                    format!(
                        "option `{}`: a quoted value without its closing `\"`",
                        name.trim()
                    ),
                ));
            };
            (quoted[..end].to_owned(), quoted[end + 1..].trim())
        } else {
            match rest.rsplit_once(char::is_whitespace) {
                Some((v, w))
                    if matches!(
                        w.to_ascii_lowercase().as_str(),
                        "prime" | "non_prime" | "all" | "none"
                    ) =>
                {
                    (v.trim().to_owned(), w)
                }
                _ => (rest.to_owned(), ""),
            }
        };
        let when = if when.is_empty() {
            "all".to_owned()
        } else {
            when.to_ascii_lowercase()
        };
        if !matches!(when.as_str(), "prime" | "non_prime" | "all" | "none") {
            return Err(at(
                path,
                line,
                format!(
                    "option `{}`: expected prime, non_prime, all or none after the value, found `{when}`",
                    name.trim()
                ),
            ));
        }
        out.push(SchedOption {
            name: name.trim().to_owned(),
            value,
            when,
            line,
        });
    }
    Ok(out)
}

/// Reads `server_priv/resourcedef`: `<name> type=<type>[ flag=<flags>]` per line.
pub fn parse_resourcedef(path: &Path, text: &str) -> Result<Vec<ResourceLine>, ImportError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut words = l.split_whitespace();
        let Some(name) = words.next() else { continue };
        let mut kind = None;
        let mut flags = String::new();
        for w in words {
            match w.split_once('=') {
                Some(("type", t)) => kind = Some(t.to_owned()),
                Some(("flag", f)) => flags = f.to_owned(),
                _ => {
                    return Err(at(
                        path,
                        line,
                        format!(
                            "resource `{name}`: expected `type=<type>` or `flag=<flags>`, found `{w}`"
                        ),
                    ));
                }
            }
        }
        let Some(kind) = kind else {
            return Err(at(
                path,
                line,
                format!("resource `{name}`: expected `type=<type>`"),
            ));
        };
        out.push(ResourceLine {
            name: name.to_owned(),
            kind,
            flags,
            line,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("f")
    }

    /// An hour too large for any day is no time (found by the `pbs_import` fuzz target: it
    /// overflowed before the range was checked).
    #[test]
    fn a_huge_hour_is_no_time() {
        assert_eq!(
            parse_rstat_time("Thu Jan 01 22222222222222205:00:00 2026"),
            None
        );
        assert_eq!(time_of_day("23:59:60"), Some(86_400));
        assert_eq!(parse_stamp("01/01/2026 99999999999999999:00:00"), None);
    }

    #[test]
    fn pbsnodes_text_and_json_give_the_same_attributes() {
        let text = "n1\n     Mom = n1\n     state = free\n     resources_available.ncpus = 4\n     resources_available.mem = 8gb\n\nn2\n     state = down,offline\n";
        let nodes = parse_pbsnodes(p(), text).unwrap();
        assert_eq!(nodes.len(), 2);
        assert_eq!(nodes[0].value("resources_available.ncpus"), Some("4"));
        assert_eq!(nodes[1].value("state"), Some("down,offline"));
        assert_eq!(nodes[1].line, 7);
        let json = r#"{"timestamp": 1, "nodes": {"n1": {"Mom": "n1", "state": "free", "jobs": ["1.s"],
            "resources_available": {"ncpus": 4, "mem": "8gb", "bigmem": true}}}}"#;
        let nodes = parse_pbsnodes(p(), json).unwrap();
        assert_eq!(nodes[0].value("resources_available.ncpus"), Some("4"));
        assert_eq!(nodes[0].value("resources_available.bigmem"), Some("True"));
        assert_eq!(nodes[0].get("jobs"), None);
    }

    #[test]
    fn qmgr_accumulates_plus_equals_and_knows_the_default_sched() {
        let text = "#\n# Create queues and set their attributes.\ncreate queue workq\nset queue workq queue_type = Execution\nset server node_group_key = switch\nset server node_group_key += rack\nset server job_sort_formula = \"ncpus * walltime\"\nset sched do_not_span_psets = True\ncreate resource switch type = string, flag = h\n";
        let q = parse_qmgr(p(), text).unwrap();
        assert_eq!(q.queues[0].value("queue_type"), Some("Execution"));
        assert_eq!(
            q.server.get("node_group_key").map(|a| a.values.clone()),
            Some(vec!["switch".to_owned(), "rack".to_owned()])
        );
        assert_eq!(q.server.value("job_sort_formula"), Some("ncpus * walltime"));
        assert_eq!(q.scheds[0].name, "default");
        assert_eq!(q.resources[0].kind, "string");
        assert_eq!(q.resources[0].flags, "h");
        let e = parse_qmgr(p(), "set queue = 3\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f:1: expected `set queue [<name>] <attribute> = <value>`, found `set queue = 3`"
        );
    }

    #[test]
    fn sched_config_reads_quoted_values_and_prime_options() {
        let text = "round_robin: False\tall\nby_queue: True\t\tprime\nnode_sort_key: \"sort_priority HIGH\"\tALL\nfairshare_decay_time: 24:00:00\n";
        let o = parse_sched_config(p(), text).unwrap();
        assert_eq!((o[0].value.as_str(), o[0].when.as_str()), ("False", "all"));
        assert_eq!((o[1].value.as_str(), o[1].when.as_str()), ("True", "prime"));
        assert_eq!(o[2].value, "sort_priority HIGH");
        assert_eq!(
            (o[3].name.as_str(), o[3].value.as_str()),
            ("fairshare_decay_time", "24:00:00")
        );
        let e = parse_sched_config(p(), "strict_ordering True\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f:1: expected `<option>: <value> [prime|non_prime|all|none]`, found `strict_ordering True`"
        );
    }

    #[test]
    fn list_sched_joins_continued_values() {
        let text = "Sched default\n    sched_host = s1\n    sched_log = /var/spool/pbs/sched_\n\tlogs\n    do_not_span_psets = True\n";
        let s = parse_list_sched(p(), text).unwrap();
        assert_eq!(s[0].value("sched_log"), Some("/var/spool/pbs/sched_logs"));
        assert_eq!(s[0].value("do_not_span_psets"), Some("True"));
    }

    #[test]
    fn resourcedef_lines() {
        let r = parse_resourcedef(
            p(),
            "switch type=string flag=h\nscratch type=size flag=nh\n",
        )
        .unwrap();
        assert_eq!(
            (r[1].name.as_str(), r[1].kind.as_str(), r[1].flags.as_str()),
            ("scratch", "size", "nh")
        );
        let e = parse_resourcedef(p(), "switch flag=h\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f:1: resource `switch`: expected `type=<type>`"
        );
    }
}

/// One `moab.cfg` (or `maui.cfg`) line: `PARAM value`, `PARAM[index] value` or
/// `XCFG[name] ATTR=value ...` (site-inputs.md §7.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoabLine {
    /// The parameter, as written.
    pub param: String,
    /// What is inside its brackets, if any.
    pub index: Option<String>,
    /// The rest of the line, trimmed.
    pub value: String,
    /// The 1-based line.
    pub line: usize,
}

impl MoabLine {
    /// The line as written, for the report.
    pub fn text(&self) -> String {
        match &self.index {
            Some(i) => format!("{}[{i}] {}", self.param, self.value),
            None => format!("{} {}", self.param, self.value),
        }
    }

    /// An `XCFG[name]` line's name, or the error that it has none.
    pub fn indexed_name(&self, path: &Path) -> Result<String, ImportError> {
        self.index.clone().ok_or_else(|| {
            at(
                path,
                self.line,
                format!(
                    "{}: expected {}[<name>] <ATTR>=<value> ...",
                    self.param, self.param
                ),
            )
        })
    }

    /// The error for `XCFG[name]`'s `attr=value` that does not read: what was `expected`.
    pub fn bad_attr(
        &self,
        path: &Path,
        name: &str,
        (attr, value): (&str, &str),
        expected: &str,
    ) -> ImportError {
        at(
            path,
            self.line,
            format!(
                "{}[{name}] {attr}: `{value}`: expected {expected}",
                self.param
            ),
        )
    }

    /// An `XCFG[name]` line's `ATTR=value` pairs (`+=` read as `=`).
    pub fn attrs(&self, path: &Path) -> Result<Vec<(String, String)>, ImportError> {
        self.value
            .split_whitespace()
            .map(|pair| {
                let (attr, value) = pair.split_once('=').ok_or_else(|| {
                    at(
                        path,
                        self.line,
                        format!("{}: `{pair}`: expected <ATTR>=<value>", self.param),
                    )
                })?;
                Ok((
                    attr.trim_end_matches('+').to_owned(),
                    unquote(value).to_owned(),
                ))
            })
            .collect()
    }
}

/// Reads `moab.cfg`: one parameter a line, `#` starting a comment.
pub fn parse_moab_cfg(path: &Path, text: &str) -> Result<Vec<MoabLine>, ImportError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let (head, value) = content
            .split_once(char::is_whitespace)
            .unwrap_or((content, ""));
        let (param, index) = match head.split_once('[') {
            Some((param, rest)) => {
                let Some(index) = rest.strip_suffix(']') else {
                    return Err(at(
                        path,
                        line,
                        format!("`{head}`: expected PARAM[index] with a closing `]`"),
                    ));
                };
                (param, Some(index.to_owned()))
            }
            None => (head, None),
        };
        if param.is_empty()
            || !param
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return Err(at(
                path,
                line,
                format!("`{head}`: expected a parameter name such as NODESETPOLICY"),
            ));
        }
        out.push(MoabLine {
            param: param.to_owned(),
            index,
            value: value.trim().to_owned(),
            line,
        });
    }
    Ok(out)
}

/// Most nodes a `[a-b]` range in a Torque node name, or the whole list, may stand for: past
/// it is a typo, not a cluster.
const MAX_RANGE: u64 = 1_000_000;

/// Reads a Torque node list, `server_priv/nodes` (one node a line: `name[ attr=value…][
/// property…]`, a `[a-b]` range in a name standing for each number) or `pbsnodes -a` text
/// (told apart by its indented `attr = value` lines), into objects with PBS's names: `np`
/// as `resources_available.ncpus`, `gpus` as `resources_available.ngpus`, the properties
/// as `resources_available.features` (comma-separated) and each as a `True` boolean.
pub fn parse_torque_nodes(path: &Path, text: &str) -> Result<Vec<Object>, ImportError> {
    let pbsnodes = text
        .lines()
        .any(|l| l.starts_with([' ', '\t']) && l.contains('='));
    if pbsnodes {
        let objects = parse_pbsnodes_text(path, text)?;
        return objects
            .into_iter()
            .map(|o| {
                let attrs = o.attrs.iter().map(|a| {
                    let value = a.values.first().cloned().unwrap_or_default();
                    (a.key.as_str(), value, a.line)
                });
                torque_object(path, o.name.clone(), o.line, attrs)
            })
            .collect();
    }
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("").trim();
        let mut words = content.split_whitespace();
        let Some(name) = words.next() else { continue };
        let mut attrs: Vec<(&str, String, usize)> = Vec::new();
        let mut properties: Vec<&str> = Vec::new();
        for w in words {
            match w.split_once('=') {
                Some((k, v)) => attrs.push((k, v.to_owned(), line)),
                None => properties.push(w),
            }
        }
        if !properties.is_empty() {
            attrs.push(("properties", properties.join(","), line));
        }
        // Torque's default: one virtual processor.
        if !attrs.iter().any(|(k, ..)| *k == "np") {
            attrs.push(("np", "1".to_owned(), line));
        }
        for name in expand_range(path, line, name)? {
            out.push(torque_object(path, name, line, attrs.iter().cloned())?);
        }
        if out.len() as u64 > MAX_RANGE {
            return Err(at(
                path,
                line,
                format!("more than {MAX_RANGE} nodes: expected a cluster's node list"),
            ));
        }
    }
    Ok(out)
}

/// A Torque node's attributes under PBS's names.
pub(crate) fn torque_object<'a>(
    path: &Path,
    name: String,
    line: usize,
    attrs: impl Iterator<Item = (&'a str, String, usize)>,
) -> Result<Object, ImportError> {
    let mut o = Object {
        name,
        line,
        attrs: Vec::new(),
    };
    for (key, value, at_line) in attrs {
        match key {
            "np" => o.set("resources_available.ncpus", value, at_line, false),
            "gpus" => o.set("resources_available.ngpus", value, at_line, false),
            "properties" => {
                let props: Vec<&str> = value
                    .split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .collect();
                for p in &props {
                    if !p
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                        || !p.starts_with(|c: char| c.is_ascii_alphabetic())
                    {
                        return Err(at(
                            path,
                            at_line,
                            format!(
                                "node `{}`: property `{p}`: expected a name of letters, digits, `_` and `-`, starting with a letter",
                                o.name
                            ),
                        ));
                    }
                    o.set(
                        &format!("resources_available.{p}"),
                        "True".to_owned(),
                        at_line,
                        false,
                    );
                }
                o.set(
                    "resources_available.features",
                    props.join(","),
                    at_line,
                    false,
                );
            }
            _ => o.set(key, value, at_line, false),
        }
    }
    Ok(o)
}

/// The names a Torque node name stands for: itself, or one per number of its `[a-b]` range,
/// as wide as `a` is written (`n[01-03]`: n01, n02, n03).
fn expand_range(path: &Path, line: usize, name: &str) -> Result<Vec<String>, ImportError> {
    let Some((prefix, rest)) = name.split_once('[') else {
        return Ok(vec![name.to_owned()]);
    };
    let bad = || {
        at(
            path,
            line,
            format!("node `{name}`: expected a range such as n[01-16]"),
        )
    };
    let (range, suffix) = rest.split_once(']').ok_or_else(bad)?;
    let (a, b) = range.split_once('-').ok_or_else(bad)?;
    let (first, last) = (
        a.parse::<u64>().map_err(|_| bad())?,
        b.parse::<u64>().map_err(|_| bad())?,
    );
    if last < first || last - first >= MAX_RANGE {
        return Err(at(
            path,
            line,
            format!(
                "node `{name}`: expected a range from low to high of at most {MAX_RANGE} nodes"
            ),
        ));
    }
    let width = a.len();
    Ok((first..=last)
        .map(|n| format!("{prefix}{n:0width$}{suffix}"))
        .collect())
}
