//! What each fuzz target checks of one input, as a function: the targets in `fuzz_targets/`
//! hand libFuzzer's inputs to these, and the workspace's test suite hands them every seed in
//! `fuzz/seeds/` (`crates/placesim-cli/tests/fuzz_seeds.rs` compiles this file as a module).
//! The fuzz crate is outside the workspace, as it builds only with the nightly toolchain, so
//! without that test nothing would notice when a change to the crates stops the targets from
//! building (an `SwfOptions` field added on 2026-11-24 did, unseen until 2026-12-05), or when
//! a seed a target was started from fails its checks.
//!
//! Each function panics where the input breaks the promise its target checks (a panic is
//! what libFuzzer reports as a crash) and returns otherwise; what it needs from the
//! repository (the import crate's fixture sites) is found under `repo`, the project's root.

use placesim_core::{
    Chunk, ConsumableIdx, Job, JobId, Request, RequestId, ResourceDefs, ResourceKind, SimDuration,
    SimTime, Workload,
};
use placesim_import::{
    ImportOptions, PbsInputs, TorqueInputs, files, import_pbs, import_torque_moab,
};
use placesim_policy::queue::{FairshareTree, Formula, Term, TermValues};
use placesim_request::{parse_bool, parse_duration, parse_nodeset, parse_request, parse_size};
use placesim_scenario::{describe, load_scenario};
use placesim_workload::pbs_accounting::{assemble_jobs, parse_record};
use placesim_workload::{SwfOptions, read_trace};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// Any bytes, plain or gzipped, given to the SWF reader: it returns a trace or an error,
/// never panics, and a trace accounts for every record.
pub fn swf_reader(data: &[u8]) {
    let defs = ResourceDefs::default();
    for skip_bad_lines in [false, true] {
        let opts = SwfOptions {
            procs: None,
            skip_bad_lines,
            // Extended lines keep a field, and every other reading keeps them all, so that
            // the kept-field and the kept-extended paths are fuzzed too.
            keep_field: Some(19),
            keep_extended: skip_bad_lines,
        };
        let reader: Box<dyn Read> = if data.starts_with(&[0x1f, 0x8b]) {
            Box::new(flate2::read::MultiGzDecoder::new(data))
        } else {
            Box::new(data)
        };
        if let Ok(trace) = read_trace(BufReader::new(reader), Path::new("fuzz.swf"), &opts, &defs) {
            let kept = trace.workload.jobs().len() as u64;
            assert_eq!(trace.records, kept + trace.skipped.total());
        }
    }
}

/// Any text given to the scenario loader: it returns a scenario or an error naming the
/// place, never panics; a scenario describes itself and draws its outages.
pub fn scenario_loader(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match load_scenario(text, Path::new("fuzz.toml")) {
        Ok(scenario) => {
            let _ = describe(&scenario);
            if let Ok(empty) = Workload::new(Vec::new(), Vec::new())
                && let Err(e) = scenario.outages(&empty)
            {
                assert!(e.to_string().starts_with("fuzz.toml"), "{e}");
            }
        }
        Err(e) => assert!(e.to_string().starts_with("fuzz.toml"), "{e}"),
    }
}

/// Any text as a requests file, and each of its lines as a request, a Moab node-set, a size,
/// a duration and a boolean: every parser returns a value or an error naming the place,
/// never panics or overflows the stack; a request that parses prints to a form that parses
/// back to it.
pub fn request_language(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut defs = ResourceDefs::default();
    for (name, kind, consumable) in [
        ("switch", ResourceKind::String, false),
        ("color", ResourceKind::String, false),
        ("features", ResourceKind::StringArray, false),
        ("bigmem", ResourceKind::Boolean, false),
        ("speed", ResourceKind::Float, false),
        ("scratch", ResourceKind::Size, false),
        ("licenses", ResourceKind::Float, true),
    ] {
        let _ = defs.define(name, kind, consumable);
    }
    if let Err(e) = placesim_scenario::parse_requests_file(text, Path::new("fuzz.req"), &defs) {
        assert!(e.to_string().starts_with("fuzz.req"), "{e}");
    }
    for line in text.lines() {
        let _ = (
            parse_nodeset(line, &defs),
            parse_size(line),
            parse_duration(line),
            parse_bool(line),
        );
        if let Ok(request) = parse_request(line, &defs) {
            let printed = request.to_string();
            assert_eq!(
                parse_request(&printed, &defs).as_ref(),
                Ok(&request),
                "{printed}"
            );
            let _ = placesim_request::lower(&request, &defs);
        }
    }
}

/// `dir`, made if need be, holding the small valid base scenario `base.toml` that
/// [`sweep_file`]'s inputs sweep over: made once, before the inputs.
pub fn sweep_base(dir: &Path) {
    std::fs::create_dir_all(dir).expect("the sweep's directory");
    std::fs::write(
        dir.join("base.toml"),
        "[[class]]\nname = \"n\"\ncount = 4\nncpus = 2\n[workload.generator]\njobs = 20\nstreams = \"typeless\"\n",
    )
    .expect("the base scenario");
}

/// Any text as a sweep file over the base scenario in `dir` ([`sweep_base`]): loading it
/// returns the grid or an error naming the sweep or the base, never panics, and never
/// builds a grid past the limit.
pub fn sweep_file(data: &[u8], dir: &Path) {
    let path = dir.join("fuzz.sweep.toml");
    std::fs::write(&path, data).expect("the sweep file");
    match placesim_run::Sweep::load(&path) {
        Ok(sweep) => assert!(sweep.runs.len() as u64 <= placesim_run::MAX_SWEEP_RUNS),
        Err(e) => {
            let text = e.to_string();
            assert!(
                text.contains("fuzz.sweep.toml") || text.contains("base.toml"),
                "{text}"
            );
        }
    }
}

/// Any text as a `job_sort_formula`: it parses to a formula or an error naming a column
/// inside the text, never panics or overflows the stack; a formula that parses evaluates to
/// a finite value for any job.
pub fn job_sort_formula(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let terms = |name: &str| match name {
        "ncpus" => Ok(Term::Resource(ConsumableIdx::NCPUS)),
        "mem" => Ok(Term::Resource(ConsumableIdx::MEM)),
        "walltime" => Ok(Term::Walltime),
        "eligible_time" => Ok(Term::EligibleTime),
        "queue_priority" => Ok(Term::QueuePriority),
        other => Err(format!("unknown term `{other}`")),
    };
    match Formula::parse(text, &terms) {
        Err(e) => assert!(e.column >= 1 && e.column <= text.len() + 1, "{e}"),
        Ok(formula) => {
            let job = Job::new(
                1,
                SimTime(0),
                SimDuration(u64::from(u32::MAX)),
                SimDuration(u64::from(u32::MAX)),
                u32::MAX,
                RequestId(0),
            );
            // The largest request a request text can give (its totals fit in 64 bits).
            let request = Request::from_chunks(vec![Chunk::new(
                u32::MAX,
                vec![u64::from(u32::MAX) + 2, 0, 1],
            )]);
            let workload = Workload::new(vec![job], vec![request]).expect("one job");
            let v = formula.value(&TermValues {
                queue_priority: i64::MIN,
                ..TermValues::at(&workload, JobId(0), SimTime(u64::MAX))
            });
            assert!(v.is_finite());
        }
    }
}

/// Any text as a fairshare `resource_group` file (its first byte also the unknown group's
/// shares): it reads to a tree or an error naming a line of the text, never a panic; in a
/// tree, every entity it names, and one it does not (which joins `unknown`), has a share of
/// the machine between 0 and 1.
pub fn fairshare_tree(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let unknown_shares = data.first().map_or(0, |&b| u64::from(b) << (b % 64));
    match FairshareTree::parse(text, unknown_shares) {
        Err(e) => assert!(e.line >= 1 && e.line <= text.lines().count(), "{e}"),
        Ok(mut tree) => {
            let names = text
                .lines()
                .filter_map(|line| line.split_whitespace().next())
                .chain(["placesim-fuzz-newcomer"]);
            for name in names {
                let node = tree.entity(name);
                let share = tree.tree_percentage(node);
                assert!((0.0..=1.0).contains(&share), "{name}: {share}");
            }
        }
    }
}

/// Any bytes as a `recorded.tsv` (the import's record of what really happened): it reads to
/// jobs or an error naming the file and a line of it, never a panic; each job is read once.
/// The bytes are written to `scratch`, a directory of the caller's.
pub fn recorded_file(data: &[u8], scratch: &Path) {
    let Some(path) = written(scratch, "recorded.tsv", data) else {
        return;
    };
    match placesim_workload::recorded::read_recorded(&path) {
        Err(e) => assert!(
            e.to_string().starts_with(&path.display().to_string()),
            "{e}"
        ),
        Ok(jobs) => {
            let mut ids: Vec<u64> = jobs.iter().map(|j| j.job_id).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), jobs.len());
        }
    }
}

/// Any text given to the PBS accounting reader, line by line: each line is a record or an
/// error naming a column inside the line, never a panic; the records assemble into jobs
/// whose counts never exceed the jobs.
pub fn pbs_accounting(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut records = Vec::new();
    for line in text.lines() {
        match parse_record(line) {
            Ok(r) => records.push(r),
            Err(e) => assert!(e.column <= line.chars().count() + 1, "{e}"),
        }
    }
    let (jobs, counts) = assemble_jobs(&records);
    let n = jobs.len() as u64;
    assert!(counts.requeued <= n && counts.unfinished <= n && counts.routed <= n);
}

/// Any text as each of a PBS site's files (`placesim import pbs`): the node list (text and
/// JSON), qmgr output, `list sched`, sched_config, resourcedef and `pbs_rstat -f` are read
/// or refused with an error, and as an accounting log, or as the reservations, beside the
/// import crate's fixture site under `repo` it imports or is refused, never a panic. The
/// text is written to `scratch`, a directory of the caller's.
pub fn pbs_import(data: &[u8], repo: &Path, scratch: &Path) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let p = Path::new("fuzz");
    let _ = files::parse_pbsnodes(p, text);
    let _ = files::parse_qmgr(p, text);
    let _ = files::parse_list_sched(p, text);
    let _ = files::parse_sched_config(p, text);
    let _ = files::parse_resourcedef(p, text);
    let _ = files::parse_rstat(p, text);
    let Some(log) = written(scratch, "log", text) else {
        return;
    };
    let snapshot = repo.join("crates/placesim-import/tests/data/snap");
    let Ok(mut inputs) = PbsInputs::from_snapshot(&snapshot) else {
        return;
    };
    let site_logs = std::mem::take(&mut inputs.accounting);
    for skip_bad_records in [false, true] {
        inputs.accounting = vec![log.clone()];
        let _ = import_pbs(&inputs, ImportOptions { skip_bad_records });
    }
    inputs.accounting = site_logs;
    inputs.reservations = Some(log);
    let _ = import_pbs(&inputs, ImportOptions::default());
}

/// Any text as each of a Torque/Moab site's files (`placesim import torque-moab`): as the
/// node list (`server_priv/nodes`, `pbsnodes -a`, a Maui resource trace), as `moab.cfg`, and
/// as the jobs (accounting logs, a Maui workload trace or Moab's workload event records)
/// beside the import crate's Torque fixture under `repo`, it imports or is refused with an
/// error, never a panic. The text is written to `scratch`, a directory of the caller's.
pub fn torque_import(data: &[u8], repo: &Path, scratch: &Path) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let p = Path::new("fuzz");
    let _ = files::parse_torque_nodes(p, text);
    let _ = files::parse_moab_cfg(p, text);
    let Some(file) = written(scratch, "input", text) else {
        return;
    };
    let fixture = |name: &str| {
        repo.join("crates/placesim-import/tests/data/torque")
            .join(name)
    };
    let site = TorqueInputs {
        nodes: fixture("nodes"),
        moab_cfg: Some(fixture("moab.cfg")),
        accounting: vec![fixture("accounting/20170405")],
    };
    let maui = TorqueInputs {
        nodes: fixture("resources.trace"),
        moab_cfg: None,
        accounting: vec![fixture("workload.trace")],
    };
    for skip_bad_records in [false, true] {
        let options = ImportOptions { skip_bad_records };
        for inputs in [
            TorqueInputs {
                nodes: file.clone(),
                ..site.clone()
            },
            TorqueInputs {
                moab_cfg: Some(file.clone()),
                ..site.clone()
            },
            TorqueInputs {
                accounting: vec![file.clone()],
                ..site.clone()
            },
            TorqueInputs {
                accounting: vec![file.clone()],
                ..maui.clone()
            },
        ] {
            let _ = import_torque_moab(&inputs, options);
        }
    }
}

/// `bytes` written to `dir/name` (`dir` made if need be), or `None` when they cannot be: the
/// importers and the recorded file's reader read their inputs from files.
fn written(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> Option<PathBuf> {
    std::fs::create_dir_all(dir).ok()?;
    let path = dir.join(name);
    std::fs::write(&path, bytes).ok()?;
    Some(path)
}
