//! `import_pbs` on hand-written fixtures in PBS's own formats (tests/data/snap: a snapshot
//! of four vnodes, two days of accounting logs with every quirk of site-inputs.md §3.7).

use placesim_import::{
    ImportOptions, Imported, PbsInputs, SkipReason, TorqueInputs, import_pbs, import_torque_moab,
};
use std::path::{Path, PathBuf};

fn data(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(p)
}

fn snapshot() -> PbsInputs {
    PbsInputs::from_snapshot(&data("snap")).expect("the fixture snapshot")
}

fn file<'a>(imported: &'a Imported, name: &str) -> &'a str {
    &imported
        .files
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .1
}

#[test]
fn a_snapshot_directory_is_found_file_by_file() {
    let i = snapshot();
    let names: Vec<String> = [
        Some(&i.nodes),
        i.server.as_ref(),
        i.resources.as_ref(),
        i.sched.as_ref(),
        i.sched_config.as_ref(),
    ]
    .into_iter()
    .map(|p| {
        p.map(|p| p.strip_prefix(data("snap")).unwrap().display().to_string())
            .unwrap_or_default()
    })
    .collect();
    assert_eq!(
        names,
        [
            "node/pbsnodes_va.out",
            "server/qmgr_ps.out",
            "server_priv/resourcedef",
            "scheduler/qmgr_lsched.out",
            "sched_priv/sched_config"
        ]
    );
    assert_eq!(i.resource_group, None);
    assert_eq!(i.accounting.len(), 2);
    let e = PbsInputs::from_snapshot(&data("no-such-dir")).unwrap_err();
    assert!(e.to_string().starts_with("the vnodes: none of "), "{e}");
}

#[test]
fn every_quirk_of_the_logs_is_counted() {
    let imported = import_pbs(&snapshot(), ImportOptions::default()).unwrap();
    let c = &imported.counts;
    let records: Vec<(&str, u64)> = c
        .log
        .records
        .iter()
        .map(|(k, n)| (k.as_str(), *n))
        .collect();
    assert_eq!(
        records,
        [("A", 1), ("D", 2), ("E", 8), ("Q", 9), ("R", 1), ("S", 8)]
    );
    assert_eq!(
        (
            c.replayed,
            c.running_at_start,
            c.queued_at_start,
            c.unfinished_at_end
        ),
        (7, 1, 0, 1)
    );
    assert_eq!(
        (
            c.log.requeued,
            c.log.deleted_while_running,
            c.log.routed,
            c.log.array_subjobs,
            c.log.array_parents
        ),
        (1, 1, 1, 2, 1)
    );
    assert_eq!(
        c.skipped.iter().map(|(r, n)| (*r, *n)).collect::<Vec<_>>(),
        [
            (SkipReason::DeletedWhileQueued, 1),
            (SkipReason::NeverStarted, 1)
        ]
    );
    assert_eq!(
        c.resources_not_matched
            .iter()
            .map(|(r, n)| (r.as_str(), *n))
            .collect::<Vec<_>>(),
        [("ompthreads", 1)]
    );
    assert_eq!(
        (c.vnodes_out_of_service, c.vnodes_out_of_service_but_used),
        (1, 1)
    );
    assert_eq!(
        c.jobs_per_queue
            .iter()
            .map(|(q, n)| (q.as_str(), *n))
            .collect::<Vec<_>>(),
        [("workq", 8)]
    );
    let report = file(&imported, "import-report.md");
    assert!(
        report.contains("| requeued (replayed from the first start, the last run's length) | 1 |")
    );
    assert!(
        report.contains("| deleted before it started (a withdrawal is not replayed yet) | 1 |")
    );
    assert!(report.contains("| server resources_default.ncpus = 1 | qmgr_ps.out:27 | job-wide defaults: the logs record each job's select, walltime and resources as PBS completed them |"));
    // The server's default_chunk is PBS's schedselect, which the logs do not hold: applied.
    assert!(
        report.contains("| default_chunk | `{ ncpus = \"1\" }` | qmgr_ps.out:28 |"),
        "{report}"
    );
    assert!(
        file(&imported, "scenario.toml")
            .contains("default_chunk = { ncpus = \"1\" }    # qmgr_ps.out:28\n")
    );
    assert!(report.contains("| s1 | 2 | 8 |\n| s2 | 2 | 8 |"));
}

#[test]
fn jobs_keep_their_own_requests_queues_users_and_times() {
    let imported = import_pbs(&snapshot(), ImportOptions::default()).unwrap();
    // Time 0 is 101's queueing (epoch 1767225600); 100 started before it and runs at 0.
    assert_eq!(
        file(&imported, "workload.swf"),
        "; Written by placesim import pbs: one line per replayed job; time 0 is epoch 1767225600.\n\
         ; MaxProcs: 16\n\
         2 0 60 600 2 -1 -1 2 1200 -1 1 2 2 -1 1 -1 -1 -1\n\
         3 100 600 1200 8 -1 -1 8 3600 -1 1 3 2 -1 1 -1 -1 -1\n\
         4 300 100 600 1 -1 -1 1 900 -1 1 4 1 -1 1 -1 -1 -1\n\
         5 1000 1 100 1 -1 -1 1 600 -1 1 2 2 -1 1 -1 -1 -1\n\
         6 1000 1 100 1 -1 -1 1 600 -1 1 2 2 -1 1 -1 -1 -1\n\
         7 3000 100 1800 1 -1 -1 1 1800 -1 1 3 2 -1 1 -1 -1 -1\n\
         8 3300 100 100 2 -1 -1 2 3600 -1 0 4 1 -1 1 -1 -1 -1\n"
    );
    assert_eq!(
        file(&imported, "requests.txt"),
        "# Each job's request as its accounting record gives it (qsub -P project -q queue).\n\
         2 -q workq select=1:ncpus=2 place=pack\n\
         3 -P climate -q workq select=2:ncpus=4 place=scatter:excl\n\
         4 -q workq select=1:ncpus=1 place=free\n\
         5 -q workq select=1:ncpus=1 place=free\n\
         6 -q workq select=1:ncpus=1 place=free\n\
         7 -q workq select=1:ncpus=1 place=free\n\
         8 -q workq select=1:ncpus=2 place=free\n"
    );
    let recorded = file(&imported, "recorded.tsv");
    assert!(recorded.contains("\n4\t104.pbs\t300\t400\t2000\t2600\t(n3:ncpus=1)\n"));
    assert!(recorded.contains("\n7\t106.pbs\t3000\t3100\t3100\t-\t(n1:ncpus=1)\n"));
    assert_eq!(
        file(&imported, "ids.tsv"),
        "kind\tnumber\tname\nuser\t1\tdave\nuser\t2\talice\nuser\t3\tbob\nuser\t4\tcarol\ngroup\t1\tlab\ngroup\t2\tstaff\n"
    );
}

#[test]
fn the_scenario_says_where_each_setting_came_from() {
    let imported = import_pbs(&snapshot(), ImportOptions::default()).unwrap();
    let s = file(&imported, "scenario.toml");
    for expected in [
        "[[resource]]    # resourcedef:1\nname = \"switch\"\ntype = \"string\"\n",
        "[[resource]]    # PBS built-in\nname = \"arch\"\ntype = \"string\"\n",
        "[[vnode]]    # pbsnodes_va.out:19\nname = \"n2\"\nhost = \"h2\"\nncpus = 4\nmem = \"8gb\"\nsort_priority = 10\nresources = { arch = \"linux\", switch = \"s1\" }\n",
        "node_group_enable = true    # qmgr_ps.out:30\nnode_group_key = [\"switch\"]    # qmgr_ps.out:31\n",
        "strict_ordering = true    # sched_config:4\n",
        "job_sort_key = [\"ncpus HIGH\"]    # sched_config:6\n",
        // alice is user 2 in the replay.
        "max_run = \"[u:PBS_GENERIC=10], [u:2=2]\"    # qmgr_ps.out:32\n",
        "[[pbs.queue]]    # qmgr_ps.out:7\nname = \"workq\"\npriority = 10    # qmgr_ps.out:9\nmax_run = \"[u:PBS_GENERIC=4]\"    # qmgr_ps.out:10\n",
        "[[running]]    # 100.pbs started at epoch 1767220000, before the logs begin\nid = 1\nexec_vnode = \"(n3:ncpus=2)\"\nend = 3600\nestimated_end = 8800\nuser = 1\ngroup = 1\nqueue = \"workq\"\n",
        // n4 is offline and ran nothing: out until the logs end (3,600 s) plus the longest
        // walltime (100.pbs, 4 h), and a second. n3 is down,offline but ran jobs: it stays.
        "[[failures.outage]]    # state = offline in the node list\nvnode = \"n4\"\ndown = 0\nup = 18001\n",
    ] {
        assert!(s.contains(expected), "missing:\n{expected}\nin:\n{s}");
    }
    assert!(!s.contains("vnode = \"n3\"\ndown"));
    assert!(!s.contains("routeq"), "a routing queue is not written");
    assert!(!s.contains("fairshare_"), "fair_share is off");
}

#[test]
fn the_json_node_list_gives_the_same_scenario_as_the_text() {
    let text = import_pbs(&snapshot(), ImportOptions::default()).unwrap();
    let json = import_pbs(
        &PbsInputs {
            nodes: data("pbsnodes.json"),
            ..snapshot()
        },
        ImportOptions::default(),
    )
    .unwrap();
    let strip = |s: &str| -> String {
        s.lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("[[vnode]]"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        strip(file(&json, "scenario.toml")),
        strip(file(&text, "scenario.toml"))
    );
}

/// The snapshot with one more accounting file holding `lines`; the error or the import.
fn with_log(lines: &str, skip_bad_records: bool) -> (PathBuf, Result<Imported, String>) {
    with_log_in(snapshot(), lines, skip_bad_records)
}

fn with_log_in(
    mut inputs: PbsInputs,
    lines: &str,
    skip_bad_records: bool,
) -> (PathBuf, Result<Imported, String>) {
    let dir = placesim_testkit::tempdir().expect("a temporary directory");
    let extra = dir.path().join("20260103");
    std::fs::write(&extra, lines).expect("the extra log");
    inputs.accounting.push(extra.clone());
    let result = import_pbs(&inputs, ImportOptions { skip_bad_records }).map_err(|e| e.to_string());
    (extra, result)
}

const GOOD_TEXT: &str = "user=erin group=lab project=_pbs_project_default jobname=z queue=workq ctime=1767229000 qtime=1767229000 etime=1767229000 start=1767229010";

#[test]
fn a_malformed_record_names_its_file_line_and_column() {
    let (path, r) = with_log("01/01/2026 01:00:00;E;110.pbs\n", false);
    assert_eq!(
        r.unwrap_err(),
        format!(
            "{}:1: column 30: expected `MM/DD/YYYY hh:mm:ss;<type>;<id>;<text>`: fewer than four `;`-separated fields",
            path.display()
        )
    );
    let (path, r) = with_log(
        &format!("\n01/01/2026 01:00:00;X;110.pbs;{GOOD_TEXT}\n"),
        false,
    );
    assert_eq!(
        r.unwrap_err(),
        format!(
            "{}:2: column 21: unknown record type `X`: expected one of QSsERDACTMazrucUYBFKkPpLe",
            path.display()
        )
    );
    let (_, r) = with_log(
        &format!("01/01/2026 01:00:00;E;110.pbs\n01/01/2026 01:00:00;X;111.pbs;{GOOD_TEXT}\n"),
        true,
    );
    assert_eq!(r.unwrap().counts.bad_lines, 2);
}

#[test]
fn a_job_on_a_vnode_the_node_list_lacks_is_refused_or_counted() {
    let line = format!(
        "01/01/2026 01:00:00;S;110.pbs;{GOOD_TEXT} exec_host=h9/0 exec_vnode=(n9:ncpus=1) Resource_List.select=1:ncpus=1\n"
    );
    let (path, r) = with_log(&line, false);
    assert_eq!(
        r.unwrap_err(),
        format!(
            "{}:1: job 110.pbs: exec_vnode names vnode `n9`, which the node list lacks (--skip-bad-records skips and counts such jobs)",
            path.display()
        )
    );
    let (_, r) = with_log(&line, true);
    let counts = r.unwrap().counts;
    assert_eq!(counts.skipped.get(&SkipReason::BadExecVnode), Some(&1));
    assert_eq!(counts.replayed, 7);
}

#[test]
fn a_select_that_does_not_parse_is_refused_or_counted() {
    let line = format!(
        "01/01/2026 01:00:00;S;110.pbs;{GOOD_TEXT} exec_host=h1/0 exec_vnode=(n1:ncpus=1) Resource_List.select=1:ncpus=two\n"
    );
    let (path, r) = with_log(&line, false);
    assert_eq!(
        r.unwrap_err(),
        format!(
            "{}:1: job 110.pbs: request `select=1:ncpus=two`: column 16: resource `ncpus` needs an integer, found `two` (--skip-bad-records skips and counts such jobs)",
            path.display()
        )
    );
    let (_, r) = with_log(&line, true);
    assert_eq!(
        r.unwrap().counts.skipped.get(&SkipReason::BadSelect),
        Some(&1)
    );
}

#[test]
fn overlapping_recorded_allocations_are_refused_or_counted() {
    // 101.pbs holds 2 of n1's 4 ncpus from 60 to 660 s; 110.pbs says it took all 4 at 100 s.
    let line = format!(
        "01/01/2026 00:01:40;S;110.pbs;{} start=1767225700 exec_host=h1/0*4 exec_vnode=(n1:ncpus=4) Resource_List.select=1:ncpus=4\n",
        GOOD_TEXT.replace(" start=1767229010", "")
    );
    let (path, r) = with_log(&line, false);
    assert_eq!(
        r.unwrap_err(),
        format!(
            "{}:1: job 110.pbs: exec_vnode takes ncpus 4 of vnode `n1` at epoch 1767225700, where 2 of 4 are held by 101.pbs (overlapping recorded allocations) (--skip-bad-records skips and counts such jobs)",
            path.display()
        )
    );
    let (_, r) = with_log(&line, true);
    let counts = r.unwrap().counts;
    assert_eq!(counts.skipped.get(&SkipReason::Overlapping), Some(&1));
    assert_eq!(counts.replayed, 7);
}

#[test]
fn old_style_node_specs_are_converted_by_pbs_rules() {
    // No select: Torque's (or an old PBS's) Resource_List.nodes. `n2` names a vnode (its
    // host is h2); `bigmem` is a property the site lacks, defined as a boolean.
    let line = format!(
        "01/01/2026 01:00:00;E;110.pbs;{} exec_host=h1/0-1+h2/0-1 exec_vnode=(n1:ncpus=2)+(n2:ncpus=2) Resource_List.nodes=1:ppn=2:bigmem+N2:ppn=2#excl Resource_List.walltime=01:00:00 session=1 end=1767229100 Exit_status=0\n",
        GOOD_TEXT
    );
    // The site's sched_config does not match bigmem: PBS ignores it when placing.
    let (_, r) = with_log(&line, false);
    let imported = r.unwrap();
    assert_eq!(imported.counts.nodes_converted, 1);
    assert_eq!(
        imported.counts.resources_not_matched.get("bigmem"),
        Some(&1)
    );
    assert!(imported.counts.properties_defined.is_empty());
    assert!(
        file(&imported, "requests.txt")
            .contains(" -q workq select=1:ncpus=2+1:ncpus=2:host=h2 place=scatter:excl\n")
    );
    // Without a sched_config every resource is matched, and bigmem is defined.
    let (_, r) = with_log_in(
        PbsInputs {
            sched_config: None,
            ..snapshot()
        },
        &line,
        false,
    );
    let imported = r.unwrap();
    assert_eq!(imported.counts.properties_defined, ["bigmem"]);
    assert!(
        file(&imported, "requests.txt").contains(
            " -q workq select=1:ncpus=2:bigmem=True+1:ncpus=2:host=h2 place=scatter:excl\n"
        ),
        "{}",
        file(&imported, "requests.txt")
    );
    assert!(file(&imported, "scenario.toml").contains(
        "[[resource]]    # a property old-style node specs name; no vnode has it\nname = \"bigmem\"\ntype = \"boolean\"\n"
    ));
    let (path, r) = with_log(
        &line.replace(
            "Resource_List.nodes=1:ppn=2:bigmem+N2:ppn=2#excl",
            "Resource_List.nodes=2:ppn=0",
        ),
        false,
    );
    assert_eq!(
        r.unwrap_err(),
        format!(
            "{}:1: job 110.pbs: nodes `2:ppn=0`: column 1: expected ppn=<processes per node>, a whole number of at least 1 (--skip-bad-records skips and counts such jobs)",
            path.display()
        )
    );
}

#[test]
fn a_run_of_no_length_holds_nothing() {
    // Found by fuzzing: a job ending the second it started released what it had not yet
    // taken, below zero on an idle vnode.
    let line = format!(
        "01/01/2026 00:01:40;E;110.pbs;{} start=1767225700 exec_host=h4/0*2 exec_vnode=(n4:ncpus=2) Resource_List.select=1:ncpus=2 session=1 end=1767225700 Exit_status=0\n",
        GOOD_TEXT.replace(" start=1767229010", "")
    );
    let (_, r) = with_log(&line, false);
    assert_eq!(r.unwrap().counts.replayed, 8);
}

#[test]
fn a_queue_s_limits_on_several_resources_make_one_table() {
    // Two `max_run_res.*` of one queue: TOML takes `max_run_res` once, so they share it.
    let dir = placesim_testkit::tempdir().expect("a temporary directory");
    let mut qmgr =
        std::fs::read_to_string(data("snap/server/qmgr_ps.out")).expect("the fixture's qmgr");
    qmgr.push_str(
        "set queue workq max_run_res.ncpus = [u:PBS_GENERIC=8]\nset queue workq max_run_res.mem = [u:PBS_GENERIC=16gb]\n",
    );
    let server = dir.path().join("qmgr_ps.out");
    std::fs::write(&server, qmgr).expect("the qmgr file");
    let imported = import_pbs(
        &PbsInputs {
            server: Some(server),
            ..snapshot()
        },
        ImportOptions::default(),
    )
    .unwrap();
    let s = file(&imported, "scenario.toml");
    assert!(
        s.contains(
            "max_run = \"[u:PBS_GENERIC=4]\"    # qmgr_ps.out:10\n# qmgr_ps.out:34, qmgr_ps.out:35\nmax_run_res = { ncpus = \"[u:PBS_GENERIC=8]\", mem = \"[u:PBS_GENERIC=16gb]\" }\n"
        ),
        "{s}"
    );
    assert_eq!(s.matches("max_run_res").count(), 1);
}

/// The Torque/Moab fixture (tests/data/torque): six nodes in `server_priv/nodes` form (a
/// range, properties, gpus), a day of Torque accounting logs and a `moab.cfg`.
fn torque_site() -> TorqueInputs {
    TorqueInputs {
        nodes: data("torque/nodes"),
        moab_cfg: Some(data("torque/moab.cfg")),
        accounting: vec![data("torque/accounting/20170405")],
    }
}

/// The `[[vnode]]` tables of a scenario, without their origin comments.
fn vnode_tables(scenario: &str) -> Vec<String> {
    scenario
        .split("\n\n")
        .filter(|t| t.starts_with("[[vnode]]"))
        .map(|t| t.lines().skip(1).collect::<Vec<_>>().join("\n"))
        .collect()
}

#[test]
fn a_torque_moab_site_becomes_a_moab_scenario() {
    let imported = import_torque_moab(&torque_site(), ImportOptions::default()).unwrap();
    let scenario = file(&imported, "scenario.toml");
    assert!(scenario.contains("placement = \"moab\""), "{scenario}");
    // The range stands for four nodes; properties are features and booleans; moab.cfg's
    // NODECFG adds a feature.
    let vnodes = vnode_tables(scenario);
    assert_eq!(vnodes.len(), 6);
    assert_eq!(
        vnodes[0],
        "name = \"n01\"\nhost = \"n01\"\nncpus = 4\n\
         resources = { fast = true, features = [\"ib\", \"fast\"], ib = true }"
    );
    assert_eq!(
        vnodes[4],
        "name = \"n05\"\nhost = \"n05\"\nncpus = 8\nngpus = 2\n\
         resources = { bigmem = true, features = [\"bigmem\"] }"
    );
    assert_eq!(
        vnodes[5],
        "name = \"n06\"\nhost = \"n06\"\nncpus = 8\n\
         resources = { bigmem = true, features = [\"bigmem\", \"old\"], old = true }"
    );
    assert!(
        scenario.contains(
            "[moab]\n\
             rmpoll_interval = \"00:00:30\"    # moab.cfg:4\n\
             reservation_depth = 2    # moab.cfg:5\n\
             reservation_policy = \"CURRENTHIGHEST\"    # moab.cfg:6\n\
             nodeset_policy = \"ONEOF\"    # moab.cfg:7\n\
             nodeset_attribute = \"FEATURE\"    # moab.cfg:8\n\
             nodeset_list = [\"ib\", \"bigmem\"]    # moab.cfg:9\n\
             nodeset_priority_type = \"BESTFIT\"    # moab.cfg:10\n\
             nodeset_is_optional = true    # moab.cfg:11\n\
             day0 = \"WED\"    # t = 0 is epoch 1491386405, local time (UTC+00:00, as the records' local times show): where SRCFG periods count from\n\
             time0 = \"10:00:05\"\n\n\
             [moab.priority]\n\
             queuetimeweight = 10    # moab.cfg:14\n\
             xfactorweight = 100    # moab.cfg:15\n\
             xfminwclimit = 120    # moab.cfg:23\n\
             user_priority = { 1 = 100 }    # moab.cfg:17\n\n\
             [moab.limits]\n\
             user = { 1 = \"MAXJOB=4\", DEFAULT = \"MAXJOB=2,8\" }    # moab.cfg:17, moab.cfg:19\n\
             class = { long = \"MAXJOB=1 MAXPROC=16\" }    # moab.cfg:22\n\n\
             [[moab.class]]    # moab.cfg:13\n\
             name = \"long\"\n\
             default_nodeset = \"ONEOF:FEATURE:bigmem\"    # moab.cfg:13\n\n\
             [[moab.class]]    # a queue the logs name and moab.cfg's classes do not\n\
             name = \"short\"\n\n\
             [[moab.reservation]]    # SRCFG[maint] in moab.cfg:18\n\
             name = \"maint\"\n\
             hostlist = [\"n01\"]\n\
             period = \"DAY\"\n\
             starttime = \"2:00:00\"\n\
             endtime = \"4:00:00\"\n\n\
             [[moab.reservation]]    # SRCFG[interactive] in moab.cfg:24\n\
             name = \"interactive\"\n\
             hostlist = [\"n01\", \"n02\"]\n\
             period = \"DAY\"\n\
             days = [\"MON\", \"TUE\", \"WED\", \"THU\", \"FRI\"]\n\
             starttime = \"9:00:00\"\n\
             endtime = \"17:00:00\"\n\
             depth = 3\n\
             classlist = [\"short+\", \"long-\"]\n\
             userlist = [\"1=\"]\n"
        ),
        "{scenario}"
    );
    assert!(!scenario.contains("[pbs]"), "{scenario}");
    // Resource_List.nodes by PBS's conversion; exec_host (ranges, one core at a time, a
    // comma list) as exec_vnode, one part per host.
    assert_eq!(
        file(&imported, "requests.txt"),
        "# Each job's request as its accounting record gives it (qsub -P project -q queue).\n\
         1 -q short select=2:ncpus=4:ib=True place=scatter\n\
         2 -q long select=1:ncpus=8:bigmem=True place=scatter\n\
         3 -q short select=1:ncpus=3 place=scatter nodeset=ONEOF:FEATURE:ib:fast\n"
    );
    assert_eq!(
        file(&imported, "recorded.tsv"),
        "job\tpbs_id\tctime_s\tfirst_start_s\tstart_s\tend_s\texec_vnode\n\
         1\t1.master.site\t-5\t0\t0\t1800\t(n01:ncpus=4)+(n02:ncpus=4)\n\
         2\t2.master.site\t55\t65\t65\t7265\t(n05:ncpus=8)\n\
         3\t4.master.site\t2395\t2395\t2395\t2995\t(n03:ncpus=3)\n"
    );
    let c = &imported.counts;
    assert_eq!(c.skipped.get(&SkipReason::DeletedWhileQueued), Some(&1));
    assert_eq!(c.nodes_converted, 3);
    // A job's own node set from its Resource_List.nodeset; one on PROCSPEED is counted.
    assert_eq!((c.nodesets_requested, c.nodesets_not_modelled), (1, 1));
    // Every moab.cfg line is either written or reported with its reason.
    let report = &imported.report;
    for row in [
        "| moab.nodeset_list | `[\"ib\", \"bigmem\"]` | moab.cfg:9 |",
        "| class long default_nodeset | `\"ONEOF:FEATURE:bigmem\"` | moab.cfg:13 |",
        "| SCHEDCFG[site] SERVER=master:42559 | moab.cfg:2 | how Moab runs and connects, which changes no order or placement |",
        "| NODECFG[n06] SPEED=0.8 | moab.cfg:12 | node attributes other than FEATURES are not modelled |",
        "| USERCFG[alice] MAXJOB as `1` | `4` | moab.cfg:17 |",
        "| USERCFG[alice] QDEF=4 | moab.cfg:17 | credential attributes other than MAXJOB, MAXPROC, MAXPS, PRIORITY, FSTARGET and a class's DEFAULT.NODESET are not modelled |",
        "| USERCFG[zed] MAXJOB=1 | moab.cfg:20 | no replayed job has this credential |",
        "| GROUPCFG[staff] FSTARGET=30 | moab.cfg:21 | without effect: no fairshare subweight (FSUSERWEIGHT, ...) is set |",
        // SRCFG lines accumulate per reservation; a user no job has leaves the ACL, a
        // floating reservation is not written.
        "| SRCFG[interactive] ACCESS=SHARED | moab.cfg:26 | changes nothing here: Moab reservations hold no resources, so they may overlap |",
        "| SRCFG[interactive] USERLIST entry zed | moab.cfg:26 | no replayed job has this credential: the entry matches none |",
        "| SRCFG[float] TASKCOUNT=6 | moab.cfg:27 | a floating reservation (TASKCOUNT) is not modelled: Moab chooses its hosts as it runs; the reservation is not written |",
        "| FSPOLICY DEDICATEDPS | moab.cfg:16 | without effect: no fairshare subweight (FSUSERWEIGHT, ...) is set |",
        "ONEOF over FEATURE: 2 sets\n\n| feature | vnodes | ncpus |\n|---|---:|---:|\n| bigmem | 2 | 16 |\n| ib | 4 | 16 |\n",
    ] {
        assert!(report.contains(row), "no `{row}` in\n{report}");
    }
}

#[test]
fn torque_pbsnodes_text_gives_the_same_nodes_as_the_nodes_file() {
    let from_file = import_torque_moab(&torque_site(), ImportOptions::default()).unwrap();
    let text = TorqueInputs {
        nodes: data("torque/pbsnodes.txt"),
        ..torque_site()
    };
    let from_text = import_torque_moab(&text, ImportOptions::default()).unwrap();
    let vnodes = |i: &Imported| vnode_tables(file(i, "scenario.toml"));
    assert_eq!(vnodes(&from_text), vnodes(&from_file));
    // Attributes placesim does not use are counted, not dropped unsaid.
    assert!(
        from_text.report.contains("power_state"),
        "{}",
        from_text.report
    );
}

/// A Torque site with `moab.cfg` text `cfg`, `nodes` and one accounting line `log`.
fn torque_with(
    cfg: &str,
    nodes: &str,
    log: &str,
    skip: bool,
) -> (placesim_testkit::TempDir, Result<Imported, String>) {
    let dir = placesim_testkit::tempdir().expect("a temporary directory");
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("a fixture file");
        p
    };
    let inputs = TorqueInputs {
        nodes: write("nodes", nodes),
        moab_cfg: Some(write("moab.cfg", cfg)),
        accounting: vec![write("20170405", log)],
    };
    let result = import_torque_moab(
        &inputs,
        ImportOptions {
            skip_bad_records: skip,
        },
    )
    .map_err(|e| e.to_string());
    (dir, result)
}

const TORQUE_E: &str = "04/05/2017 10:00:00;Q;1.m;queue=q qtime=1491386400\n04/05/2017 10:30:05;E;1.m;user=a group=g queue=q ctime=1491386400 qtime=1491386400 etime=1491386400 start=1491386405 exec_host=n01/0-3 Resource_List.nodes=1:ppn=4 Resource_List.walltime=01:00:00 end=1491388205\n";

/// A second job, on n02, for logs whose first job is not replayed.
const TORQUE_OTHER: &str = "04/05/2017 10:40:00;E;2.m;user=b group=g queue=q ctime=1491386400 qtime=1491386400 etime=1491386400 start=1491386500 exec_host=n02/0 Resource_List.nodes=1:ppn=1 Resource_List.walltime=01:00:00 end=1491386600\n";

#[test]
fn bad_torque_and_moab_input_is_named_at_its_line() {
    let nodes = "n01 np=4\n";
    let cases = [
        (
            "# a comment\nNODESETPOLICY SOMEOF\n",
            nodes,
            TORQUE_E.to_owned(),
            "moab.cfg:2: NODESETPOLICY: `SOMEOF`: expected one of ONEOF, ANYOF, FIRSTOF",
        ),
        (
            "NODECFG[n01 FEATURES=x\n",
            nodes,
            TORQUE_E.to_owned(),
            "moab.cfg:1: `NODECFG[n01`: expected PARAM[index] with a closing `]`",
        ),
        (
            "NODECFG[n01] FEATURES\n",
            nodes,
            TORQUE_E.to_owned(),
            "moab.cfg:1: NODECFG: `FEATURES`: expected <ATTR>=<value>",
        ),
        (
            "NODESETATTRIBUTE COLOR\n",
            nodes,
            TORQUE_E.to_owned(),
            "moab.cfg:1: NODESETATTRIBUTE: `COLOR`: expected one of FEATURE, VARATTR, RESERVATION",
        ),
        (
            "USERCFG[alice] MAXJOB=four\n",
            nodes,
            TORQUE_E.to_owned(),
            "moab.cfg:1: USERCFG[alice] MAXJOB: `four`: expected [<soft>,]<hard>, whole numbers",
        ),
        (
            "USERCFG MAXJOB=4\n",
            nodes,
            TORQUE_E.to_owned(),
            "moab.cfg:1: USERCFG: expected USERCFG[<name>] <ATTR>=<value> ...",
        ),
        (
            "RESERVATIONDEPTH -1\n",
            nodes,
            TORQUE_E.to_owned(),
            "moab.cfg:1: RESERVATIONDEPTH: `-1`: expected a whole number",
        ),
        (
            "SRCFG[r] PERIOD=MONTH\n",
            nodes,
            TORQUE_E.to_owned(),
            "moab.cfg:1: SRCFG[r] PERIOD: `MONTH`: expected DAY, WEEK or INFINITY",
        ),
        (
            "SRCFG[r] HOSTLIST=n01\nSRCFG[r] STARTTIME=9am\n",
            nodes,
            TORQUE_E.to_owned(),
            "moab.cfg:2: SRCFG[r] STARTTIME: `9am`: expected an offset in the period, HH:MM:SS (DD:HH:MM:SS for PERIOD=WEEK)",
        ),
        (
            "SRCFG[r] DAYS=MON,FUNDAY\n",
            nodes,
            TORQUE_E.to_owned(),
            "moab.cfg:1: SRCFG[r] DAYS: `MON,FUNDAY`: expected weekdays (MON,TUE,...) or ALL",
        ),
        (
            "SRCFG[r] DEPTH=0\n",
            nodes,
            TORQUE_E.to_owned(),
            "moab.cfg:1: SRCFG[r] DEPTH: `0`: expected a whole number of periods, 1 or more",
        ),
        (
            "SRCFG HOSTLIST=n01\n",
            nodes,
            TORQUE_E.to_owned(),
            "moab.cfg:1: SRCFG: expected SRCFG[<name>] <ATTR>=<value> ...",
        ),
        (
            "",
            "n01 np=4\nn[04-01] np=4\n",
            TORQUE_E.to_owned(),
            "nodes:2: node `n[04-01]`: expected a range from low to high of at most 1000000 nodes",
        ),
        (
            "",
            "n01 np=4 9lives\n",
            TORQUE_E.to_owned(),
            "nodes:1: node `n01`: property `9lives`: expected a name of letters, digits, `_` and `-`, starting with a letter",
        ),
        (
            "",
            nodes,
            TORQUE_E.replace("exec_host=n01/0-3", "exec_host=n01"),
            "20170405:2: job 1.m: exec_host `n01`: expected host/cores joined by `+`, such as `n01/0-7+n02/0-7` or `c1/0*13` (--skip-bad-records skips and counts such jobs)",
        ),
    ];
    for (cfg, nodes, log, message) in cases {
        let (dir, result) = torque_with(cfg, nodes, &log, false);
        let error = result.expect_err(message);
        let shown = error.replace(&format!("{}/", dir.path().display()), "");
        assert_eq!(shown, message);
    }
    // A node-set attribute Moab has and placesim does not model is reported, not refused.
    let (_, result) = torque_with("NODESETATTRIBUTE PROCSPEED\n", nodes, TORQUE_E, false);
    let report = result.unwrap().report;
    let row = "| NODESETATTRIBUTE PROCSPEED | moab.cfg:1 | PROCSPEED node sets need each node's speed (NODECFG PROCSPEED), which the import does not read |";
    assert!(report.contains(row), "{report}");
    // With --skip-bad-records, the job with the bad exec_host is counted, not dropped.
    let log = TORQUE_E.replace("exec_host=n01/0-3", "exec_host=n01");
    let with_another = format!("{log}{TORQUE_OTHER}");
    let (_, result) = torque_with("", "n01 np=4\nn02 np=4\n", &with_another, true);
    let counts = result.unwrap().counts;
    assert_eq!(counts.skipped.get(&SkipReason::BadExecVnode), Some(&1));
}

/// The Torque fixture's site with Maui's resource trace for its nodes and `jobs` (a Maui
/// workload trace or Moab's workload event records) for its jobs.
fn traces(jobs: &str) -> TorqueInputs {
    TorqueInputs {
        nodes: data("torque/resources.trace"),
        accounting: vec![data(jobs)],
        ..torque_site()
    }
}

/// The same site as Maui's simulation traces (tests/data/torque: resources.trace,
/// workload.trace): a resource trace for the nodes, with memory and speeds, n05 drained;
/// a workload trace for the jobs, one removed before it started.
#[test]
fn maui_traces_are_a_second_way_in() {
    let inputs = traces("torque/workload.trace");
    let imported = import_torque_moab(&inputs, ImportOptions::default()).unwrap();
    // Nodes with a node count as an old-style spec; tasks without one as free chunks; the
    // account as the project; field 42's node set.
    assert_eq!(
        file(&imported, "requests.txt"),
        "# Each job's request as its accounting record gives it (qsub -P project -q queue).\n\
         1 -q short select=2:ncpus=4:ib=True place=scatter\n\
         2 -q long select=1:ncpus=8:bigmem=True place=scatter\n\
         3 -P chemproj -q short select=3:ncpus=1 nodeset=ONEOF:FEATURE:ib:fast\n"
    );
    // Allocated hosts, one name per task or spread over the hosts named.
    assert_eq!(
        file(&imported, "recorded.tsv"),
        "job\tpbs_id\tctime_s\tfirst_start_s\tstart_s\tend_s\texec_vnode\n\
         1\t1.master\t0\t5\t5\t1805\t(n01:ncpus=4)+(n02:ncpus=4)\n\
         2\t2.master\t60\t70\t70\t7270\t(n05:ncpus=8)\n\
         3\t4.master\t2400\t2400\t2400\t3000\t(n03:ncpus=3)\n"
    );
    let vnodes = vnode_tables(file(&imported, "scenario.toml"));
    assert_eq!(
        vnodes[4],
        "name = \"n05\"\nhost = \"n05\"\nncpus = 8\nmem = \"65536mb\"\nspeed = 1.5\n\
         resources = { bigmem = true, features = [\"bigmem\"] }"
    );
    let c = &imported.counts;
    assert_eq!(c.log.records.get("C"), Some(&3));
    assert_eq!(c.log.records.get("R"), Some(&1));
    assert_eq!(c.skipped.get(&SkipReason::DeletedWhileQueued), Some(&1));
    // n05 is drained in the trace, but job 2 ran on it: kept in service, and counted.
    assert_eq!(
        (c.vnodes_out_of_service, c.vnodes_out_of_service_but_used),
        (0, 1)
    );
    assert_eq!((c.nodesets_requested, c.nodesets_not_modelled), (1, 1));
}

#[test]
fn a_bad_maui_trace_line_is_named_at_its_line() {
    let dir = placesim_testkit::tempdir().expect("a temporary directory");
    let good_jobs = std::fs::read_to_string(data("torque/workload.trace")).unwrap();
    let good_nodes = std::fs::read_to_string(data("torque/resources.trace")).unwrap();
    let job_line = good_jobs.lines().nth(1).unwrap();
    let good_events = std::fs::read_to_string(data("torque/events.trace")).unwrap();
    let event_line = good_events.lines().nth(3).unwrap();
    let node_line = good_nodes.lines().nth(1).unwrap();
    let cases = [
        (
            good_nodes.clone(),
            format!("# jobs\n{job_line}\n1 2 3 4 5 6 7 8 9 10\n"),
            "workload.trace:3: expected the 44 whitespace-separated fields of a Maui workload trace line, found 10",
        ),
        (
            good_nodes.clone(),
            job_line.replace("Completed", "Running"),
            "workload.trace:1: field 7 (state): `Running`: expected Completed, Removed or NotRun",
        ),
        (
            good_nodes.clone(),
            format!("{job_line}\n12:00:00 1491386400 job 1.master jobsubmit {job_line}"),
            "workload.trace:2: a Moab workload event record in a Maui workload trace: expected every line in one format",
        ),
        (
            good_nodes.clone(),
            format!("{event_line}\n{job_line}\n"),
            "workload.trace:2: expected a Moab workload event record: HH:MM:SS, epoch, object type, object id and event, then the object's fields (`1.master` ...)",
        ),
        (
            good_nodes.clone(),
            event_line.replace("jobsubmit", "jobsubmitted"),
            "workload.trace:1: field 5 (event): `jobsubmitted`: expected one of jobsubmit, jobstart, jobend, jobcancel, jobfailure, jobreject, jobhold, jobresume, jobmigrate, jobpreempt, jobcheckpoint",
        ),
        (
            good_nodes.clone(),
            "10:00:00 1491386400 job 1.master jobend 2 8 alice\n".to_owned(),
            "workload.trace:1: expected at least the 42 whitespace-separated fields of a Moab workload event record (through field 42, the allocated hosts), found 8",
        ),
        (
            good_nodes.clone(),
            event_line.replace(" alice staff 3600 ", " alice staff 1h "),
            "workload.trace:1: field 6 (wallclock limit, s): `1h`: expected a whole number",
        ),
        (
            node_line.replace("AVAILABLE", "UP"),
            good_jobs.clone(),
            "resources.trace:1: field 2: `UP`: expected AVAILABLE, DEFINED or DRAINED",
        ),
        (
            node_line.replace(" 4 -1 -1 ", " four -1 -1 "),
            good_jobs.clone(),
            "resources.trace:1: field 9 (processors): `four`: expected a number",
        ),
    ];
    for (nodes, jobs, message) in cases {
        let inputs = TorqueInputs {
            nodes: dir.path().join("resources.trace"),
            moab_cfg: None,
            accounting: vec![dir.path().join("workload.trace")],
        };
        std::fs::write(&inputs.nodes, &nodes).unwrap();
        std::fs::write(&inputs.accounting[0], &jobs).unwrap();
        let error = import_torque_moab(&inputs, ImportOptions::default())
            .map(|_| ())
            .expect_err(message)
            .to_string();
        assert_eq!(
            error.replace(&format!("{}/", dir.path().display()), ""),
            message
        );
        if message.starts_with("workload.trace:3") {
            let skipped = import_torque_moab(
                &inputs,
                ImportOptions {
                    skip_bad_records: true,
                },
            );
            assert_eq!(skipped.unwrap().counts.bad_lines, 1);
        }
    }
}

/// Torque's `Resource_List.procs=N` alone asks for N processors anywhere; a job asking for
/// nothing at all is counted, not replayed; a node without `np` has Torque's one processor.
#[test]
fn torque_procs_requests_and_default_np() {
    let procs = TORQUE_E.replace("Resource_List.nodes=1:ppn=4", "Resource_List.procs=3");
    let (_, result) = torque_with("", "n01 np=4\nn02\n", &procs, false);
    let imported = result.unwrap();
    assert!(
        file(&imported, "requests.txt").ends_with("1 -q q select=3:ncpus=1\n"),
        "{}",
        file(&imported, "requests.txt")
    );
    assert_eq!(imported.counts.procs_converted, 1);
    assert!(
        file(&imported, "scenario.toml").contains("name = \"n02\"\nhost = \"n02\"\nncpus = 1\n")
    );
    let nothing = TORQUE_E.replace("Resource_List.nodes=1:ppn=4 ", "");
    let nothing = format!("{nothing}{TORQUE_OTHER}");
    let (_, result) = torque_with("", "n01 np=4\nn02 np=4\n", &nothing, false);
    let counts = result.unwrap().counts;
    assert_eq!(counts.skipped.get(&SkipReason::NoSelect), Some(&1));
}

/// Logs that hold only a job already running when they begin give nothing to replay: an
/// error naming the logs, not a scenario that would not load.
#[test]
fn logs_with_nothing_to_replay_are_refused() {
    let running_only = TORQUE_E.lines().nth(1).unwrap_or_default();
    let (dir, result) = torque_with("", "n01 np=4\n", running_only, false);
    assert_eq!(
        result.map(|_| ()).unwrap_err(),
        format!(
            "{}/20170405 (1 accounting file(s)): no job to replay: 1 were already running when the logs begin, and not replayed: none; give logs that cover a period in which jobs were submitted",
            dir.path().display()
        )
    );
}

/// A class's DEFAULT.NODESET is written as Moab's own form gives it (values joined by `:`,
/// which the request language reads as Moab does); one on an attribute placesim does not
/// model is reported, not written into a scenario that would refuse it.
#[test]
fn a_class_default_nodeset_on_an_unmodelled_attribute_is_reported() {
    let cfg = "CLASSCFG[q] DEFAULT.NODESET=ONEOF:FEATURE:ib:fast\n\
               CLASSCFG[other] DEFAULT.NODESET=ONEOF:PROCSPEED:350:400\n";
    let (_, result) = torque_with(cfg, "n01 np=4\n", TORQUE_E, false);
    let imported = result.unwrap();
    assert!(
        file(&imported, "scenario.toml")
            .contains("default_nodeset = \"ONEOF:FEATURE:ib:fast\"    # moab.cfg:1\n"),
        "{}",
        file(&imported, "scenario.toml")
    );
    let row = "| CLASSCFG[other] DEFAULT.NODESET=ONEOF:PROCSPEED:350:400 | moab.cfg:2 | PROCSPEED node sets need each node's speed (NODECFG PROCSPEED), which the import does not read |";
    assert!(imported.report.contains(row), "{}", imported.report);
}

/// `pbs_rstat -f` (the snapshot's `reservation/pbs_rstat_f.out`): confirmed reservations
/// become `[[reservation]]` entries on their vnodes, their windows in simulated time (the
/// fixture's logs are in UTC, time 0 is 2026-01-01 00:00), a standing one with the
/// occurrences still to come; every other one is named in the report with why.
#[test]
fn reservations_come_from_pbs_rstat() {
    let imported = import_pbs(&snapshot(), ImportOptions::default()).unwrap();
    let scenario = file(&imported, "scenario.toml");
    let entries: Vec<&str> = scenario
        .split("\n\n")
        .filter(|block| block.starts_with("[[reservation]]"))
        .collect();
    assert_eq!(
        entries,
        [
            "[[reservation]]    # R5.pbs in pbs_rstat_f.out:1 (RESV_CONFIRMED), times in the site's local time\nname = \"R5\"\nstart = 7200\nend = 10800\nnodes = \"(n2:ncpus=4)\"\nexclusive = true",
            "[[reservation]]    # S9.pbs in pbs_rstat_f.out:33 (RESV_CONFIRMED), times in the site's local time\nname = \"S9\"\nstart = 14400\nend = 18000\nnodes = \"(n2:ncpus=2)\"\nrecurrence = \"FREQ=DAILY;COUNT=4\"",
        ]
    );
    let report = file(&imported, "import-report.md");
    for line in [
        "5 read from pbs_rstat_f.out: 2 written as `[[reservation]]` on their vnodes",
        "| R6.pbs | RESV_UNCONFIRMED when the snapshot was taken: not confirmed on vnodes |",
        "| R7.pbs | its vnode `n9` is not in the node list |",
        "| R8.pbs | it ended before the logs begin |",
    ] {
        assert!(report.contains(line), "{line}\n{report}");
    }
}

/// Moab 5.0+'s workload event records: one job per id, the last record giving the job, the
/// first start kept across a preemption, a job running and one queued when the records end,
/// and another object's record counted.
#[test]
fn moab_workload_event_records_are_a_third_way_in() {
    let inputs = traces("torque/events.trace");
    let imported = import_torque_moab(&inputs, ImportOptions::default()).unwrap();
    // The event record has no set description, so no job carries its own node set.
    assert_eq!(
        file(&imported, "requests.txt"),
        "# Each job's request as its accounting record gives it (qsub -P project -q queue).\n\
         1 -q short select=2:ncpus=4:ib=True place=scatter\n\
         2 -q long select=1:ncpus=8:bigmem=True place=scatter\n\
         3 -P chemproj -q short select=3:ncpus=1\n\
         4 -q short select=1:ncpus=4:ib=True place=scatter\n"
    );
    // Job 2 started at 70, was preempted and started again at 3600: replayed from 70 with
    // the last run's length. Job 5 was still running when the records end.
    assert_eq!(
        file(&imported, "recorded.tsv"),
        "job\tpbs_id\tctime_s\tfirst_start_s\tstart_s\tend_s\texec_vnode\n\
         1\t1.master\t0\t5\t5\t1805\t(n01:ncpus=4)+(n02:ncpus=4)\n\
         2\t2.master\t60\t70\t3600\t7270\t(n05:ncpus=8)\n\
         3\t4.master\t2400\t2400\t2400\t3000\t(n03:ncpus=3)\n\
         4\t5.master\t5600\t5700\t5700\t-\t(n04:ncpus=4)\n"
    );
    let c = &imported.counts;
    let records: Vec<(&str, u64)> = c
        .log
        .records
        .iter()
        .map(|(k, n)| (k.as_str(), *n))
        .collect();
    assert_eq!(
        records,
        [
            ("job jobcancel", 1),
            ("job jobend", 3),
            ("job jobpreempt", 1),
            ("job jobstart", 5),
            ("job jobsubmit", 6),
            ("rsv", 1)
        ]
    );
    assert_eq!((c.log.requeued, c.unfinished_at_end), (1, 1));
    assert_eq!(c.skipped.get(&SkipReason::DeletedWhileQueued), Some(&1));
    assert_eq!(c.skipped.get(&SkipReason::NeverStarted), Some(&1)); // t = 0 in the records' own local time, for moab.cfg's standing reservations.
    let scenario = file(&imported, "scenario.toml");
    assert!(
        scenario.contains(
            "day0 = \"WED\"    # t = 0 is epoch 1491386400, local time (UTC+00:00, as the records' local times show): where SRCFG periods count from\n\
             time0 = \"10:00:00\"\n"
        ),
        "{scenario}"
    );
}

/// NODESETATTRIBUTE RESERVATION makes node sets of the SRCFG reservations written; one
/// NODESETLIST names that is not written (a floating one) is left out and reported.
#[test]
fn reservation_node_sets_come_with_their_srcfg_reservations() {
    let cfg = "NODESETATTRIBUTE RESERVATION\nNODESETLIST rack1,float\n\
               SRCFG[rack1] HOSTLIST=n01 PERIOD=INFINITY\n\
               SRCFG[float] TASKCOUNT=2\n";
    let (_, result) = torque_with(cfg, "n01 np=4\nn02 np=4\n", TORQUE_E, false);
    let imported = result.unwrap();
    let scenario = file(&imported, "scenario.toml");
    assert!(
        scenario.contains(
            "nodeset_attribute = \"RESERVATION\"    # moab.cfg:1\n\
             nodeset_list = [\"rack1\"]    # moab.cfg:2\n"
        ) && scenario.contains(
            "[[moab.reservation]]    # SRCFG[rack1] in moab.cfg:3\n\
             name = \"rack1\"\n\
             hostlist = [\"n01\"]\n\
             period = \"INFINITY\"\n\n"
        ),
        "{scenario}"
    );
    let row = "| NODESETLIST entry float | moab.cfg:2 | a RESERVATION node set of a reservation not written: left out |";
    assert!(imported.report.contains(row), "{}", imported.report);
    // An XOR entry keeps its reservation out; what a period does not take is reported.
    let cfg = "SRCFG[x] HOSTLIST=n01 CLASSLIST=batch^\n\
               SRCFG[w] PERIOD=WEEK DAYS=MON HOSTLIST=n02 STARTTIME=1:08:00:00\n";
    let (_, result) = torque_with(cfg, "n01 np=4\nn02 np=4\n", TORQUE_E, false);
    let imported = result.unwrap();
    let scenario = file(&imported, "scenario.toml");
    assert!(
        !scenario.contains("name = \"x\"")
            && scenario.contains(
                "name = \"w\"\nhostlist = [\"n02\"]\nperiod = \"WEEK\"\nstarttime = \"1:08:00:00\"\n"
            ),
        "{scenario}"
    );
    for row in [
        "| SRCFG[x] CLASSLIST=batch^ | moab.cfg:1 | an XOR entry (`^`, in Maui's code only) is not modelled: the reservation is not written |",
        "| SRCFG[w] DAYS=MON | moab.cfg:2 | does nothing with PERIOD=WEEK: not written |",
    ] {
        assert!(
            imported.report.contains(row),
            "no `{row}` in\n{}",
            imported.report
        );
    }
}

/// The snapshot fixture with a second scheduler (tests/data/multisched): `Sched sc1` serves
/// P1, which holds n3 and the queue workq, and has its own sched_config; n4 is in P9, which
/// no scheduler serves. No reservations.
fn multisched_site() -> PbsInputs {
    PbsInputs {
        nodes: data("multisched/node/pbsnodes_va.out"),
        server: Some(data("multisched/server/qmgr_ps.out")),
        sched: Some(data("multisched/scheduler/qmgr_lsched.out")),
        sched_config: Some(data("multisched/sched_priv/sched_config")),
        reservations: None,
        ..snapshot()
    }
}

/// A snapshot with a second scheduler: `qmgr list sched`'s `Sched sc1` serving P1 becomes a
/// `[[pbs.sched]]` with its own flags and its own `sched_priv_sc1/sched_config`'s
/// strict_ordering and sort keys; the vnodes and the queue in P1 say so; a partition no
/// scheduler serves is reported and written as the default scheduler's. Beside reservations,
/// partitions are left out and reported.
#[test]
fn multi_schedulers_and_partitions_are_imported() {
    let inputs = multisched_site();
    let imported = import_pbs(&inputs, ImportOptions::default()).unwrap();
    let scenario = file(&imported, "scenario.toml");
    for part in [
        "name = \"n3\"\nhost = \"h3\"\nncpus = 4\nmem = \"8gb\"\npartition = \"P1\"\n",
        "name = \"n4\"\nhost = \"h4\"\nncpus = 4\nmem = \"8gb\"\nresources",
        "[[pbs.sched]]    # qmgr_lsched.out:10\n\
         name = \"sc1\"\n\
         partition = \"P1\"\n\
         do_not_span_psets = true    # qmgr_lsched.out:14\n\
         strict_ordering = true    # sched_priv_sc1/sched_config:1\n\
         node_sort_key = [\"sort_priority LOW\"]    # sched_priv_sc1/sched_config:2\n",
        "name = \"workq\"\npriority = 10    # qmgr_ps.out:9\npartition = \"P1\"    # qmgr_ps.out:34\n",
    ] {
        assert!(scenario.contains(part), "no `{part}` in\n{scenario}");
    }
    for row in [
        "| partition P9 | the node list and queues | no scheduler in `qmgr list sched` serves it: its vnodes and queues are written as the default scheduler's |",
        "| sched sc1 sched_config by_queue: False | sched_priv_sc1/sched_config:3 | a multi-scheduler's own option other than strict_ordering and the sort keys: the server's and default scheduler's apply |",
    ] {
        assert!(
            imported.report.contains(row),
            "no `{row}` in\n{}",
            imported.report
        );
    }
    // With the fixture's reservations, partitions are not written, and the report says why.
    let with_reservations = import_pbs(
        &PbsInputs {
            reservations: snapshot().reservations,
            ..inputs
        },
        ImportOptions::default(),
    )
    .unwrap();
    let scenario = file(&with_reservations, "scenario.toml");
    assert!(
        !scenario.contains("partition") && !scenario.contains("[[pbs.sched]]"),
        "{scenario}"
    );
    let row = "| sched sc1 | qmgr_lsched.out:10 | scheduler partitions are not modelled beside reservations yet: every vnode and queue is written as the default scheduler's |";
    assert!(
        with_reservations.report.contains(row),
        "{}",
        with_reservations.report
    );
}

/// Vnode `sharing`: the snapshot's vnodes differ (n4 is `default_excl`), which is reported;
/// when every vnode agrees, the scenario's `vnode_sharing` says it; a value PBS does not
/// have is refused at its line.
#[test]
fn vnode_sharing_is_written_when_every_vnode_agrees() {
    let mixed = import_pbs(&snapshot(), ImportOptions::default()).unwrap();
    let row = "| vnode sharing (n1 default_shared, n4 default_excl, ...) | the node list | vnodes of different sharing are not modelled: jobs are placed as under default_shared, shared unless they ask excl |";
    assert!(mixed.report.contains(row), "{}", mixed.report);
    assert!(!file(&mixed, "scenario.toml").contains("vnode_sharing"));
    let dir = placesim_testkit::tempdir().expect("a temporary directory");
    let nodes = std::fs::read_to_string(data("snap/node/pbsnodes_va.out")).unwrap();
    let all_excl = dir.path().join("pbsnodes_va.out");
    std::fs::write(&all_excl, nodes.replace("default_shared", "default_excl")).unwrap();
    let agreed = import_pbs(
        &PbsInputs {
            nodes: all_excl.clone(),
            ..snapshot()
        },
        ImportOptions::default(),
    )
    .unwrap();
    let scenario = file(&agreed, "scenario.toml");
    assert!(
        scenario.contains(
            "vnode_sharing = \"default_excl\"    # every vnode's sharing (pbsnodes_va.out:16, ...)\n"
        ),
        "{scenario}"
    );
    std::fs::write(&all_excl, nodes.replace("default_shared", "sometimes")).unwrap();
    let error = import_pbs(
        &PbsInputs {
            nodes: all_excl,
            ..snapshot()
        },
        ImportOptions::default(),
    )
    .map(|_| ())
    .expect_err("a bad sharing")
    .to_string();
    assert_eq!(
        error.replace(&format!("{}/", dir.path().display()), ""),
        "pbsnodes_va.out:16: vnode `n1`: `sharing` = `sometimes`: expected one of default_shared, default_excl, default_exclhost, ignore_excl, force_excl, force_exclhost"
    );
}
