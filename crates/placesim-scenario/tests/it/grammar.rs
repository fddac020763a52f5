//! Structure-aware fuzzing of the scenario loader: scenarios generated from the format's own
//! grammar (every table, most keys), with extreme values at every numeric field, every unit,
//! long lists and counts past the limits. The loader returns a scenario or an error naming
//! `test.toml`, never panics; a loaded scenario describes itself and draws its outages.

use crate::load_text;
use placesim_core::Workload;
use rand::{RngExt, SeedableRng};

/// A seeded generator, so a failure replays, and whether this scenario is hostile.
struct Rng(rand_pcg::Pcg64Mcg, bool);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0.random_range(0..n)
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
    /// `usual`, or in a hostile scenario (the flag) one time in four anything from `extreme`.
    fn value<'a>(&mut self, usual: &'a str, extreme: &[&'a str]) -> &'a str {
        if self.1 && self.below(4) == 0 {
            self.pick(extreme)
        } else {
            usual
        }
    }
}

const INTEGERS: &[&str] = &[
    "0",
    "-1",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "1.5",
    "\"7\"",
    "true",
];
const FLOATS: &[&str] = &["0.0", "-1.0", "1e308", "1e-308", "nan", "inf", "-inf", "7"];
const DURATIONS: &[&str] = &[
    "0",
    "\"00:00:00\"",
    "\"99:99:99:99\"",
    "\"1:00\"",
    "1099511627776",
    "9223372036854775807",
    "\"-5\"",
    "\"\"",
    "\"10%\"",
];
const SIZES: &[&str] = &[
    "\"1b\"",
    "\"1kb\"",
    "\"7mb\"",
    "\"3gb\"",
    "\"2tb\"",
    "\"9999999999tb\"",
    "\"1KB\"",
    "\"1w\"",
    "\"-1gb\"",
    "\"gb\"",
];

fn scenario(rng: &mut Rng) -> String {
    let mut t = String::new();
    t += &format!(
        "[run]\nseed = {}\ndiscipline = \"{}\"\nplacement = \"{}\"\nbackfill_depth = {}\n",
        rng.value("1", INTEGERS),
        rng.value("easy", &["fcfs", "greedy", "conservative", "x"]),
        rng.value("pbs", &["first-fit", "moab", "y"]),
        rng.value("2", INTEGERS),
    );
    t += "[[resource]]\nname = \"switch\"\ntype = \"string\"\n";
    t += "[[resource]]\nname = \"features\"\ntype = \"string_array\"\n";
    let classes = 1 + rng.below(4);
    for c in 0..classes {
        let count = rng_count(rng);
        t += &format!(
            "[[class]]\nname = \"c{c}\"\ncount = {}\nncpus = {}\nmem = {}\nspeed = {}\nvnodes_per_host = {}\nresources = {{ switch = \"s{}\", features = [\"a\", \"b\"] }}\n",
            rng.value(count, &["0", "1000001", "4294967295", "-1"]),
            rng.value("4", INTEGERS),
            rng.value("\"3gb\"", SIZES),
            rng.value("1.0", FLOATS),
            rng.value("2", INTEGERS),
            c % 2,
        );
    }
    if rng.below(3) == 0 {
        t += &format!(
            "[pbs]\nnode_group_enable = true\nnode_group_key = [\"switch\"]\n{}scheduler_iteration = {}\n",
            // Settings that may contradict [run]'s discipline, in hostile scenarios only.
            rng.value(
                "",
                &["strict_ordering = false\n", "backfill_depth = 4294967295\n"]
            ),
            rng.value("\"00:10:00\"", DURATIONS),
        );
    }
    if rng.below(3) == 0 {
        t += &format!(
            "[moab]\nnodeset_policy = \"{}\"\nnodeset_attribute = \"FEATURE\"\nnodeset_list = [{}]\nnodeset_delay = {}\nnodeset_tolerance = {}\n{}",
            rng.value("ONEOF", &["ANYOF", "FIRSTOF", "NONE"]),
            (0..rng.below(300))
                .map(|i| format!("\"v{i}\""))
                .collect::<Vec<_>>()
                .join(", "),
            rng.value("0", DURATIONS),
            rng.value("0.1", FLOATS),
            rng.value(
                "",
                &[
                    "reservation_depth = 4294967295\n",
                    "reservation_depth = -1\n"
                ]
            ),
        );
    }
    if rng.below(2) == 0 {
        t += &format!(
            "[workload.generator]\njobs = {}\nmax_estimate = {}\nload = {}\n[workload.generator.batch]\nulow = {}\numed = {}\nuhi = {}\na1 = {}\nanum = {}\n",
            rng.value("50", &["0", "50000001", "18446744073709551615", "-3"]),
            rng.value("\"48:00:00\"", DURATIONS),
            rng.value("0.7", FLOATS),
            rng.value("1.2", FLOATS),
            rng.value("5.0", FLOATS),
            rng.value("7.0", FLOATS),
            rng.value("6.57", FLOATS),
            rng.value("6.1", FLOATS),
        );
        for _ in 0..rng.below(40) {
            t += &format!(
                "[[workload.rule]]\nrequest = \"select={{n}}:ncpus=1{}\"\nsize_min = {}\nfraction = {}\n",
                rng.pick(&[
                    "",
                    " place=group=switch",
                    "||1:ncpus=2",
                    " node_filter='((ncpus>=1))'"
                ]),
                rng.value("1", INTEGERS),
                rng.value("0.5", FLOATS),
            );
        }
    }
    if rng.below(3) == 0 {
        t += &format!(
            "[[failures.outage]]\nclass = \"c0\"\ndown = {}\nup = {}\n[[failures.model]]\nclass = \"c0\"\nmtbf = {}\nmttr = {}\n",
            rng.value("10", DURATIONS),
            rng.value("100", DURATIONS),
            rng.value("\"100:00:00\"", DURATIONS),
            rng.value("\"1:00:00\"", DURATIONS),
        );
    }
    t += &format!(
        "[metrics]\nsample_every = {}\nwarmup = {}\n",
        rng.value("\"1:00:00\"", DURATIONS),
        rng.value("\"5%\"", DURATIONS)
    );
    t
}

fn rng_count(rng: &mut Rng) -> &'static str {
    ["1", "4", "64", "1000"][rng.below(4)]
}

#[test]
fn generated_scenarios_load_or_fail_with_a_message_and_never_crash() {
    let mut rng = Rng(rand_pcg::Pcg64Mcg::seed_from_u64(0x5ce7), false);
    let empty = Workload::new(Vec::new(), Vec::new()).unwrap();
    let (mut loaded, mut refused) = (0, 0);
    for round in 0..300 {
        rng.1 = round % 2 == 0;
        let text = scenario(&mut rng);
        match load_text(&text) {
            Ok(s) => {
                loaded += 1;
                let _ = placesim_scenario::describe(&s);
                if let Err(e) = s.outages(&empty) {
                    assert!(e.to_string().starts_with("test.toml"), "{e}");
                }
            }
            Err(e) => {
                refused += 1;
                let message = e.to_string();
                assert!(message.starts_with("test.toml"), "{message}\n{text}");
                assert!(!message.contains('\n'), "one line: {message}");
            }
        }
    }
    eprintln!("grammar: 300 scenarios, {loaded} loaded, {refused} refused");
    assert!(
        loaded > 0 && refused > 0,
        "{loaded} loaded, {refused} refused"
    );
}
