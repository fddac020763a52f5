//! A mutation fuzzer for the parsers: no input makes any of them panic, and whatever parses as
//! a request prints to a form that parses back to the same request.
//!
//! `cargo test -p placesim-request --test it fuzz` runs a short burst; set
//! `PLACESIM_FUZZ_SECONDS=600` for a long run. It prints how many inputs it tried.

use crate::common::defs;
use placesim_request::{parse_bool, parse_duration, parse_nodeset, parse_request, parse_size};
use std::time::{Duration, Instant};

const SEEDS: &[&str] = &[
    "select=2:ncpus=1:group=shape+2:ncpus=1",
    "select=2:ncpus=1:group=color+2:ncpus=1:group=shape place=scatter:excl",
    "select=1:ncpus=4:color!=green:speed>=1.5||2:ncpus=2:mem=4gb",
    "select=3:ncpus=2:mem=18gb node_filter=\"ncpus<=8 and model==Skylake or not (ncpus>=8)\"",
    "select=1:model='a b' nodeset=ONEOF:VARATTR:model=x,switch nodesetisoptional=true nodesetdelay=1:00",
    "select=4:ncpus=8 place=pack:exclhost:group=switch",
];

const PIECES: &[&str] = &[
    "select=",
    "place=",
    "node_filter=",
    "nodeset=",
    ":",
    "+",
    "||",
    "=",
    "!=",
    "<=",
    ">",
    "\"",
    "'",
    " ",
    "(",
    ")",
    " and ",
    " or ",
    "not ",
    "group=",
    "ncpus",
    "mem",
    "4gb",
    "0",
    "-1",
    "99999999999999999999",
    "1.5e308",
    "True",
    "é",
    "\u{0}",
    "resources_assigned.",
    "ONEOF",
    "VARATTR",
    "FEATURE",
    ",",
    "tb",
    "nodesetdelay=",
    "::",
];

/// SplitMix64: a seeded, portable generator, so a failure replays.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn mutate(rng: &mut Rng, input: &str) -> String {
    let mut chars: Vec<char> = input.chars().collect();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(chars.len() + 1);
        match rng.below(4) {
            0 if !chars.is_empty() => {
                let end = (at + 1 + rng.below(6)).min(chars.len());
                chars.drain(at.min(end)..end);
            }
            1 => {
                let piece = PIECES[rng.below(PIECES.len())];
                chars.splice(at..at, piece.chars());
            }
            2 if !chars.is_empty() => {
                let i = rng.below(chars.len());
                chars[i] = char::from_u32(rng.below(128) as u32).unwrap_or('?');
            }
            _ => {
                let other: Vec<char> = SEEDS[rng.below(SEEDS.len())].chars().collect();
                let from = rng.below(other.len());
                let to = (from + rng.below(12)).min(other.len());
                chars.splice(at..at, other[from..to].iter().copied());
            }
        }
    }
    chars.into_iter().collect()
}

#[test]
fn fuzz_parser_never_panics_and_round_trips() {
    let seconds: f64 = std::env::var("PLACESIM_FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2.0);
    let d = defs();
    let mut rng = Rng(0x5eed);
    let mut corpus: Vec<String> = SEEDS.iter().map(|s| s.to_string()).collect();
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let (mut tried, mut parsed) = (0u64, 0u64);
    while Instant::now() < deadline {
        for _ in 0..256 {
            let base = &corpus[rng.below(corpus.len())];
            let input = mutate(&mut rng, base);
            tried += 1;
            // The parsers that stand on their own (a class's DEFAULT.NODESET, scenario sizes
            // and durations) get every mutant too: none may panic.
            let _ = (
                parse_nodeset(&input, &d),
                parse_size(&input),
                parse_duration(&input),
                parse_bool(&input),
            );
            if let Some(tail) = input.split_once("nodeset=").map(|(_, t)| t) {
                let _ = parse_nodeset(tail, &d);
            }
            if let Ok(req) = parse_request(&input, &d) {
                parsed += 1;
                let text = req.to_string();
                assert_eq!(
                    parse_request(&text, &d).as_ref(),
                    Ok(&req),
                    "input {input:?} printed as {text:?}"
                );
                if corpus.len() < 4096 {
                    corpus.push(input);
                }
            }
        }
    }
    eprintln!(
        "fuzz: {tried} inputs tried, {parsed} parsed, corpus {}",
        corpus.len()
    );
    assert!(tried > 1000, "the fuzzer ran: {tried} inputs");
    assert!(parsed > 0, "some mutants are valid requests");
}

/// Structure-aware generation, beside the mutations above: requests from the grammar, with
/// nesting as deep and lists as long as a hostile user would write them, and extreme values at
/// every numeric field, in every unit.
mod grammar {
    use super::Rng;
    use crate::common::defs;
    use placesim_request::{MAX_FILTER_DEPTH, RequestErrorKind, lower, parse_request};

    const VALUES: &[&str] = &[
        "0",
        "1",
        "-1",
        "4294967295",
        "4294967296",
        "18446744073709551615",
        "99999999999999999999999999",
        "1.5e308",
        "1e309",
        "-0",
        "NaN",
        "inf",
        "1b",
        "1kb",
        "7mb",
        "3gb",
        "2tb",
        "9999999999tb",
        "1KB",
        "1w",
        "True",
        "False",
        "red",
        "'a b'",
    ];
    const RESOURCES: &[&str] = &[
        "ncpus", "mem", "ngpus", "color", "features", "bigmem", "speed", "gen", "scratch",
        "licenses", "switch", "vnode", "host",
    ];
    const OPS: &[&str] = &["==", "!=", "<", ">", "<=", ">="];

    /// Well-formed pairs, so that most requests get as far as their deep or long parts.
    const VALID: &[(&str, &str)] = &[
        ("ncpus", "4"),
        ("ncpus", "4294967295"),
        ("mem", "3gb"),
        ("mem", "9999999999tb"),
        ("ngpus", "0"),
        ("color", "red"),
        ("bigmem", "True"),
        ("speed", "1.5e308"),
        ("gen", "-1"),
        ("scratch", "10kb"),
        ("licenses", "2"),
    ];

    fn pick<'a>(rng: &mut Rng, from: &[&'a str]) -> &'a str {
        from[rng.below(from.len())]
    }

    /// A resource and a value: in a hostile request, anything one time in four; otherwise
    /// well formed.
    fn pair(rng: &mut Rng, hostile: bool) -> (String, String) {
        if hostile && rng.below(4) == 0 {
            (
                pick(rng, RESOURCES).to_owned(),
                pick(rng, VALUES).to_owned(),
            )
        } else {
            let (r, v) = VALID[rng.below(VALID.len())];
            (r.to_owned(), v.to_owned())
        }
    }

    /// A node_filter nested exactly `depth` levels of `(` or `not`, with chains of `and` and
    /// `or` along the way.
    fn filter(rng: &mut Rng, depth: usize, hostile: bool) -> String {
        let (resource, value) = pair(rng, hostile);
        let mut inner = format!("{resource}{}{}", pick(rng, OPS), value.trim_matches('\''));
        for _ in 0..depth {
            inner = match rng.below(3) {
                0 => format!("not {inner}"),
                1 => format!("({inner})"),
                _ => format!(
                    "({inner} {} {}>=1)",
                    if rng.below(2) == 0 { "and" } else { "or" },
                    pick(rng, RESOURCES)
                ),
            };
        }
        inner
    }

    fn chunk(rng: &mut Rng, hostile: bool) -> String {
        let counts: &[&str] = if hostile {
            &["1", "2", "64", "4294967295", "4294967296", "0"]
        } else {
            &["1", "2", "64", "4294967295"]
        };
        let mut c = pick(rng, counts).to_owned();
        for _ in 0..rng.below(4) {
            let (resource, value) = pair(rng, hostile);
            c += &format!(
                ":{resource}{}{value}",
                if rng.below(4) == 0 { "!=" } else { "=" },
            );
        }
        c
    }

    fn select(rng: &mut Rng, chunks: usize, hostile: bool) -> String {
        (0..chunks.max(1))
            .map(|_| chunk(rng, hostile))
            .collect::<Vec<_>>()
            .join("+")
    }

    #[test]
    fn generated_requests_parse_or_fail_with_a_message_and_never_crash() {
        let d = defs();
        let mut rng = Rng(0x6a77);
        let (mut tried, mut parsed, mut too_deep) = (0u64, 0u64, 0u64);
        for round in 0..400 {
            let hostile = round % 3 == 0;
            // Long `||` chains and chunk lists every few rounds.
            let alternatives = if round % 10 == 0 {
                300
            } else {
                1 + rng.below(3)
            };
            let chunks = if round % 7 == 0 {
                500
            } else {
                1 + rng.below(3)
            };
            let select = (0..alternatives)
                .map(|_| select(&mut rng, chunks / alternatives.min(chunks), hostile))
                .collect::<Vec<_>>()
                .join("||");
            let depth = match round % 4 {
                0 => MAX_FILTER_DEPTH,
                1 => MAX_FILTER_DEPTH + 1 + rng.below(5000),
                _ => rng.below(20),
            };
            let text = format!(
                "select={select} place={} node_filter=\"{}\"",
                pick(
                    &mut rng,
                    &[
                        "free",
                        "pack",
                        "scatter:excl",
                        "group=switch",
                        "vscatter:shared"
                    ]
                ),
                filter(&mut rng, depth, hostile)
            );
            tried += 1;
            match parse_request(&text, &d) {
                Ok(request) => {
                    parsed += 1;
                    assert!(depth <= MAX_FILTER_DEPTH, "depth {depth} parsed");
                    let printed = request.to_string();
                    assert_eq!(parse_request(&printed, &d).as_ref(), Ok(&request));
                    let _ = lower(&request, &d);
                }
                Err(e) => {
                    let message = e.to_string();
                    assert!(message.starts_with("column "), "{message}");
                    if e.kind == RequestErrorKind::TooDeep(MAX_FILTER_DEPTH) {
                        too_deep += 1;
                        assert!(depth > MAX_FILTER_DEPTH, "depth {depth} refused");
                    }
                }
            }
        }
        eprintln!("grammar: {tried} requests, {parsed} parsed, {too_deep} refused as too deep");
        assert!(
            parsed > 0 && too_deep > 0,
            "{parsed} parsed, {too_deep} too deep"
        );
    }
}
