//! Typed resources, as PBS defines them with `qmgr create resource`.
//!
//! A resource is either *consumable* (jobs take an amount of it from a vnode and give it back:
//! ncpus, mem, ngpus) or *non-consumable* (a property a vnode has, matched by requests and used
//! to build placement sets and node sets: switch, model, features).
//! Consumable amounts are integers in the resource's base unit (a count, or KiB for sizes),
//! so that accounting is exact.

use crate::ids::ResourceId;
use std::fmt;

/// The value type of a resource, named as in PBS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    /// A signed integer (ncpus, ngpus).
    Long,
    /// A floating-point number. As a consumable, amounts are kept in thousandths.
    Float,
    /// A memory size, kept in KiB.
    Size,
    /// A single string (switch, model).
    String,
    /// A set of strings: a vnode with `A,B` belongs to the sets of both values.
    StringArray,
    /// True or false; unset reads as false.
    Boolean,
}

impl ResourceKind {
    /// Whether this kind can be consumable. PBS only accounts numeric kinds.
    pub fn can_be_consumable(self) -> bool {
        matches!(
            self,
            ResourceKind::Long | ResourceKind::Float | ResourceKind::Size
        )
    }

    /// Whether this kind can key placement sets or node sets (`node_group_key`).
    pub fn is_stringlike(self) -> bool {
        matches!(self, ResourceKind::String | ResourceKind::StringArray)
    }

    /// The kind PBS names `name` (`long`, `float`, `size`, `string`, `string_array`,
    /// `boolean`, as `resourcedef` and `qmgr` write them): what scenario files and site
    /// imports read.
    pub fn from_name(name: &str) -> Option<ResourceKind> {
        Some(match name {
            "long" => ResourceKind::Long,
            "float" => ResourceKind::Float,
            "size" => ResourceKind::Size,
            "string" => ResourceKind::String,
            "string_array" => ResourceKind::StringArray,
            "boolean" => ResourceKind::Boolean,
            _ => return None,
        })
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ResourceKind::Long => "long",
            ResourceKind::Float => "float",
            ResourceKind::Size => "size",
            ResourceKind::String => "string",
            ResourceKind::StringArray => "string_array",
            ResourceKind::Boolean => "boolean",
        })
    }
}

/// One resource definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDef {
    /// The name requests and vnodes use.
    pub name: String,
    /// Its value type.
    pub kind: ResourceKind,
    /// Whether jobs take amounts of it from vnodes.
    pub consumable: bool,
}

/// A non-consumable value held by a vnode.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// A string value.
    Str(String),
    /// A string_array value.
    StrArray(Vec<String>),
    /// A boolean value.
    Bool(bool),
    /// An integer value.
    Long(i64),
    /// A float value.
    Float(f64),
    /// A size, in KiB.
    SizeKib(u64),
}

impl AttrValue {
    /// The string values this attribute contributes to placement sets: one for a string,
    /// each element for a string_array, none for other kinds.
    pub fn string_values(&self) -> &[String] {
        match self {
            AttrValue::Str(s) => std::slice::from_ref(s),
            AttrValue::StrArray(v) => v,
            _ => &[],
        }
    }
}

impl AttrValue {
    /// A consumable amount (in the base unit of `kind`) as a value, so that node filters can
    /// compare amounts and properties alike.
    pub fn from_amount(kind: ResourceKind, amount: u64) -> AttrValue {
        match kind {
            ResourceKind::Size => AttrValue::SizeKib(amount),
            ResourceKind::Float => AttrValue::Float(amount as f64 / 1000.0),
            _ => AttrValue::Long(i64::try_from(amount).unwrap_or(i64::MAX)),
        }
    }

    /// Orders two values of the same kind: strings alphanumerically (byte order, as PBS's
    /// string comparison), numbers numerically, `false < true`. `None` for values of different
    /// kinds, or for string_arrays, which have no single value to order.
    pub fn partial_order(&self, other: &AttrValue) -> Option<std::cmp::Ordering> {
        use AttrValue::*;
        match (self, other) {
            (Str(a), Str(b)) => Some(a.as_str().cmp(b.as_str())),
            (Bool(a), Bool(b)) => Some(a.cmp(b)),
            (Long(a), Long(b)) => Some(a.cmp(b)),
            (SizeKib(a), SizeKib(b)) => Some(a.cmp(b)),
            (Float(a), Float(b)) => a.partial_cmp(b),
            (Long(a), Float(b)) => (*a as f64).partial_cmp(b),
            (Float(a), Long(b)) => a.partial_cmp(&(*b as f64)),
            _ => None,
        }
    }
}

/// Writes `amount`, in `kind`'s base unit (KiB for sizes, thousandths for floats), as PBS
/// prints amounts in `exec_vnode` and in its comments: a size in the largest unit it is a
/// whole number of (`4gb`, `1536mb`, `100kb`).
pub fn write_amount(out: &mut impl fmt::Write, kind: ResourceKind, amount: u64) -> fmt::Result {
    let mut digits = [0; 20];
    match kind {
        ResourceKind::Size => {
            let (unit, per) = [("tb", 1u64 << 30), ("gb", 1 << 20), ("mb", 1 << 10)]
                .into_iter()
                .find(|&(_, per)| amount >= per && amount % per == 0)
                .unwrap_or(("kb", 1));
            out.write_str(decimal(&mut digits, amount / per))?;
            out.write_str(unit)
        }
        ResourceKind::Float => write!(out, "{}", amount as f64 / 1000.0),
        _ => out.write_str(decimal(&mut digits, amount)),
    }
}

/// `v` in decimal, written into `digits`: the text `format!("{v}")` makes, without the
/// formatting machinery, which a comment made for every job refused at every pass, or a line
/// written for every job of a trace, paid for each number.
pub fn decimal(digits: &mut [u8; 20], v: u64) -> &str {
    let mut at = digits.len();
    let mut rest = v;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    std::str::from_utf8(&digits[at..]).unwrap_or_default()
}

/// As PBS prints a value: a string_array's elements joined by commas, booleans as `True` and
/// `False`, sizes with their unit.
impl fmt::Display for AttrValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::Str(s) => f.write_str(s),
            AttrValue::StrArray(v) => f.write_str(&v.join(",")),
            AttrValue::Bool(true) => f.write_str("True"),
            AttrValue::Bool(false) => f.write_str("False"),
            AttrValue::Long(n) => write!(f, "{n}"),
            AttrValue::Float(x) => write!(f, "{x}"),
            AttrValue::SizeKib(k) => write_amount(f, ResourceKind::Size, *k),
        }
    }
}

/// A comparison operator in a chunk condition or a node_filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `=` in a select, `==` in a node_filter.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `>`.
    Gt,
    /// `<=`.
    Le,
    /// `>=`.
    Ge,
}

impl CmpOp {
    /// The operator as written in a select statement (`=` for equality).
    pub fn select_symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Gt => ">",
            CmpOp::Le => "<=",
            CmpOp::Ge => ">=",
        }
    }

    /// The operator as written in a node_filter (`==` for equality).
    pub fn filter_symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            other => other.select_symbol(),
        }
    }

    /// Whether `have` (a vnode's value; `None` when unset) satisfies `have OP want`.
    ///
    /// - A string_array satisfies `=` when any element equals the string, and the ordering
    ///   operators when any element does; it satisfies `!=` when no element is equal.
    /// - An unset boolean reads as false, as in PBS; other unset values satisfy only `!=`.
    /// - Values of different kinds never compare equal.
    pub fn matches(self, have: Option<&AttrValue>, want: &AttrValue) -> bool {
        let unset_bool = AttrValue::Bool(false);
        let have = match (have, want) {
            (None, AttrValue::Bool(_)) => &unset_bool,
            (None, _) => return self == CmpOp::Ne,
            (Some(h), _) => h,
        };
        if let AttrValue::StrArray(values) = have {
            let any = |op: CmpOp| {
                values
                    .iter()
                    .any(|v| op.holds(AttrValue::Str(v.clone()).partial_order(want)))
            };
            return match self {
                CmpOp::Ne => !any(CmpOp::Eq),
                op => any(op),
            };
        }
        self.holds(have.partial_order(want))
    }

    /// Whether an ordering (of have against want) satisfies this operator; an incomparable
    /// pair satisfies only `!=`.
    fn holds(self, ord: Option<std::cmp::Ordering>) -> bool {
        use std::cmp::Ordering::*;
        match (self, ord) {
            (CmpOp::Ne, None) => true,
            (_, None) => false,
            (CmpOp::Eq, Some(o)) => o == Equal,
            (CmpOp::Ne, Some(o)) => o != Equal,
            (CmpOp::Lt, Some(o)) => o == Less,
            (CmpOp::Gt, Some(o)) => o == Greater,
            (CmpOp::Le, Some(o)) => o != Greater,
            (CmpOp::Ge, Some(o)) => o != Less,
        }
    }
}

/// The position of a consumable resource in every per-vnode amount vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConsumableIdx(pub u8);

impl ConsumableIdx {
    /// ncpus is always the first consumable: PBS treats a vnode whose ncpus are all
    /// assigned as job-busy, so it is special.
    pub const NCPUS: ConsumableIdx = ConsumableIdx(0);
    /// mem, in KiB.
    pub const MEM: ConsumableIdx = ConsumableIdx(1);
    /// ngpus.
    pub const NGPUS: ConsumableIdx = ConsumableIdx(2);

    /// As an index into an amount vector.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// Error defining a resource.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceError {
    /// The name is taken.
    #[error("resource `{0}` is defined twice")]
    Duplicate(String),
    /// Strings and booleans cannot be consumed.
    #[error("resource `{name}` of type {kind} cannot be consumable: only long, float and size can")]
    NotConsumable {
        /// The resource.
        name: String,
        /// Its kind.
        kind: ResourceKind,
    },
    /// More consumables than amount vectors can index.
    #[error("too many consumable resources (at most 255)")]
    TooManyConsumables,
}

/// The resource definitions of one cluster, with the built-ins PBS always has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDefs {
    defs: Vec<ResourceDef>,
    consumable_of: Vec<Option<ConsumableIdx>>,
    consumables: Vec<ResourceId>,
}

impl Default for ResourceDefs {
    /// The built-ins: consumable ncpus, mem and ngpus; non-consumable host and vnode.
    fn default() -> Self {
        let mut defs = ResourceDefs {
            defs: Vec::new(),
            consumable_of: Vec::new(),
            consumables: Vec::new(),
        };
        for (name, kind, consumable) in [
            ("ncpus", ResourceKind::Long, true),
            ("mem", ResourceKind::Size, true),
            ("ngpus", ResourceKind::Long, true),
            ("host", ResourceKind::String, false),
            ("vnode", ResourceKind::String, false),
        ] {
            // The built-ins are distinct and valid, so this cannot fail.
            let _ = defs.define(name, kind, consumable);
        }
        defs
    }
}

impl ResourceDefs {
    /// The id of the built-in `host` resource.
    pub const HOST: ResourceId = ResourceId(3);
    /// The id of the built-in `vnode` resource.
    pub const VNODE: ResourceId = ResourceId(4);

    /// Adds a resource definition.
    pub fn define(
        &mut self,
        name: &str,
        kind: ResourceKind,
        consumable: bool,
    ) -> Result<ResourceId, ResourceError> {
        if self.lookup(name).is_some() {
            return Err(ResourceError::Duplicate(name.to_owned()));
        }
        if consumable && !kind.can_be_consumable() {
            return Err(ResourceError::NotConsumable {
                name: name.to_owned(),
                kind,
            });
        }
        let id = ResourceId::from_index(self.defs.len());
        let cidx = if consumable {
            let idx = u8::try_from(self.consumables.len())
                .map_err(|_| ResourceError::TooManyConsumables)?;
            self.consumables.push(id);
            Some(ConsumableIdx(idx))
        } else {
            None
        };
        self.defs.push(ResourceDef {
            name: name.to_owned(),
            kind,
            consumable,
        });
        self.consumable_of.push(cidx);
        Ok(id)
    }

    /// The id of the resource named `name`, if defined. Names are case-sensitive, as in PBS.
    pub fn lookup(&self, name: &str) -> Option<ResourceId> {
        self.defs
            .iter()
            .position(|d| d.name == name)
            .map(ResourceId::from_index)
    }

    /// The definition of `id`.
    pub fn def(&self, id: ResourceId) -> &ResourceDef {
        &self.defs[id.index()]
    }

    /// All definitions, in id order.
    pub fn all(&self) -> &[ResourceDef] {
        &self.defs
    }

    /// The amount-vector slot of `id`, if it is consumable.
    pub fn consumable_idx(&self, id: ResourceId) -> Option<ConsumableIdx> {
        self.consumable_of[id.index()]
    }

    /// How many consumable resources there are: the length of every amount vector.
    pub fn n_consumables(&self) -> usize {
        self.consumables.len()
    }

    /// The resource behind each amount-vector slot.
    pub fn consumables(&self) -> &[ResourceId] {
        &self.consumables
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `decimal` writes what `format!` writes, at the edges of each digit count and at the
    /// extremes.
    #[test]
    fn decimal_is_the_text_format_writes() {
        let mut values = vec![0, 1, u64::MAX, u64::MAX - 1];
        let mut power = 1u64;
        while let Some(next) = power.checked_mul(10) {
            values.extend([power - 1, power, power + 1, next - 1]);
            power = next;
        }
        for v in values {
            assert_eq!(decimal(&mut [0; 20], v), format!("{v}"), "{v}");
        }
    }

    /// Amounts as PBS prints them: sizes in the largest unit they are a whole number of,
    /// floats in thousandths, everything else as a number.
    #[test]
    fn amounts_print_as_pbs_prints_them() {
        let text = |kind, amount| {
            let mut out = String::new();
            write_amount(&mut out, kind, amount).unwrap();
            out
        };
        assert_eq!(text(ResourceKind::Size, 4 << 20), "4gb");
        assert_eq!(text(ResourceKind::Size, 1536 << 10), "1536mb");
        assert_eq!(text(ResourceKind::Size, 100), "100kb");
        assert_eq!(text(ResourceKind::Size, 2 << 30), "2tb");
        assert_eq!(text(ResourceKind::Size, 0), "0kb");
        assert_eq!(text(ResourceKind::Float, 1500), "1.5");
        assert_eq!(text(ResourceKind::Long, 16384), "16384");
    }
}
