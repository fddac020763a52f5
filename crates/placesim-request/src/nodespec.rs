//! Old-style node specs, `-l nodes=4:ppn=2:green+2:red#excl`, converted to `select` and
//! `place` by PBS's own rules (site-inputs.md §5; OpenPBS `cvt_nodespec_to_select`,
//! node_manager.c, and pbs_resources(7B)).
//!
//! Each `+`-separated subspec `[N][:spec...]` becomes one chunk group
//! `N:ncpus=<ppn·cpp>[:<prop>=True...|:host=<name>][:mpiprocs=<ppn>]`; a `#excl` or `#shared`
//! suffix sets the place (`scatter:excl`, `scatter:shared`; `scatter` without), and any other
//! suffix is a property added to every subspec. The multiplier of an explicit `-l ncpus=`
//! is not applied: an accounting log's `Resource_List.ncpus` is PBS's own sum, not the
//! user's request.

use crate::{RequestError, RequestErrorKind};

/// The converted request, and what the conversion needs from the site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertedNodes {
    /// The `select` value: `4:ncpus=2:mpiprocs=2+2:ncpus=1:red=True`.
    pub select: String,
    /// The `place` value: `scatter`, `scatter:excl` or `scatter:shared`.
    pub place: String,
    /// The properties the spec names, each once, in order: booleans the site must define.
    pub properties: Vec<String>,
}

/// What a name in a node spec is, as the site knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeName<'a> {
    /// A host (or vnode) of the site, by its own spelling: the chunk gets `host=`.
    Host(&'a str),
    /// A property: the chunk gets `<name>=True`.
    Property,
}

/// Converts the value of `nodes=` (without `nodes=`). `name` tells a host from a property
/// (PBS compares names with vnode names without regard to case); `mpiprocs` says whether
/// to write `mpiprocs=` (PBS does for ppn > 1; a site without the resource leaves it out).
pub fn convert_nodespec<'a>(
    spec: &str,
    name: impl Fn(&str) -> NodeName<'a>,
    mpiprocs: bool,
) -> Result<ConvertedNodes, RequestError> {
    let err = |at: usize, what: &'static str| RequestError {
        column: spec[..at.min(spec.len())].chars().count() + 1,
        kind: RequestErrorKind::Expected(what),
    };
    let (body, suffixes) = match spec.find('#') {
        Some(i) => (&spec[..i], Some((i, &spec[i + 1..]))),
        None => (spec, None),
    };
    let mut place = "scatter";
    let mut extra: Vec<&str> = Vec::new();
    if let Some((at, suffixes)) = suffixes {
        for s in suffixes.split('#') {
            match s.to_ascii_lowercase().as_str() {
                "excl" => place = "scatter:excl",
                "shared" => place = "scatter:shared",
                "" => {
                    return Err(err(
                        at + 1,
                        "a suffix after `#`: excl, shared or a property",
                    ));
                }
                _ => extra.push(s),
            }
        }
    }
    if body.trim().is_empty() {
        return Err(err(0, "a node count or spec after `nodes=`"));
    }
    let mut properties: Vec<String> = Vec::new();
    let mut chunks: Vec<String> = Vec::new();
    let mut offset = 0;
    for sub in body.split('+') {
        let here = offset;
        offset += sub.len() + 1;
        let mut parts = sub.split(':').peekable();
        let count: u64 = match parts.peek() {
            Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                let n = p.parse().ok().filter(|n| *n >= 1);
                parts.next();
                n.ok_or_else(|| err(here, "a node count of at least 1"))?
            }
            _ => 1,
        };
        let (mut ppn, mut cpp) = (1u64, 1u64);
        let mut labels: Vec<String> = Vec::new();
        for part in parts.chain(extra.iter().copied()) {
            // A trailing `/<digits>` (a Torque slot) is skipped.
            let part = match part.rsplit_once('/') {
                Some((p, slot)) if !slot.is_empty() && slot.bytes().all(|b| b.is_ascii_digit()) => {
                    p
                }
                _ => part,
            };
            if let Some(v) = part.strip_prefix("ppn=") {
                ppn = v.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
                    err(
                        here,
                        "ppn=<processes per node>, a whole number of at least 1",
                    )
                })?;
            } else if let Some(v) = part
                .strip_prefix("cpp=")
                .or_else(|| part.strip_prefix("ncpus="))
            {
                cpp = v.parse().ok().ok_or_else(|| {
                    err(here, "cpp=<cpus per process> (or ncpus=), a whole number")
                })?;
            } else if part.is_empty()
                || !part.starts_with(|c: char| c.is_ascii_alphanumeric())
                || !part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.=".contains(c))
            {
                return Err(err(
                    here,
                    "ppn=, cpp=, a property or a host name (a letter or digit first, then letters, digits, - _ . =)",
                ));
            } else {
                match name(part) {
                    NodeName::Host(host) => labels.push(format!("host={host}")),
                    NodeName::Property => {
                        labels.push(format!("{part}=True"));
                        if !properties.iter().any(|p| p == part) {
                            properties.push(part.to_owned());
                        }
                    }
                }
            }
        }
        let mut chunk = format!("{count}:ncpus={}", ppn.saturating_mul(cpp));
        for l in labels {
            chunk.push(':');
            chunk.push_str(&l);
        }
        if mpiprocs && ppn != 1 {
            chunk.push_str(&format!(":mpiprocs={ppn}"));
        }
        chunks.push(chunk);
    }
    Ok(ConvertedNodes {
        select: chunks.join("+"),
        place: place.to_owned(),
        properties,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(_: &str) -> NodeName<'static> {
        NodeName::Property
    }

    fn convert(spec: &str) -> (String, String) {
        let c = convert_nodespec(spec, props, true).expect(spec);
        (c.select, c.place)
    }

    /// The man page's and the code's examples (site-inputs.md §5).
    #[test]
    fn pbs_s_examples() {
        assert_eq!(
            convert("4:ppn=2"),
            ("4:ncpus=2:mpiprocs=2".to_owned(), "scatter".to_owned())
        );
        assert_eq!(
            convert("3:green:ncpus=2:ppn=2+2:red"),
            (
                "3:ncpus=4:green=True:mpiprocs=2+2:ncpus=1:red=True".to_owned(),
                "scatter".to_owned()
            )
        );
        assert_eq!(
            convert("2#excl"),
            ("2:ncpus=1".to_owned(), "scatter:excl".to_owned())
        );
        assert_eq!(
            convert("1:ppn=4#SHARED#gpu"),
            (
                "1:ncpus=4:gpu=True:mpiprocs=4".to_owned(),
                "scatter:shared".to_owned()
            )
        );
        // A host name becomes host=, in the site's spelling; a Torque slot is skipped.
        let c = convert_nodespec(
            "n01/3:ppn=2+bigmem",
            |n| {
                if n.eq_ignore_ascii_case("N01") {
                    NodeName::Host("N01")
                } else {
                    NodeName::Property
                }
            },
            false,
        )
        .expect("converts");
        assert_eq!(c.select, "1:ncpus=2:host=N01+1:ncpus=1:bigmem=True");
        assert_eq!(c.properties, ["bigmem"]);
    }

    #[test]
    fn bad_specs_name_the_column() {
        let e = convert_nodespec("2:ppn=0", props, true).expect_err("ppn 0");
        assert_eq!(
            e.to_string(),
            "column 1: expected ppn=<processes per node>, a whole number of at least 1"
        );
        let e = convert_nodespec("1+^n3", props, true).expect_err("a caret");
        assert_eq!(
            e.to_string(),
            "column 3: expected ppn=, cpp=, a property or a host name (a letter or digit first, then letters, digits, - _ . =)"
        );
        let e = convert_nodespec("2#", props, true).expect_err("an empty suffix");
        assert_eq!(
            e.to_string(),
            "column 3: expected a suffix after `#`: excl, shared or a property"
        );
        let e = convert_nodespec("", props, true).expect_err("empty");
        assert_eq!(
            e.to_string(),
            "column 1: expected a node count or spec after `nodes=`"
        );
    }

    /// In the request language, `nodes=` stands for select and place, and prints converted.
    #[test]
    fn the_request_language_takes_nodes() {
        use placesim_core::{ResourceDefs, ResourceKind};
        let mut defs = ResourceDefs::default();
        defs.define("green", ResourceKind::Boolean, false)
            .expect("defined");
        let parse = |text: &str| crate::parse_request(text, &defs).map(|r| r.to_string());
        assert_eq!(
            parse("nodes=4:ppn=2:green#excl nodeset=ONEOF:FEATURE:a,b"),
            Ok(
                "select=4:ncpus=2:green=True place=scatter:excl nodeset=ONEOF:FEATURE:a,b"
                    .to_owned()
            )
        );
        let e = parse("nodes=2 select=1:ncpus=1").expect_err("both");
        assert_eq!(
            e.to_string(),
            "column 9: nodes= is the old-style form of select= and place=: give one or the other"
        );
        let e = parse("nodes=2:red").expect_err("an undefined property");
        assert_eq!(
            e.to_string(),
            "column 1: nodes= converts to select=2:ncpus=1:red=True, which is refused: unknown resource `red`"
        );
        let e = parse("place=pack nodes=2:ppn=x").expect_err("place and nodes");
        assert_eq!(e.column, 12);
    }
}
