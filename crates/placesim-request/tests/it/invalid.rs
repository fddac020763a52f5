//! Every invalid request, with its exact message and column.

use crate::common::defs;
use placesim_request::parse_request;

fn error(text: &str) -> String {
    match parse_request(text, &defs()) {
        Ok(r) => panic!("`{text}` parsed as {r:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn two_groups_in_one_chunk_complex() {
    assert_eq!(
        error("select=2:ncpus=1:group=color:group=shape"),
        "column 30: a chunk complex may have only one group="
    );
}

#[test]
fn per_chunk_group_with_place_group_or_pack() {
    assert_eq!(
        error("select=2:ncpus=1:group=shape place=group=color"),
        "column 30: a per-chunk group= cannot be used with place=group"
    );
    assert_eq!(
        error("select=2:ncpus=1:group=shape place=pack"),
        "column 30: a per-chunk group= cannot be used with place=pack: pack puts every chunk on one host"
    );
}

#[test]
fn node_filter_with_place_group() {
    assert_eq!(
        error("select=1:ncpus=1 place=group=switch node_filter=ncpus>2"),
        "column 37: node filter cannot be used with placement grouping"
    );
    assert_eq!(
        error("select=1:ncpus=1 node_filter=ncpus>2 place=group=switch"),
        "column 38: node filter cannot be used with placement grouping"
    );
}

#[test]
fn conditional_operator_on_a_consumable() {
    assert_eq!(
        error("select=1:ncpus>4"),
        "column 15: the operator `>` cannot be used on consumable resource `ncpus`: only `=` can, since the amount to allocate must be exact"
    );
    assert_eq!(
        error("select=1:ncpus=1:mem!=4gb"),
        "column 21: the operator `!=` cannot be used on consumable resource `mem`: only `=` can, since the amount to allocate must be exact"
    );
}

#[test]
fn unknown_resources_everywhere() {
    assert_eq!(
        error("select=1:ncpus=1:colour=red"),
        "column 18: unknown resource `colour`"
    );
    assert_eq!(
        error("select=1:ncpus=1 place=group=rack"),
        "column 30: unknown resource `rack`"
    );
    assert_eq!(
        error("select=1:group=rack"),
        "column 16: unknown resource `rack`"
    );
    assert_eq!(
        error("select=1 node_filter=\"ncpus>1 and gpus==2\""),
        "column 35: unknown resource `gpus`"
    );
    assert_eq!(
        error("select=1 nodeset=ONEOF:VARATTR:rack=r1"),
        "column 32: unknown resource `rack`"
    );
}

#[test]
fn malformed_sizes() {
    assert_eq!(
        error("select=1:mem=4gx"),
        "column 14: malformed size `4gx`: expected digits followed by b, kb, mb, gb or tb (any case), at most 2^64 bytes"
    );
    assert_eq!(
        error("select=1:mem=gb"),
        "column 14: malformed size `gb`: expected digits followed by b, kb, mb, gb or tb (any case), at most 2^64 bytes"
    );
    assert_eq!(
        error("select=1:mem=99999999999tb"),
        "column 14: malformed size `99999999999tb`: expected digits followed by b, kb, mb, gb or tb (any case), at most 2^64 bytes"
    );
}

#[test]
fn other_rules() {
    assert_eq!(error("place=excl"), "column 1: a request needs select=");
    assert_eq!(
        error("select=0:ncpus=1"),
        "column 8: chunk count `0` must be an integer from 1 to 4294967295"
    );
    assert_eq!(
        error("select=1:ncpus=x"),
        "column 16: resource `ncpus` needs an integer, found `x`"
    );
    assert_eq!(
        error("select=1:ncpus=-1"),
        "column 16: resource `ncpus` needs a count of at least 0, found `-1`"
    );
    assert_eq!(
        error("select=1:bigmem=maybe"),
        "column 17: resource `bigmem` needs True or False, found `maybe`"
    );
    assert_eq!(
        error("select=1:group=ncpus"),
        "column 16: group resource `ncpus` is of type long; it must be a string or string_array"
    );
    assert_eq!(
        error("select=1 place=scatter:pack"),
        "column 24: place `pack` conflicts with `scatter`: at most one arrangement, one sharing and one group"
    );
    assert_eq!(
        error("select=1 place=excl:shared"),
        "column 21: place `shared` conflicts with `excl`: at most one arrangement, one sharing and one group"
    );
    assert_eq!(
        error("select=1 place=spread"),
        "column 16: unknown place `spread`: expected free, pack, scatter, vscatter, excl, shared, exclhost or group=RES"
    );
    assert_eq!(
        error("select=1 select=2"),
        "column 10: `select` is given twice"
    );
    assert_eq!(
        error("select=1 walltime=10"),
        "column 10: unknown key `walltime`: expected select, place, node_filter, nodeset, nodesetisoptional, nodesetdelay or hostlist"
    );
    assert_eq!(
        error("select=1:model=\"sky"),
        "column 16: the quote \" does not close"
    );
    assert_eq!(
        error("select=1 node_filter=\"(ncpus>1\""),
        "column 31: expected `)`"
    );
    assert_eq!(
        error("select=1 nodeset=TWOOF:FEATURE"),
        "column 18: unknown node-set policy `TWOOF`: expected ONEOF, ANYOF or FIRSTOF"
    );
    assert_eq!(
        error("select=1 nodeset=ONEOF:VARATTR:ncpus"),
        "column 32: VARATTR `ncpus` is consumable; node sets are built from non-consumable resources"
    );
    assert_eq!(
        error("select=1 nodesetdelay=10m"),
        "column 23: expected a duration [[[DD:]HH:]MM:]SS, found `10m`"
    );
    assert_eq!(error("select=1+"), "column 10: expected a resource name");
    assert_eq!(
        error("select=1:ncpus=1place=excl"),
        "column 16: resource `ncpus` needs an integer, found `1place`"
    );
    assert_eq!(
        error("select=1 place=excl\"x"),
        "column 20: expected a space before the next key, or the end"
    );
    assert_eq!(
        error("select=1 node_filter=model==\"a'b\""),
        "column 29: resource `model` needs a string without quotes, found `a'b`"
    );
}

/// A consumable's total over the chunks must fit in 64 bits: (2^32 − 1) × (2^32 + 1) is
/// 2^64 − 1 and is taken; one more ncpu per chunk is refused, as is a sum over two complexes
/// past it, or in an `||` alternative.
#[test]
fn totals_past_64_bits_are_refused() {
    let lowered = |text: &str| {
        placesim_request::parse_and_lower(text, &defs())
            .map(|r| r.total(placesim_core::ConsumableIdx::NCPUS))
            .map_err(|e| e.to_string())
    };
    assert_eq!(lowered("select=4294967295:ncpus=4294967297"), Ok(u64::MAX));
    let refused = Err(
        "column 1: the request's total of `ncpus` over its chunks is more than 2^64 - 1".to_owned(),
    );
    assert_eq!(lowered("select=4294967295:ncpus=4294967298"), refused);
    assert_eq!(
        lowered("select=4294967295:ncpus=4294967297+1:ncpus=1"),
        refused
    );
    assert_eq!(
        lowered("select=1:ncpus=1||4294967295:ncpus=4294967298"),
        refused
    );
}
