//! The typed syntax of a request, and its canonical printed form.
//!
//! Every type here prints (`Display`) in the canonical form, and parsing that form gives the
//! same value back: `parse_request(&x.to_string(), defs) == Ok(x)`.

use placesim_core::{CmpOp, HostListForm};
use std::fmt;

/// A whole job request: what PBS's `-l` options and Moab's resource-manager extensions say.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRequest {
    /// Select specifications joined by `||` (extension, seed 001); at least one.
    pub select: Vec<Select>,
    /// The `place=` statement (all parts optional).
    pub place: Place,
    /// `node_filter=` (extension, seed 003).
    pub node_filter: Option<Filter>,
    /// Moab `nodeset=`.
    pub nodeset: Option<NodeSet>,
    /// Moab `nodesetisoptional=`.
    pub nodeset_is_optional: Option<bool>,
    /// Moab `nodesetdelay=`, in seconds.
    pub nodeset_delay_s: Option<u64>,
    /// Moab `hostlist=[*]h1+h2+...`: the form and the host names.
    pub hostlist: Option<(HostListForm, Vec<String>)>,
}

/// One select specification: chunk complexes joined by `+`.
#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    /// The chunk complexes, in order; at least one.
    pub chunks: Vec<ChunkSpec>,
}

/// One chunk complex: `N:res=value:...`.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkSpec {
    /// How many identical chunks; at least 1.
    pub count: u32,
    /// Resource terms, in the order written.
    pub terms: Vec<Term>,
    /// The per-chunk `group=R` (extension, seed 000), printed last.
    pub group: Option<String>,
}

/// `res OP value` inside a chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// The resource name.
    pub name: String,
    /// `=` for amounts and equality; other operators only on non-consumables (seed 001).
    pub op: CmpOp,
    /// The value, typed by the resource's kind.
    pub value: Value,
}

/// A typed value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// long.
    Long(i64),
    /// float (finite).
    Float(f64),
    /// size, in bytes.
    SizeBytes(u64),
    /// string, or one element of a string_array.
    Str(String),
    /// boolean.
    Bool(bool),
}

/// The `place=` statement: `[arrangement][:sharing][:group=R]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Place {
    /// free, pack, scatter or vscatter.
    pub arrangement: Option<PlaceArrangement>,
    /// excl, shared or exclhost.
    pub sharing: Option<PlaceSharing>,
    /// `group=R`: the job's own placement-set key.
    pub group: Option<String>,
}

impl Place {
    /// Whether the statement says nothing (so it is not printed).
    pub fn is_empty(&self) -> bool {
        self.arrangement.is_none() && self.sharing.is_none() && self.group.is_none()
    }
}

/// A `place=` arrangement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlaceArrangement {
    /// `free`.
    Free,
    /// `pack`.
    Pack,
    /// `scatter`.
    Scatter,
    /// `vscatter`.
    VScatter,
}

/// A `place=` sharing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlaceSharing {
    /// `excl`.
    Excl,
    /// `shared`.
    Shared,
    /// `exclhost`.
    ExclHost,
}

/// A node_filter expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// `name OP value`, reading `resources_available` (the default) or `resources_assigned`.
    Compare {
        /// The resource name.
        name: String,
        /// Whether it reads `resources_assigned.name`.
        assigned: bool,
        /// The operator.
        op: CmpOp,
        /// The value, typed by the resource's kind.
        value: Value,
    },
    /// `a and b and ...` (two or more).
    And(Vec<Filter>),
    /// `a or b or ...` (two or more); at the top level, the alternatives tried one by one.
    Or(Vec<Filter>),
    /// `not a`.
    Not(Box<Filter>),
}

/// A Moab `nodeset=POLICY[:ATTRIBUTE[:v1,v2...]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSet {
    /// ONEOF, ANYOF or FIRSTOF.
    pub policy: NodeSetPolicyName,
    /// FEATURE or VARATTR, if given.
    pub attribute: Option<NodeSetAttributeName>,
    /// The listed values (`name` or `name=value` under VARATTR).
    pub values: Vec<String>,
}

/// A node-set policy name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeSetPolicyName {
    /// `ONEOF`.
    OneOf,
    /// `ANYOF`.
    AnyOf,
    /// `FIRSTOF`.
    FirstOf,
}

/// A node-set attribute name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeSetAttributeName {
    /// `FEATURE`.
    Feature,
    /// `VARATTR`.
    VarAttr,
    /// `PROCSPEED`.
    ProcSpeed,
    /// `RESERVATION`.
    Reservation,
    /// `CLASS`.
    Class,
}

impl fmt::Display for JobRequest {
    /// `select=... place=... node_filter="..." nodeset=... nodesetisoptional=... nodesetdelay=...
    /// hostlist=...`, in that order, leaving out what is not given.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("select=")?;
        for (i, s) in self.select.iter().enumerate() {
            if i > 0 {
                f.write_str("||")?;
            }
            write!(f, "{s}")?;
        }
        if !self.place.is_empty() {
            write!(f, " place={}", self.place)?;
        }
        if let Some(filter) = &self.node_filter {
            write!(f, " node_filter=\"{filter}\"")?;
        }
        if let Some(ns) = &self.nodeset {
            write!(f, " nodeset={ns}")?;
        }
        if let Some(b) = self.nodeset_is_optional {
            write!(f, " nodesetisoptional={}", if b { "true" } else { "false" })?;
        }
        if let Some(d) = self.nodeset_delay_s {
            write!(f, " nodesetdelay={d}")?;
        }
        if let Some((form, hosts)) = &self.hostlist {
            let star = if *form == HostListForm::Subset {
                "*"
            } else {
                ""
            };
            write!(f, " hostlist={star}{}", hosts.join("+"))?;
        }
        Ok(())
    }
}

impl fmt::Display for Select {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.chunks.iter().enumerate() {
            if i > 0 {
                f.write_str("+")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

impl fmt::Display for ChunkSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.count)?;
        for t in &self.terms {
            write!(f, ":{}{}", t.name, t.op.select_symbol())?;
            t.value.write_select(f)?;
        }
        if let Some(g) = &self.group {
            write!(f, ":group={g}")?;
        }
        Ok(())
    }
}

impl Value {
    fn write_select(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Str(s) => write_string(f, s, false),
            other => write!(f, "{other}"),
        }
    }

    fn write_filter(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Str(s) => write_string(f, s, true),
            other => write!(f, "{other}"),
        }
    }
}

impl fmt::Display for Value {
    /// Numbers as Rust prints them (floats round-trip exactly), sizes in the largest unit that
    /// divides them, booleans as `True`/`False`, strings bare.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Long(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::SizeBytes(b) => write_size(f, *b),
            Value::Str(s) => f.write_str(s),
            Value::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
        }
    }
}

/// The size units, largest first, with their factor in bytes.
pub(crate) const SIZE_UNITS: [(&str, u64); 5] = [
    ("tb", 1 << 40),
    ("gb", 1 << 30),
    ("mb", 1 << 20),
    ("kb", 1 << 10),
    ("b", 1),
];

fn write_size(f: &mut fmt::Formatter<'_>, bytes: u64) -> fmt::Result {
    let (unit, factor) = SIZE_UNITS
        .iter()
        .find(|(_, factor)| bytes % factor == 0 && bytes > 0)
        .copied()
        .unwrap_or(("b", 1));
    write!(f, "{}{unit}", bytes / factor)
}

/// Whether `c` may appear in a bare (unquoted) string value.
pub(crate) fn is_bare_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '@' | '%' | ',')
}

/// Strings print bare when they can; otherwise quoted with `"` (or `'` when they hold `"`;
/// always `'` inside a node_filter, which is itself printed inside `"`).
fn write_string(f: &mut fmt::Formatter<'_>, s: &str, in_filter: bool) -> fmt::Result {
    let keyword = in_filter && matches!(s, "and" | "or" | "not");
    if !s.is_empty() && !keyword && s.chars().all(is_bare_char) {
        return f.write_str(s);
    }
    let quote = if in_filter || s.contains('"') {
        '\''
    } else {
        '"'
    };
    write!(f, "{quote}{s}{quote}")
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if let Some(a) = self.arrangement {
            parts.push(a.to_string());
        }
        if let Some(s) = self.sharing {
            parts.push(s.to_string());
        }
        if let Some(g) = &self.group {
            parts.push(format!("group={g}"));
        }
        f.write_str(&parts.join(":"))
    }
}

impl fmt::Display for PlaceArrangement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PlaceArrangement::Free => "free",
            PlaceArrangement::Pack => "pack",
            PlaceArrangement::Scatter => "scatter",
            PlaceArrangement::VScatter => "vscatter",
        })
    }
}

impl fmt::Display for PlaceSharing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PlaceSharing::Excl => "excl",
            PlaceSharing::Shared => "shared",
            PlaceSharing::ExclHost => "exclhost",
        })
    }
}

impl fmt::Display for Filter {
    /// Comparisons without spaces; `and`, `or` and `not` between spaces; parentheses exactly
    /// where the tree needs them (and around a nested `or` in an `or`, so the tree survives).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Filter::Compare {
                name,
                assigned,
                op,
                value,
            } => {
                if *assigned {
                    f.write_str("resources_assigned.")?;
                }
                write!(f, "{name}{}", op.filter_symbol())?;
                value.write_filter(f)
            }
            Filter::And(items) => write_joined(f, items, " and ", |x| {
                matches!(x, Filter::And(_) | Filter::Or(_))
            }),
            Filter::Or(items) => write_joined(f, items, " or ", |x| matches!(x, Filter::Or(_))),
            Filter::Not(inner) => {
                f.write_str("not ")?;
                if matches!(**inner, Filter::And(_) | Filter::Or(_)) {
                    write!(f, "({inner})")
                } else {
                    write!(f, "{inner}")
                }
            }
        }
    }
}

fn write_joined(
    f: &mut fmt::Formatter<'_>,
    items: &[Filter],
    sep: &str,
    needs_parens: impl Fn(&Filter) -> bool,
) -> fmt::Result {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        if needs_parens(x) {
            write!(f, "({x})")?;
        } else {
            write!(f, "{x}")?;
        }
    }
    Ok(())
}

impl fmt::Display for NodeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.policy)?;
        if let Some(a) = self.attribute {
            write!(f, ":{a}")?;
            if !self.values.is_empty() {
                write!(f, ":{}", self.values.join(","))?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for NodeSetPolicyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NodeSetPolicyName::OneOf => "ONEOF",
            NodeSetPolicyName::AnyOf => "ANYOF",
            NodeSetPolicyName::FirstOf => "FIRSTOF",
        })
    }
}

impl fmt::Display for NodeSetAttributeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NodeSetAttributeName::Feature => "FEATURE",
            NodeSetAttributeName::VarAttr => "VARATTR",
            NodeSetAttributeName::ProcSpeed => "PROCSPEED",
            NodeSetAttributeName::Reservation => "RESERVATION",
            NodeSetAttributeName::Class => "CLASS",
        })
    }
}
