//! Why a request was refused, and where.

use placesim_core::ResourceKind;

/// A request that breaks a rule: the rule, and the 1-based column (in characters) where the
/// request breaks it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {kind}")]
pub struct RequestError {
    /// 1-based column, counted in characters of the request text.
    pub column: usize,
    /// The rule broken.
    pub kind: RequestErrorKind,
}

/// The rules a request can break.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestErrorKind {
    /// Something else was expected here.
    #[error("expected {0}")]
    Expected(&'static str),
    /// An item did not start with a key.
    #[error(
        "expected a key: select, place, node_filter, nodeset, nodesetisoptional, nodesetdelay or hostlist"
    )]
    ExpectedKey,
    /// A key this language does not have.
    #[error(
        "unknown key `{0}`: expected select, place, node_filter, nodeset, nodesetisoptional, nodesetdelay or hostlist"
    )]
    UnknownKey(String),
    /// A key given twice.
    #[error("`{0}` is given twice")]
    Duplicate(String),
    /// No `select=`.
    #[error("a request needs select=")]
    NoSelect,
    /// An old-style `nodes=` beside the `select=` or `place=` it stands for.
    #[error("nodes= is the old-style form of select= and place=: give one or the other")]
    NodesWithSelect,
    /// An old-style `nodes=` whose converted chunks break a rule of `select=`.
    #[error("nodes= converts to select={select}, which is refused: {why}")]
    NodesConverted {
        /// The converted select.
        select: String,
        /// Why it is refused.
        why: String,
    },
    /// A chunk count that is not a positive 32-bit integer.
    #[error("chunk count `{0}` must be an integer from 1 to 4294967295")]
    BadCount(String),
    /// Two `group=` in one chunk complex (seed 000).
    #[error("a chunk complex may have only one group=")]
    TwoGroups,
    /// Per-chunk grouping with `place=group` (seed 000).
    #[error("a per-chunk group= cannot be used with place=group")]
    ChunkGroupWithPlaceGroup,
    /// Per-chunk grouping with `place=pack` (seed 000).
    #[error("a per-chunk group= cannot be used with place=pack: pack puts every chunk on one host")]
    ChunkGroupWithPack,
    /// node_filter with `place=group` (seed 003's exact message).
    #[error("node filter cannot be used with placement grouping")]
    FilterWithPlaceGroup,
    /// A conditional operator on a consumable (seed 001).
    #[error(
        "the operator `{0}` cannot be used on consumable resource `{1}`: only `=` can, since the amount to allocate must be exact"
    )]
    ConditionalOnConsumable(&'static str, String),
    /// A resource that is not defined.
    #[error("unknown resource `{0}`")]
    UnknownResource(String),
    /// `group=` on a resource that cannot key placement sets.
    #[error("group resource `{0}` is of type {1}; it must be a string or string_array")]
    GroupNotString(String, ResourceKind),
    /// A size that does not parse.
    #[error(
        "malformed size `{0}`: expected digits followed by b, kb, mb, gb or tb (any case), at most 2^64 bytes"
    )]
    BadSize(String),
    /// A value of the wrong type.
    #[error("resource `{resource}` needs {expected}, found `{found}`")]
    BadValue {
        /// The resource.
        resource: String,
        /// What its type needs.
        expected: &'static str,
        /// What was given.
        found: String,
    },
    /// A quote that does not close.
    #[error("the quote {0} does not close")]
    UnclosedQuote(char),
    /// A `place=` word that does not exist.
    #[error(
        "unknown place `{0}`: expected free, pack, scatter, vscatter, excl, shared, exclhost or group=RES"
    )]
    UnknownPlace(String),
    /// Two arrangements, two sharings or two groups in one `place=`.
    #[error("place `{1}` conflicts with `{0}`: at most one arrangement, one sharing and one group")]
    PlaceConflict(String, String),
    /// A boolean that does not parse.
    #[error("expected true or false, found `{0}`")]
    ExpectedBool(String),
    /// A duration that does not parse.
    #[error("expected a duration [[[DD:]HH:]MM:]SS, found `{0}`")]
    ExpectedDuration(String),
    /// A node-set policy that does not exist.
    #[error("unknown node-set policy `{0}`: expected ONEOF, ANYOF or FIRSTOF")]
    UnknownNodeSetPolicy(String),
    /// A node-set attribute that does not exist.
    #[error("unknown node-set attribute `{0}`: expected FEATURE, VARATTR or PROCSPEED")]
    UnknownNodeSetAttribute(String),
    /// Moab's superset host list, which placesim does not model.
    #[error(
        "superset host lists (`^`) are not modelled: give the exact hosts (`hostlist=a+b`) or a subset (`hostlist=*a+b`)"
    )]
    SupersetHostList,
    /// A PROCSPEED value that is not a speed.
    #[error("PROCSPEED value `{0}` is not a speed: expected a positive number")]
    BadProcSpeed(String),
    /// A node_filter nested deeper than [`crate::MAX_FILTER_DEPTH`].
    #[error("node_filter nests `(` and `not` more than {0} levels deep")]
    TooDeep(usize),
    /// A consumable's total over a select specification's chunks does not fit in 64 bits.
    #[error("the request's total of `{0}` over its chunks is more than 2^64 - 1")]
    TotalTooLarge(String),
    /// VARATTR on a consumable.
    #[error("VARATTR `{0}` is consumable; node sets are built from non-consumable resources")]
    VarAttrConsumable(String),
}
