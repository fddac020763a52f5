//! The request language of placesim, as pure functions from text to typed values.
//!
//! A request is what a PBS job gives with `-l` and a Moab job with its resource-manager
//! extensions, written as whitespace-separated `key=value` items:
//!
//! ```text
//! select=2:ncpus=1:group=shape+2:ncpus=1:color!=green||4:ncpus=1 place=scatter:excl
//!   node_filter="ncpus<=8 and model==skylake or ncpus>=8 and model==haswell"
//!   nodeset=ONEOF:FEATURE:bigmem,fastos nodesetisoptional=false nodesetdelay=00:10:00
//!   hostlist=*n01+n02
//! ```
//!
//! [`parse_request`] checks every rule against the cluster's resource definitions and reports
//! the first broken one with its column; [`lower`] turns the result into the kernel's
//! [`placesim_core::Request`], which is all a policy ever sees. Every [`JobRequest`] prints in
//! a canonical form that parses back to itself.
//!
//! ```
//! use placesim_core::ResourceDefs;
//! use placesim_request::parse_request;
//!
//! let defs = ResourceDefs::default();
//! let req = parse_request("select=2:ncpus=1:mem=4GB place=scatter:excl", &defs)?;
//! assert_eq!(req.to_string(), "select=2:ncpus=1:mem=4gb place=scatter:excl");
//! let err = parse_request("select=1:ncpus>2", &defs).unwrap_err();
//! assert_eq!(err.column, 15);
//! # Ok::<(), placesim_request::RequestError>(())
//! ```

pub mod ast;
mod error;
mod exec_vnode;
mod lower;
mod nodespec;
mod parse;
mod sharing;

pub use ast::{
    ChunkSpec, Filter, JobRequest, NodeSet, NodeSetAttributeName, NodeSetPolicyName, Place,
    PlaceArrangement, PlaceSharing, Select, Term, Value,
};
pub use error::{RequestError, RequestErrorKind};
pub use exec_vnode::{ExecVnode, parse_exec_vnode};
pub use lower::{lower, lower_nodeset};
pub use nodespec::{ConvertedNodes, NodeName, convert_nodespec};
pub use parse::{
    MAX_FILTER_DEPTH, parse_bool, parse_duration, parse_nodeset, parse_request, parse_size,
    parse_speed,
};
pub use sharing::VnodeSharing;

/// Parses and lowers in one step: what a loader does with a request string.
pub fn parse_and_lower(
    text: &str,
    defs: &placesim_core::ResourceDefs,
) -> Result<placesim_core::Request, RequestError> {
    parse_and_lower_with_defaults(text, defs, &[])
}

/// Parses `terms`, a chunk's resources joined by `:` (`mem=2gb:Qlist=workq`), as PBS's
/// `default_chunk` gives them.
pub fn parse_chunk_terms(
    terms: &str,
    defs: &placesim_core::ResourceDefs,
) -> Result<Vec<Term>, RequestError> {
    let prefix = "select=1:";
    let request = parse_request(&format!("{prefix}{terms}"), defs).map_err(|e| RequestError {
        column: e.column.saturating_sub(prefix.len()).max(1),
        kind: e.kind,
    })?;
    Ok(request
        .select
        .into_iter()
        .flat_map(|s| s.chunks)
        .flat_map(|c| c.terms)
        .collect())
}

/// Parses a `place` value (`scatter:excl`, `pack:group=switch`), as PBS's
/// `resources_default.place` gives it.
pub fn parse_place(
    place: &str,
    defs: &placesim_core::ResourceDefs,
) -> Result<ast::Place, RequestError> {
    let prefix = "select=1:ncpus=1 place=";
    let request = parse_request(&format!("{prefix}{place}"), defs).map_err(|e| RequestError {
        column: e.column.saturating_sub(prefix.len()).max(1),
        kind: e.kind,
    })?;
    Ok(request.place)
}

/// As [`parse_and_lower`], with PBS's `default_chunk`s: each chunk of every select gets,
/// from each list of `defaults` in order (the queue's, then the server's), every resource it
/// does not name, as PBS builds the `schedselect` the scheduler places (spec
/// reservations-and-partitions.md §8.1, step 7).
pub fn parse_and_lower_with_defaults(
    text: &str,
    defs: &placesim_core::ResourceDefs,
    defaults: &[&[Term]],
) -> Result<placesim_core::Request, RequestError> {
    parse_and_lower_on(
        text,
        defs,
        &SiteDefaults {
            default_chunks: defaults,
            ..SiteDefaults::default()
        },
    )
}

/// What a PBS site adds to the request a job gives, as its server builds what the scheduler
/// places (reservations-and-partitions.md §8.1).
#[derive(Debug, Clone, Copy, Default)]
pub struct SiteDefaults<'a> {
    /// The `default_chunk`s, the queue's then the server's: each chunk gets every resource
    /// it does not name from the first that has it.
    pub default_chunks: &'a [&'a [Term]],
    /// `resources_default.place` (the queue's, else the server's): the place of a job that
    /// gives none.
    pub default_place: Option<&'a ast::Place>,
    /// The vnodes' `sharing`: with the job's place, whether it holds them exclusively
    /// ([`VnodeSharing::effective`]).
    pub vnode_sharing: VnodeSharing,
}

/// As [`parse_and_lower_with_defaults`], with everything a site adds ([`SiteDefaults`]).
pub fn parse_and_lower_on(
    text: &str,
    defs: &placesim_core::ResourceDefs,
    site: &SiteDefaults<'_>,
) -> Result<placesim_core::Request, RequestError> {
    let mut parsed = parse_request(text, defs)?;
    if parsed.place.is_empty()
        && let Some(place) = site.default_place
    {
        parsed.place = place.clone();
    }
    for chunk in parsed.select.iter_mut().flat_map(|s| s.chunks.iter_mut()) {
        for term in site.default_chunks.iter().flat_map(|d| d.iter()) {
            if !chunk.terms.iter().any(|t| t.name == term.name) {
                chunk.terms.push(term.clone());
            }
        }
    }
    let mut request = lower(&parsed, defs);
    request.sharing = site.vnode_sharing.effective(parsed.place.sharing);
    // The simulator sums a request's amounts over its chunks: a total past 2^64 - 1 is refused
    // here rather than overflowing there.
    for chunks in request.selects() {
        for (slot, &id) in defs.consumables().iter().enumerate() {
            let total = chunks.iter().try_fold(0u64, |sum, chunk| {
                let amount = chunk.amounts.get(slot).copied().unwrap_or(0);
                sum.checked_add(u64::from(chunk.count).checked_mul(amount)?)
            });
            if total.is_none() {
                return Err(RequestError {
                    column: 1,
                    kind: RequestErrorKind::TotalTooLarge(defs.def(id).name.clone()),
                });
            }
        }
    }
    Ok(request)
}
