//! How trace jobs become requests: size mappings, rules by size, queue, user and fraction,
//! and the requests file.

use placesim_core::{Arrangement, ConsumableIdx, Sharing};
use placesim_scenario::load_scenario;
use std::io::Write as _;

/// Jobs: (id, size, user, queue), submitted one a second.
fn trace(jobs: &[(u64, u32, u32, u32)]) -> String {
    let mut s = String::from("; MaxProcs: 64\n");
    for (i, &(id, size, user, queue)) in jobs.iter().enumerate() {
        s += &format!("{id} {i} 0 100 {size} -1 -1 {size} 200 -1 1 {user} 1 -1 {queue} -1 -1 -1\n");
    }
    s
}

fn scenario_with(
    dir: &std::path::Path,
    workload: &str,
    jobs: &[(u64, u32, u32, u32)],
) -> placesim_scenario::ScenarioWorkload {
    std::fs::write(dir.join("t.swf"), trace(jobs)).unwrap();
    let text = format!(
        "[[resource]]\nname = \"switch\"\ntype = \"string\"\n[[class]]\nname = \"n\"\ncount = 8\nncpus = 8\nresources = {{ switch = \"s1\" }}\n[workload]\ntrace = \"t.swf\"\n{workload}"
    );
    let path = dir.join("s.toml");
    let s = load_scenario(&text, &path).unwrap();
    s.workload().unwrap()
}

#[test]
fn default_and_node_size_mappings() {
    let dir = placesim_testkit::tempdir().unwrap();
    let w = scenario_with(dir.path(), "", &[(1, 3, 1, 1)]);
    let r = w.trace.workload.request_of(placesim_core::JobId(0));
    assert_eq!(r.chunks.len(), 1);
    assert_eq!(
        (
            r.chunks[0].count,
            r.chunks[0].amounts[ConsumableIdx::NCPUS.index()]
        ),
        (3, 1)
    );
    let w = scenario_with(
        dir.path(),
        "size_mapping = \"nodes\"\nprocs_per_node = 4\n",
        &[(1, 9, 1, 1)],
    );
    let r = w.trace.workload.request_of(placesim_core::JobId(0));
    // ceil(9 / 4) = 3 chunks of 4 ncpus, one per host, exclusively.
    assert_eq!((r.chunks[0].count, r.chunks[0].amounts[0]), (3, 4));
    assert_eq!(
        (r.arrangement, r.sharing),
        (Arrangement::Scatter, Sharing::Excl)
    );
}

#[test]
fn rules_match_by_size_queue_and_user_first_match_wins() {
    let dir = placesim_testkit::tempdir().unwrap();
    let rules = "\
[[workload.rule]]
queues = [2]
request = \"select={n}:ncpus=1 place=group=switch\"
[[workload.rule]]
users = [7]
size_min = 2
request = \"select={n}:ncpus=1:group=switch\"
[[workload.rule]]
size_min = 4
size_max = 4
request = \"select={n}:ncpus=1:switch=s1||{n}:ncpus=1\"
[[workload.rule]]
size_min = 6
size_max = 6
request = 'select={n}:ncpus=1 node_filter=\"ncpus>=8 or switch==s1\"'
[[workload.rule]]
users = [9]
request = \"select={n}:ncpus=1 nodeset=ONEOF:VARATTR:switch\"
";
    let jobs = [
        (1, 1, 7, 2),
        (2, 3, 7, 1),
        (3, 1, 7, 1),
        (4, 4, 1, 1),
        (5, 5, 1, 1),
        (6, 6, 1, 1),
        (7, 2, 9, 1),
    ];
    let w = scenario_with(dir.path(), rules, &jobs);
    let wl = &w.trace.workload;
    let d = placesim_core::JobId;
    assert!(wl.request_of(d(0)).group.is_some(), "queue 2: place=group");
    assert!(
        wl.request_of(d(1)).chunks[0].group.is_some(),
        "user 7, size 3: per-chunk group"
    );
    assert!(wl.request_of(d(2)).is_plain(), "user 7 but size 1: default");
    assert_eq!(
        wl.request_of(d(3)).alternatives.len(),
        1,
        "size 4: an alternative"
    );
    assert!(wl.request_of(d(4)).is_plain(), "size 5: default");
    assert_eq!(
        wl.request_of(d(5)).node_filter.len(),
        2,
        "size 6: node_filter alternatives"
    );
    let ns = wl
        .request_of(d(6))
        .nodeset
        .clone()
        .expect("user 9: a node set");
    assert_eq!(ns.policy, Some(placesim_core::NodeSetPolicy::OneOf));
    assert_eq!(w.by_rule, vec![1, 1, 1, 1, 1]);
}

#[test]
fn a_fraction_chooses_about_that_share_and_the_same_jobs_every_time() {
    let dir = placesim_testkit::tempdir().unwrap();
    let rules =
        "[[workload.rule]]\nfraction = 0.25\nrequest = \"select={n}:ncpus=1 place=scatter\"\n";
    let jobs: Vec<_> = (1..=4000).map(|i| (i, 2, 1, 1)).collect();
    let a = scenario_with(dir.path(), rules, &jobs);
    let b = scenario_with(dir.path(), rules, &jobs);
    let chosen = |w: &placesim_scenario::ScenarioWorkload| -> Vec<bool> {
        (0..4000)
            .map(|i| {
                w.trace
                    .workload
                    .request_of(placesim_core::JobId(i))
                    .arrangement
                    == Arrangement::Scatter
            })
            .collect()
    };
    assert_eq!(chosen(&a), chosen(&b));
    let n = a.by_rule[0];
    assert!(
        (900..=1100).contains(&n),
        "{n} of 4000 chosen for a fraction of 0.25"
    );
}

#[test]
fn the_requests_file_overrides_rules_and_reports_bad_lines() {
    let dir = placesim_testkit::tempdir().unwrap();
    let mut f = std::fs::File::create(dir.path().join("req.txt")).unwrap();
    writeln!(f, "# job id, then its request").unwrap();
    writeln!(f, "2 select=1:ncpus=8 place=excl").unwrap();
    drop(f);
    let w = scenario_with(
        dir.path(),
        "requests_file = \"req.txt\"\n[[workload.rule]]\nrequest = \"select={n}:ncpus=1 place=scatter\"\n",
        &[(1, 2, 1, 1), (2, 2, 1, 1)],
    );
    let wl = &w.trace.workload;
    assert_eq!(
        wl.request_of(placesim_core::JobId(0)).arrangement,
        Arrangement::Scatter
    );
    let r = wl.request_of(placesim_core::JobId(1));
    assert_eq!((r.chunks[0].amounts[0], r.sharing), (8, Sharing::Excl));
    assert_eq!(w.from_file, 1);

    std::fs::write(
        dir.path().join("req.txt"),
        "1 select=1:ncpus=1\n3 select=1:nccpus=2\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("t.swf"), trace(&[(1, 1, 1, 1)])).unwrap();
    let text = "[[class]]\nname = \"n\"\ncount = 1\n[workload]\ntrace = \"t.swf\"\nrequests_file = \"req.txt\"\n";
    let s = load_scenario(text, &dir.path().join("s.toml")).unwrap();
    let err = s.workload().unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{}: column 12: unknown resource `nccpus`",
            dir.path().join("req.txt").display()
        )
        .replace(": column", ":2: column")
    );
}

/// A requests file's line may give the job's project and priority as qsub does (`-P`,
/// `-p`) before the request; they reach the job. A priority outside PBS's range, or an option
/// without its value, is refused at its column.
#[test]
fn the_requests_file_gives_project_and_priority() {
    let dir = placesim_testkit::tempdir().unwrap();
    std::fs::write(
        dir.path().join("req.txt"),
        "1 -P climate -p -5 select=1:ncpus=2
2 -p 10 select=1:ncpus=1
",
    )
    .unwrap();
    let w = scenario_with(
        dir.path(),
        "requests_file = \"req.txt\"\n",
        &[(1, 2, 1, 1), (2, 1, 1, 1), (3, 1, 1, 1)],
    );
    let jobs = w.trace.workload.jobs();
    let got: Vec<(Option<&str>, Option<i64>)> = jobs
        .iter()
        .map(|j| (j.project().map(|p| &**p), j.priority()))
        .collect();
    assert_eq!(
        got,
        [(Some("climate"), Some(-5)), (None, Some(10)), (None, None)]
    );
    assert_eq!(
        w.trace.workload.request_of(placesim_core::JobId(0)).chunks[0].amounts[0],
        2
    );
    let req = dir.path().join("req.txt");
    for (line, want) in [
        (
            "1 -p 2000 select=1:ncpus=1",
            "1: column 3: `-p 2000`: expected a priority from -1024 to 1023",
        ),
        (
            "1 -P climate",
            "1: column 3: `-P` needs a value and then the request",
        ),
    ] {
        std::fs::write(&req, format!("{line}\n")).unwrap();
        let text = "[[class]]\nname = \"n\"\ncount = 1\n[workload]\ntrace = \"t.swf\"\nrequests_file = \"req.txt\"\n";
        let s = load_scenario(text, &dir.path().join("s.toml")).unwrap();
        assert_eq!(
            s.workload().unwrap_err().to_string(),
            format!("{}:{want}", req.display())
        );
    }
}

/// A Moab class's DEFAULT.NODESET becomes the request of its jobs (by SWF queue) that ask for
/// no node set themselves; a job's own `nodeset=` wins; a job that gives only
/// `nodesetisoptional` keeps the class's policy and list (field by field); other queues'
/// jobs get none.
#[test]
fn class_default_nodesets_apply_to_jobs_that_ask_for_none() {
    let dir = placesim_testkit::tempdir().unwrap();
    let extra = "\
[[workload.rule]]
users = [2]
request = \"select={n}:ncpus=1 nodeset=ANYOF:FEATURE:own\"
[[workload.rule]]
users = [3]
request = \"select={n}:ncpus=1 nodesetisoptional=true\"
[moab]
[[moab.class]]
name = \"amd\"
default_nodeset = \"ONEOF:FEATURE:ATHLON,OPTERON\"
swf_queues = [3]
";
    let w = scenario_with(
        dir.path(),
        extra,
        &[(1, 2, 1, 3), (2, 2, 2, 3), (3, 2, 1, 1), (4, 2, 3, 3)],
    );
    let nodeset = |j: u32| {
        w.trace
            .workload
            .request_of(placesim_core::JobId(j))
            .nodeset
            .clone()
    };
    let feature = |f: &str| placesim_core::NodeSetValue::Feature(f.to_owned());
    let class = nodeset(0).expect("the class default");
    assert_eq!(class.policy, Some(placesim_core::NodeSetPolicy::OneOf));
    assert_eq!(class.values, vec![feature("ATHLON"), feature("OPTERON")]);
    let own = nodeset(1).expect("the job's own");
    assert_eq!(
        (own.policy, own.values),
        (
            Some(placesim_core::NodeSetPolicy::AnyOf),
            vec![feature("own")]
        )
    );
    assert_eq!(nodeset(2), None);
    let merged = nodeset(3).expect("the class default under the job's own field");
    assert_eq!(
        (merged.policy, merged.values, merged.is_optional),
        (
            Some(placesim_core::NodeSetPolicy::OneOf),
            vec![feature("ATHLON"), feature("OPTERON")],
            Some(true)
        )
    );
}

#[test]
fn arrival_scale_compresses_submits_from_the_first_and_keeps_their_order() {
    let dir = placesim_testkit::tempdir().unwrap();
    // Submits 0, 1, ..., 9 (one a second), scaled by 0.5: 0, 0.5 → 1 (rounded half away),
    // 1, 1.5 → 2, ...
    let jobs: Vec<(u64, u32, u32, u32)> = (1..=10).map(|i| (i, 1, 1, 1)).collect();
    let w = scenario_with(dir.path(), "arrival_scale = 0.5\n", &jobs);
    let submits: Vec<u64> = w
        .trace
        .workload
        .jobs()
        .iter()
        .map(|j| j.submit.as_secs())
        .collect();
    assert_eq!(submits, [0, 1, 1, 2, 2, 3, 3, 4, 4, 5]);
}

#[test]
fn metrics_windows_trim_by_share_of_jobs_or_by_time() {
    use placesim_scenario::{MetricsSettings, Trim};
    let dir = placesim_testkit::tempdir().unwrap();
    let jobs: Vec<(u64, u32, u32, u32)> = (1..=20).map(|i| (i, 1, 1, 1)).collect();
    let w = scenario_with(dir.path(), "", &jobs);
    let cluster = placesim_core::Cluster::homogeneous(4, 1).unwrap();
    let window = |warmup, cooldown| {
        let m = MetricsSettings {
            sample_every: None,
            warmup,
            cooldown,
            exec_vnode: false,
        };
        let c = m.measurement(&cluster, None, &w.trace.workload);
        (
            c.window_start.map(|t| t.as_secs()),
            c.window_end.map(|t| t.as_secs()),
        )
    };
    // 20 jobs submitted at 0..=19: 10 % leaves out the first two and the last two.
    assert_eq!(
        window(Trim::JobShare(0.1), Trim::JobShare(0.1)),
        (Some(2), Some(17))
    );
    assert_eq!(
        window(Trim::Seconds(5), Trim::Seconds(4)),
        (Some(5), Some(15))
    );
    assert_eq!(window(Trim::None, Trim::None), (None, None));
    assert_eq!(Trim::parse("5%"), Some(Trim::JobShare(0.05)));
    assert_eq!(Trim::parse("1:00:00"), Some(Trim::Seconds(3600)));
    assert_eq!(Trim::parse("0"), Some(Trim::None));
    assert_eq!(Trim::parse("60%"), None);
}

/// Jobs name their PBS queue or Moab class (qsub -q): in the requests file, or by a rule on
/// the SWF user, group or partition; the name wins over the SWF queue's mapping. A name that
/// is neither a queue nor a class is refused at its line and column (file) or key (rule).
#[test]
fn jobs_name_their_queue_or_class() {
    let dir = placesim_testkit::tempdir().unwrap();
    std::fs::write(
        dir.path().join("req.txt"),
        "1 -q short select=1:ncpus=1\n2 -P climate -q amd select=1:ncpus=1\n",
    )
    .unwrap();
    // Jobs 1 and 2 from the file; job 3 (group 1) by the rule; job 4 (user 2) by no rule:
    // SWF queue 1, which [[pbs.queue]] short lists.
    let queues = "[[pbs.queue]]\nname = \"short\"\nswf_queues = [1]\n\
                  [[pbs.queue]]\nname = \"long\"\n\
                  [[moab.class]]\nname = \"amd\"\n";
    let workload = format!(
        "requests_file = \"req.txt\"\n[[workload.rule]]\nrequest = \"select={{n}}:ncpus=1\"\n\
         users = [1]\ngroups = [1]\npartitions = [1]\nqueue = \"long\"\n{queues}"
    );
    std::fs::write(
        dir.path().join("t.swf"),
        "; MaxProcs: 64\n\
         1 0 0 100 1 -1 -1 1 200 -1 1 1 1 -1 2 1 -1 -1\n\
         2 1 0 100 1 -1 -1 1 200 -1 1 1 1 -1 2 1 -1 -1\n\
         3 2 0 100 1 -1 -1 1 200 -1 1 1 1 -1 2 1 -1 -1\n\
         4 3 0 100 1 -1 -1 1 200 -1 1 2 1 -1 1 1 -1 -1\n",
    )
    .unwrap();
    let text = format!(
        "[[class]]\nname = \"n\"\ncount = 2\nncpus = 8\n[workload]\ntrace = \"t.swf\"\n{workload}"
    );
    let scenario = load_scenario(&text, &dir.path().join("s.toml")).unwrap();
    let w = scenario.workload().unwrap();
    let got: Vec<(Option<u32>, Option<u32>)> = (0..4)
        .map(|i| {
            let r = w.trace.workload.request_of(placesim_core::JobId(i));
            (r.queue, r.class)
        })
        .collect();
    assert_eq!(
        got,
        [
            (Some(0), None),
            (None, Some(0)),
            (Some(1), None),
            (Some(0), None)
        ]
    );
    std::fs::write(
        dir.path().join("req.txt"),
        "1 -q nowhere select=1:ncpus=1\n",
    )
    .unwrap();
    let scenario = load_scenario(&text, &dir.path().join("s.toml")).unwrap();
    assert_eq!(
        scenario.workload().unwrap_err().to_string(),
        format!(
            "{}:1: column 6: unknown queue or class `nowhere`: define it under [[pbs.queue]] \
             or [[moab.class]]",
            dir.path().join("req.txt").display()
        )
    );
    let bad = text.replace("queue = \"long\"", "queue = \"lnog\"");
    let err = load_scenario(&bad, &dir.path().join("s.toml")).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}:13:9: key `workload.rule.queue`: unknown queue or class `lnog`: define it \
             under [[pbs.queue]] or [[moab.class]]",
            dir.path().join("s.toml").display()
        )
    );
}

/// Extended SWF: a trace line may carry fields after the 18th, and `request_field` names
/// the one holding each job's request (here an old-style node spec, converted by PBS's
/// rules). The requests file still comes first; a field of `-1` falls through to the rules
/// and the size mapping; a request that does not parse is an error naming the job.
#[test]
fn an_extended_swf_field_gives_jobs_their_own_requests() {
    let dir = placesim_testkit::tempdir().unwrap();
    let line = |id: u64, extra: &str| {
        format!("{id} {id} 0 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1 n1,n2 {extra}\n")
    };
    let swf = format!(
        "; MaxProcs: 64\n{}{}{}",
        line(1, "nodes=2:ppn=4#excl"),
        line(2, "-1"),
        line(3, "select=1:ncpus=2")
    );
    std::fs::write(dir.path().join("t.swf"), &swf).unwrap();
    std::fs::write(dir.path().join("req.txt"), "3 select=2:ncpus=1\n").unwrap();
    let scenario = |extra: &str| {
        load_scenario(
            &format!(
                "[[class]]\nname = \"n\"\ncount = 8\nncpus = 8\n[workload]\ntrace = \"t.swf\"\nrequests_file = \"req.txt\"\nrequest_field = 20\n{extra}"
            ),
            &dir.path().join("s.toml"),
        )
    };
    let w = scenario("").unwrap().workload().unwrap();
    let text_of = |i: u32| {
        let id = w.trace.workload.jobs()[i as usize].request;
        w.request_texts[id.index()].clone()
    };
    assert_eq!(text_of(0), "nodes=2:ppn=4#excl");
    assert_eq!(text_of(1), "select=2:ncpus=1");
    assert_eq!(text_of(2), "select=2:ncpus=1");
    let r = w.trace.workload.request_of(placesim_core::JobId(0));
    assert_eq!(
        (r.chunks[0].count, r.chunks[0].amounts[0], r.sharing),
        (2, 4, Sharing::Excl)
    );
    assert_eq!((w.from_field, w.from_file), (1, 1));

    std::fs::write(
        dir.path().join("t.swf"),
        swf.replace("nodes=2:ppn=4#excl", "select=x"),
    )
    .unwrap();
    let err = scenario("").unwrap().workload().unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{}:1:1: key `workload.request_field`: field 20 of job 1 in {}: request `select=x`: column 9: expected `=`, `!=`, `<`, `>`, `<=` or `>=`",
            dir.path().join("s.toml").display(),
            dir.path().join("t.swf").display()
        )
    );
    let err = load_scenario(
        "[[class]]\nname = \"n\"\ncount = 1\n[workload]\ntrace = \"t.swf\"\nrequest_field = 18\n",
        &dir.path().join("s.toml"),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        format!(
            "{}:6:17: key `workload.request_field`: 18: expected a field after SWF's 18, from 19 to 1000",
            dir.path().join("s.toml").display()
        )
    );
}

/// A trace whose jobs ask for memory (SWF field 10, KiB per processor): (id, size, memory).
fn trace_with_memory(jobs: &[(u64, u32, i64)]) -> String {
    let mut s = String::from("; MaxProcs: 64\n");
    for (i, &(id, size, kib)) in jobs.iter().enumerate() {
        s += &format!("{id} {i} 0 100 {size} -1 -1 {size} 200 {kib} 1 1 1 -1 1 -1 -1 -1\n");
    }
    s
}

/// Loads a scenario of 8 vnodes with `mem` each (or none) over `jobs`.
fn with_memory(
    dir: &std::path::Path,
    mem: &str,
    workload: &str,
    jobs: &[(u64, u32, i64)],
) -> Result<placesim_scenario::ScenarioWorkload, String> {
    std::fs::write(dir.join("t.swf"), trace_with_memory(jobs)).unwrap();
    let text = format!(
        "[[class]]\nname = \"n\"\ncount = 8\nncpus = 8\n{mem}[workload]\ntrace = \"t.swf\"\n{workload}"
    );
    let s = load_scenario(&text, &dir.join("s.toml")).map_err(|e| e.to_string())?;
    s.workload().map_err(|e| e.to_string())
}

/// The request text each job got, in job order.
fn texts(w: &placesim_scenario::ScenarioWorkload) -> Vec<&str> {
    w.trace
        .workload
        .jobs()
        .iter()
        .map(|j| w.request_texts[j.request.index()].as_str())
        .collect()
}

#[test]
fn the_size_mapping_asks_for_the_memory_of_swf_field_10() {
    let dir = placesim_testkit::tempdir().unwrap();
    let jobs = [(1, 4, 1024), (2, 4, -1), (3, 4, 1024), (4, 5, 2048)];
    // One chunk per processor, each with the processor's memory; jobs without it as before;
    // jobs of the same size and memory share their request.
    let w = with_memory(dir.path(), "mem = \"16gb\"\n", "", &jobs).unwrap();
    assert_eq!(
        texts(&w),
        [
            "select=4:ncpus=1:mem=1024kb",
            "select=4:ncpus=1",
            "select=4:ncpus=1:mem=1024kb",
            "select=5:ncpus=1:mem=2048kb"
        ]
    );
    let asked = w.trace.workload.request_of(placesim_core::JobId(0));
    assert_eq!(asked.chunks[0].amounts[ConsumableIdx::MEM.index()], 1024);
    // Whole nodes: each chunk asks for its P processors' memory.
    let nodes = "size_mapping = \"nodes\"\nprocs_per_node = 4\n";
    let w = with_memory(dir.path(), "mem = \"16gb\"\n", nodes, &jobs).unwrap();
    assert_eq!(
        texts(&w)[3],
        "select=2:ncpus=4:mem=8192kb place=scatter:excl"
    );
    // memory = "none" leaves it out.
    let none = "memory = \"none\"\n";
    let w = with_memory(dir.path(), "mem = \"16gb\"\n", none, &jobs).unwrap();
    assert_eq!(texts(&w)[0], "select=4:ncpus=1");
    // Rules give their own request: the memory is the size mapping's only.
    let rule = "[[workload.rule]]\nsize_min = 5\nrequest = \"select={n}:ncpus=1\"\n";
    let w = with_memory(dir.path(), "mem = \"16gb\"\n", rule, &jobs).unwrap();
    assert_eq!(texts(&w)[3], "select=5:ncpus=1");
}

#[test]
fn memory_asked_of_a_cluster_without_mem_is_an_error_naming_the_job() {
    let dir = placesim_testkit::tempdir().unwrap();
    let err = with_memory(dir.path(), "", "", &[(1, 2, -1), (7, 2, 512)]).unwrap_err();
    let trace = dir.path().join("t.swf");
    assert_eq!(
        err,
        format!(
            "{}:6:9: key `workload.memory`: job 7 of {} asks for 512 KiB of memory per processor (SWF \
             field 10), and no vnode has mem: give the vnodes mem, or set memory = \"none\"",
            dir.path().join("s.toml").display(),
            trace.display()
        )
    );
    // Without memory from the trace, the same cluster runs the same jobs.
    let w = with_memory(dir.path(), "", "memory = \"none\"\n", &[(7, 2, 512)]).unwrap();
    assert_eq!(texts(&w), ["select=2:ncpus=1"]);
    let err = with_memory(dir.path(), "", "memory = \"yes\"\n", &[(7, 2, 512)]).unwrap_err();
    assert_eq!(
        err,
        format!(
            "{}:7:10: key `workload.memory`: unknown value `yes`: expected one of trace, none",
            dir.path().join("s.toml").display()
        )
    );
}

/// Rules read a job's own values: `{fieldN}` (extended SWF) and `{mem}` (SWF field 10). A
/// rule reading a value the job lacks does not match it, and the next rule or the size
/// mapping gives its request; jobs whose rule read their own values do not share by size.
#[test]
fn rules_read_extended_fields_and_memory() {
    let dir = placesim_testkit::tempdir().unwrap();
    let line = |id: u64, kib: i64, model: &str| {
        format!("{id} {id} 0 100 2 -1 -1 2 200 {kib} 1 1 1 -1 1 -1 -1 -1 n1,n2 {model}\n")
    };
    std::fs::write(
        dir.path().join("t.swf"),
        format!(
            "; MaxProcs: 64\n{}{}{}{}",
            line(1, -1, "skylake"),
            line(2, 512, "-1"),
            line(3, -1, "-1"),
            line(4, 512, "haswell"),
        ),
    )
    .unwrap();
    let scenario = |rules: &str| {
        load_scenario(
            &format!(
                "[[resource]]\nname = \"model\"\ntype = \"string\"\n\
                 [[class]]\nname = \"n\"\ncount = 8\nncpus = 8\nmem = \"16gb\"\n\
                 [workload]\ntrace = \"t.swf\"\nmemory = \"none\"\n{rules}"
            ),
            &dir.path().join("s.toml"),
        )
    };
    let rules = "[[workload.rule]]\nrequest = \"select={n}:ncpus=1:model={field20}\"\n\
                 [[workload.rule]]\nrequest = \"select={n}:ncpus=1:mem={mem}\"\n";
    let w = scenario(rules).unwrap().workload().unwrap();
    assert_eq!(
        texts(&w),
        [
            "select=2:ncpus=1:model=skylake",
            "select=2:ncpus=1:mem=512kb",
            "select=2:ncpus=1",
            "select=2:ncpus=1:model=haswell",
        ]
    );
    assert_eq!(w.by_rule, [2, 1]);
    // A field before the 19th is refused at the rule.
    let err = scenario("[[workload.rule]]\nrequest = \"select={n}:ncpus=1:model={field5}\"\n")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "{}:13:11: key `workload.rule.request`: `{{field5}}`: expected a field after the 18th, such as {{field19}}: the standard fields are the job's size, queue, user, group and memory",
            dir.path().join("s.toml").display()
        )
    );
}
