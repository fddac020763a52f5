//! Bad scenarios: each error names the file, line, column and key, and what was expected.

use crate::error_of;

const BASE: &str = "[[class]]\nname = \"n\"\ncount = 2\n";

#[test]
fn a_typo_in_a_key_names_its_line() {
    let text = "[[class]]\nname = \"n\"\ncuont = 2\n";
    assert_eq!(
        error_of(text),
        "test.toml:3:1: key `cuont`: unknown field `cuont`, expected one of `name`, `count`, `names`, `vnodes_per_host`, `host`, `ncpus`, `mem`, `ngpus`, `speed`, `queue`, `partition`, `sort_priority`, `resources`"
    );
    let text = format!("{BASE}[pbs]\nnode_group_enabled = true\n");
    assert_eq!(
        error_of(&text),
        "test.toml:5:1: key `node_group_enabled`: unknown field `node_group_enabled`, expected one of `node_group_enable`, `node_group_key`, `vnode_sharing`, `do_not_span_psets`, `only_explicit_psets`, `strict_ordering`, `scheduler_iteration`, `backfill_depth`, `opt_backfill_fuzzy`, `node_sort_key`, `job_sort_key`, `by_queue`, `round_robin`, `job_sort_formula`, `job_sort_formula_threshold`, `fair_share`, `resource_group`, `unknown_shares`, `fairshare_entity`, `fairshare_usage_res`, `fairshare_decay_time`, `fairshare_decay_factor`, `fairshare_enforce_no_shares`, `max_run`, `max_run_res`, `max_queued`, `max_queued_res`, `default_chunk`, `resources_default`, `queue`, `sched`"
    );
}

#[test]
fn wrong_types_name_the_key() {
    assert_eq!(
        error_of("[[class]]\nname = \"n\"\ncount = \"two\"\n"),
        "test.toml:3:9: key `count`: invalid type: string \"two\", expected u32"
    );
    let text = "[[resource]]\nname = \"switch\"\ntype = \"string\"\n[[class]]\nname = \"n\"\ncount = 1\nresources = { switch = 3 }\n";
    assert_eq!(
        error_of(text),
        "test.toml:7:24: key `class.resources.switch`: resource `switch` is of type string: expected a string, found integer"
    );
}

#[test]
fn unknown_and_duplicate_references() {
    assert_eq!(
        error_of(&format!("{BASE}resources = {{ colour = \"red\" }}\n")),
        "test.toml:4:24: key `class.resources.colour`: unknown resource `colour`: define it under [[resource]]"
    );
    assert_eq!(
        error_of(&format!("{BASE}queue = \"gpu\"\n")),
        "test.toml:4:9: key `class.queue`: unknown queue `gpu`: define it under [[pbs.queue]]"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[[class]]\nname = \"m\"\ncount = 1\nnames = [\"n1\"]\n"
        )),
        "test.toml:5:8: key `class.name`: vnode name `n1` is used twice"
    );
    assert_eq!(
        error_of(&format!("{BASE}[pbs]\nnode_group_key = [\"rack\"]\n")),
        "test.toml:5:19: key `pbs.node_group_key`: unknown resource `rack`: define it under [[resource]]"
    );
    assert_eq!(
        error_of(
            "[[resource]]\nname = \"color\"\ntype = \"string\"\n[[resource]]\nname = \"color\"\ntype = \"long\"\n[[class]]\nname = \"n\"\ncount = 1\n"
        ),
        "test.toml:5:8: key `resource.name`: resource `color` is defined twice"
    );
}

#[test]
fn node_group_key_on_a_non_string_resource() {
    let text = "[[resource]]\nname = \"rack\"\ntype = \"long\"\n[[class]]\nname = \"n\"\ncount = 1\n[pbs]\nnode_group_key = [\"rack\"]\n";
    assert_eq!(
        error_of(text),
        "test.toml:8:19: key `pbs.node_group_key`: resource `rack` is of type long; a node_group_key must be a string or string_array resource"
    );
}

#[test]
fn bad_values() {
    assert_eq!(
        error_of("[[resource]]\nname = \"x\"\ntype = \"text\"\n"),
        "test.toml:3:8: key `resource.type`: unknown type `text`: expected long, float, size, string, string_array or boolean"
    );
    assert_eq!(
        error_of("[[resource]]\nname = \"x\"\ntype = \"string\"\nconsumable = true\n"),
        "test.toml:2:8: key `resource.name`: resource `x` of type string cannot be consumable: only long, float and size can"
    );
    assert_eq!(
        error_of(&format!("{BASE}mem = \"4gx\"\n")),
        "test.toml:4:7: key `class.mem`: malformed size `4gx`: expected digits followed by b, kb, mb, gb or tb"
    );
    assert_eq!(
        error_of(&format!("{BASE}[run]\ndiscipline = \"sjf\"\n")),
        "test.toml:5:14: key `run.discipline`: unknown value `sjf`: expected one of fcfs, easy, greedy, conservative"
    );
    assert_eq!(
        error_of(&format!("{BASE}[run]\nplacement = \"slurm\"\n")),
        "test.toml:5:13: key `run.placement`: unknown value `slurm`: expected one of first-fit, pbs, moab"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[workload]\ntrace = \"t.swf\"\nformat = \"accounting\"\n"
        )),
        "test.toml:6:10: key `workload.format`: unknown value `accounting`: expected one of swf"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[workload]\nformat = \"swf\"\n[workload.generator]\njobs = 10\n"
        )),
        "test.toml:5:10: key `workload.format`: a generated workload has no format: give `format` with `trace`"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[moab]\nnodeset_priority_type = \"FASTEST\"\n"
        )),
        "test.toml:5:25: key `moab.nodeset_priority_type`: unknown value `FASTEST`: expected one of FIRSTFIT, BESTFIT, WORSTFIT, MINLOSS, AFFINITY, BESTRESOURCE"
    );
    assert_eq!(
        error_of(&format!("{BASE}[moab]\ndelay_mode = \"Slurm\"\n")),
        "test.toml:5:14: key `moab.delay_mode`: unknown value `Slurm`: expected one of predictive, anchored"
    );
    assert_eq!(
        error_of(&format!("{BASE}[moab]\ndelay_reference = \"start\"\n")),
        "test.toml:5:19: key `moab.delay_reference`: unknown value `start`: expected one of earliest-unconstrained, now"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[[moab.class]]\nname = \"amd\"\ndefault_nodeset = \"ONEOF:FEATURES:a\"\n"
        )),
        "test.toml:6:19: key `moab.class.default_nodeset`: column 7: unknown node-set attribute `FEATURES`: expected FEATURE, VARATTR or PROCSPEED"
    );
    assert_eq!(
        error_of("[[vnode]]\nname = \"a\"\ncount = 3\n"),
        "test.toml:2:8: key `vnode.count`: `count` belongs to a [[class]], not a single [[vnode]]"
    );
    assert_eq!(
        error_of("[run]\nseed = 1\n"),
        "test.toml:1:1: key `class`: a cluster needs at least one vnode: give at least one [[class]] or [[vnode]]"
    );
    assert_eq!(
        error_of("[[class]]\nname = \"n\"\ncount = 1\nspeed = 0.0\n"),
        "test.toml:2:8: key `class.name`: vnode `n1` has speed 0; speeds must be positive and finite"
    );
}

#[test]
fn request_rules_are_checked_when_loaded() {
    let text = format!(
        "{BASE}[workload]\ntrace = \"t.swf\"\n[[workload.rule]]\nrequest = \"select={{n}}:ncpus=1:colour=red\"\n"
    );
    assert_eq!(
        error_of(&text),
        "test.toml:7:11: key `workload.rule.request`: request `select=1:ncpus=1:colour=red` (for a job of size 1): column 18: unknown resource `colour`"
    );
    let text = format!(
        "{BASE}[workload]\ntrace = \"t.swf\"\n[[workload.rule]]\nrequest = \"select={{n}}:ncpus=1\"\nfraction = 1.5\n"
    );
    assert_eq!(
        error_of(&text),
        "test.toml:8:12: key `workload.rule.fraction`: expected a fraction from 0 to 1, found 1.5"
    );
}

/// PBS's `strict_ordering` and `backfill_depth`, Moab's `reservation_depth` and
/// `reservation_policy`, and `[run] backfill_depth` name the discipline; settings that
/// contradict each other are an error at the later key.
#[test]
fn scheduler_settings_name_the_discipline_or_are_refused() {
    use placesim_scenario::Discipline;
    let discipline = |extra: &str| {
        placesim_scenario::load_scenario(&format!("{BASE}{extra}"), std::path::Path::new("t.toml"))
            .map(|s| s.run.discipline.label())
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let easy = |depth: u32, kept: bool| Discipline::Easy { depth, kept }.label();
    assert_eq!(discipline(""), "easy");
    assert_eq!(
        discipline("[pbs]\nstrict_ordering = true\n"),
        easy(1, false)
    );
    assert_eq!(
        discipline("[pbs]\nstrict_ordering = true\nbackfill_depth = 0\n"),
        "fcfs"
    );
    assert_eq!(discipline("[pbs]\nbackfill_depth = 4\n"), "easy-depth4");
    assert_eq!(discipline("[run]\ndiscipline = \"fcfs\"\n"), "fcfs");
    assert_eq!(
        discipline("[run]\ndiscipline = \"conservative\"\n"),
        "conservative"
    );
    assert_eq!(discipline("[run]\nbackfill_depth = 3\n"), "easy-depth3");
    assert_eq!(discipline("[run]\nbackfill_depth = 0\n"), "fcfs");
    // Without strict ordering PBS starts whatever fits: greedy, whatever backfill_depth says.
    assert_eq!(
        discipline("[pbs]\nstrict_ordering = false\nbackfill_depth = 1\n"),
        "greedy"
    );
    assert_eq!(discipline("[moab]\nreservation_depth = 2\n"), "easy-depth2");
    assert_eq!(
        discipline("[moab]\nreservation_policy = \"HIGHEST\"\n"),
        "easy-highest"
    );
    assert_eq!(
        discipline("[moab]\nreservation_policy = \"never\"\nreservation_depth = 3\n"),
        "greedy"
    );
    assert_eq!(
        error_of(&format!(
            "[run]\ndiscipline = \"easy\"\n{BASE}[pbs]\nstrict_ordering = false\n"
        )),
        "test.toml:2:14: key `run.discipline`: `easy` contradicts [pbs] strict_ordering / backfill_depth, which name greedy (strict_ordering = false)"
    );
    assert_eq!(
        error_of(&format!(
            "[run]\ndiscipline = \"easy\"\n{BASE}[pbs]\nbackfill_depth = 0\n"
        )),
        "test.toml:2:14: key `run.discipline`: `easy` contradicts [pbs] strict_ordering / backfill_depth, which name fcfs (backfill_depth = 0)"
    );
    assert_eq!(
        error_of(&format!(
            "[run]\ndiscipline = \"greedy\"\nbackfill_depth = 2\n{BASE}"
        )),
        "test.toml:3:18: key `run.backfill_depth`: a backfill depth goes with discipline easy, not greedy"
    );
    assert_eq!(
        error_of(&format!(
            "[run]\nbackfill_depth = 2\n{BASE}[pbs]\nbackfill_depth = 3\n"
        )),
        "test.toml:2:18: key `run.backfill_depth`: `2` contradicts [pbs] strict_ordering / backfill_depth, which name easy-depth3 (backfill_depth = 3)"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[pbs]\nbackfill_depth = 3\n[moab]\nreservation_depth = 2\n"
        )),
        "test.toml:7:21: key `reservation_depth`: [moab] reservation_depth / reservation_policy (reservation_depth = 2, reservation_policy = CURRENTHIGHEST) names easy-depth2, but [pbs] strict_ordering / backfill_depth (backfill_depth = 3) names easy-depth3"
    );
    assert_eq!(discipline("[pbs]\nopt_backfill_fuzzy = \"OFF\"\n"), "easy");
    assert_eq!(
        error_of(&format!("{BASE}[pbs]\nopt_backfill_fuzzy = \"low\"\n")),
        "test.toml:5:22: key `pbs.opt_backfill_fuzzy`: opt_backfill_fuzzy `low` is not modelled: top-job start times are exact, as PBS computes them with `off`"
    );
    // PBS's job order, and its keys refused with what is wrong.
    let order = |extra: &str| {
        placesim_scenario::load_scenario(&format!("{BASE}{extra}"), std::path::Path::new("t.toml"))
            .map(|s| s.pbs.order)
    };
    let o = order("[pbs]\njob_sort_key = [\"ncpus HIGH\", \"walltime low\"]\nround_robin = true\n")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (
            o.keys.len(),
            o.keys[0].high_first,
            o.keys[1].high_first,
            o.by_queue,
            o.round_robin
        ),
        (2, true, false, true, true)
    );
    assert_eq!(
        error_of(&format!("{BASE}[pbs]\njob_sort_key = [\"ncpus\"]\n")),
        "test.toml:5:17: key `pbs.job_sort_key`: `ncpus`: expected `<resource> HIGH` or `<resource> LOW`"
    );
    assert_eq!(
        error_of(&format!("{BASE}[pbs]\njob_sort_key = [\"ncpus UP\"]\n")),
        "test.toml:5:17: key `pbs.job_sort_key`: `ncpus UP`: unknown direction `UP`: expected HIGH or LOW"
    );
    assert_eq!(
        error_of(&format!("{BASE}[pbs]\njob_sort_key = [\"host HIGH\"]\n")),
        "test.toml:5:17: key `pbs.job_sort_key`: `host HIGH`: `host` is not a consumable resource, walltime or a PBS sort key"
    );
    let o = order("[pbs]\njob_sort_formula = \"ncpus * walltime + eligible_time / 60\"\njob_sort_formula_threshold = -1.5\n")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (o.formula.as_ref().map(|f| f.is_dynamic()), o.threshold),
        (Some(true), Some(-1.5))
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[pbs]\njob_sort_formula = \"ncpus * accrue_type\"\n"
        )),
        "test.toml:5:20: key `pbs.job_sort_formula`: `ncpus * accrue_type`: column 9: accrue_type is not modelled"
    );
    assert_eq!(
        error_of(&format!("{BASE}[pbs]\njob_sort_formula = \"ncpus *\"\n")),
        "test.toml:5:20: key `pbs.job_sort_formula`: `ncpus *`: column 8: expected a number, a term or `(`, found the end"
    );
    assert_eq!(
        error_of(&format!("{BASE}[pbs]\njob_sort_formula_threshold = 3\n")),
        "test.toml:5:30: key `pbs.job_sort_formula_threshold`: a threshold goes with a job_sort_formula"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[pbs]\njob_sort_key = [\"ncpus HIGH\"]\n[moab.priority]\nprocweight = 1\n"
        )),
        "test.toml:6:1: key `moab.priority`: [moab.priority] and PBS's job order (job_sort_key, job_sort_formula, queue priorities) both order the queue: give one"
    );
    // node_sort_key: its refusals. Unused amounts go with placement sets too, sorted again
    // at each placement.
    let unused = format!(
        "{BASE}[run]\nplacement = \"pbs\"\n[pbs]\nnode_sort_key = [\"ncpus HIGH unused\"]\n"
    );
    let s = placesim_scenario::load_scenario(&unused, std::path::Path::new("t.toml")).unwrap();
    assert!(
        s.pbs
            .psets
            .node_sort
            .as_ref()
            .is_some_and(|n| n.is_dynamic())
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[pbs]\nnode_sort_key = [\"ncpus HIGH free\"]\n"
        )),
        "test.toml:5:18: key `pbs.node_sort_key`: `ncpus HIGH free`: unknown amount `free`: expected total, unused or assigned"
    );
    assert_eq!(
        error_of(&format!("{BASE}[pbs]\nnode_sort_key = [\"host HIGH\"]\n")),
        "test.toml:5:18: key `pbs.node_sort_key`: `host HIGH`: `host` is not sort_priority or a consumable resource"
    );
    assert_eq!(
        error_of(&format!(
            "[run]\nplacement = \"moab\"\n{BASE}[pbs]\nnode_sort_key = [\"ncpus HIGH\"]\n"
        )),
        "test.toml:7:17: key `pbs.node_sort_key`: node_sort_key is PBS's: it goes with placement first-fit or pbs, not moab"
    );
    // A queue's own depth is read into its settings, and goes with PBS's disciplines only.
    let queue_depth = format!("{BASE}[[pbs.queue]]\nname = \"q\"\nbackfill_depth = 10\n");
    let s = placesim_scenario::load_scenario(&queue_depth, std::path::Path::new("t.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.pbs.queues[0].backfill_depth, Some(10));
    assert_eq!(
        error_of(&format!(
            "[run]\ndiscipline = \"conservative\"\n{queue_depth}"
        )),
        "test.toml:8:18: key `pbs.queue.backfill_depth`: a queue's backfill_depth goes with PBS's strict_ordering (discipline easy or fcfs), not conservative"
    );
    let cycles = |extra: &str| {
        placesim_scenario::load_scenario(&format!("{BASE}{extra}"), std::path::Path::new("t.toml"))
            .map(|s| s.run.cycles)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    use placesim_core::{Cycles, SimDuration};
    assert_eq!(cycles(""), Cycles::EventExact);
    assert_eq!(
        cycles("[run]\ncycles = \"pbs\"\n"),
        Cycles::PbsIteration(SimDuration(600))
    );
    assert_eq!(
        cycles("[run]\ncycles = \"moab\"\n[moab]\nrmpoll_interval = \"2:00\"\n"),
        Cycles::MoabPoll(SimDuration(120))
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[run]\ncycles = \"pbs\"\n[pbs]\nscheduler_iteration = 0\n"
        )),
        "test.toml:7:23: key `pbs.scheduler_iteration`: expected a period of at least 1 second"
    );
    assert_eq!(
        error_of(&format!("{BASE}[moab]\nreservation_policy = \"lowest\"\n")),
        "test.toml:5:22: key `moab.reservation_policy`: unknown value `lowest`: expected one of CURRENTHIGHEST, HIGHEST, NEVER"
    );
}

#[test]
fn outage_and_failure_model_errors_name_their_key() {
    let outage = |body: &str| error_of(&format!("{BASE}[[failures.outage]]\n{body}\n"));
    assert_eq!(
        outage("vnode = \"n9\"\ndown = 0\nup = 10"),
        "test.toml:5:9: key `failures.outage.vnode`: unknown vnode `n9`"
    );
    assert_eq!(
        outage("class = \"m\"\ndown = 0\nup = 10"),
        "test.toml:5:9: key `failures.outage.class`: unknown class `m`: define it under [[class]] or [[cluster.generation]]"
    );
    assert_eq!(
        outage("vnode = \"n1\"\ndown = 10\nup = 10"),
        "test.toml:7:6: key `failures.outage.up`: expected a time after `down` (10 s), found 10 s"
    );
    assert_eq!(
        outage("vnode = \"n1\"\nclass = \"n\"\ndown = 0\nup = 10"),
        "test.toml:5:9: key `failures.outage`: give `vnode` or `class`, not both"
    );
    assert_eq!(
        outage("down = 0\nup = 10"),
        "test.toml:5:8: key `failures.outage`: expected `vnode` or `class`: which vnodes go down"
    );
    assert_eq!(
        outage("vnode = \"n1\"\ndown = \"1:xx\"\nup = 10"),
        "test.toml:6:8: key `failures.outage.down`: expected a duration [[[DD:]HH:]MM:]SS or seconds, found `1:xx`"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[[failures.model]]\nclass = \"n\"\nmtbf = 0\nmttr = 5\n"
        )),
        "test.toml:6:8: key `failures.model.mtbf`: expected a duration above 0"
    );
    assert_eq!(
        error_of(&format!("{BASE}[failures]\non_failure = \"retry\"\n")),
        "test.toml:5:14: key `failures.on_failure`: unknown value `retry`: expected one of requeue, kill"
    );
}

#[test]
fn bad_metrics_and_arrival_scale_name_their_keys() {
    assert_eq!(
        error_of(&format!("{BASE}[metrics]\nwarmup = \"lots\"\n")),
        "test.toml:5:10: key `metrics.warmup`: expected a duration [[[DD:]HH:]MM:]SS or a share of the jobs \"N%\" (below 50%), found `lots`"
    );
    assert_eq!(
        error_of(&format!("{BASE}[metrics]\nsample_every = -3\n")),
        "test.toml:5:16: key `metrics.sample_every`: expected a duration [[[DD:]HH:]MM:]SS or seconds, found integer"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[workload]\ntrace = \"t.swf\"\narrival_scale = 0.0\n"
        )),
        "test.toml:6:17: key `workload.arrival_scale`: expected a number above 0 and at most 1000, found 0"
    );
}

/// A site's resourcedef lists built-ins (ngpus, mem): a definition that says what the
/// built-in is loads, one that says otherwise is refused, naming both.
#[test]
fn a_built_in_resource_may_be_defined_as_it_is() {
    let cluster = "[[class]]\nname = \"n\"\ncount = 1\nngpus = 2\n";
    let same = format!(
        "[[resource]]\nname = \"ngpus\"\ntype = \"long\"\nconsumable = true\n\
         [[resource]]\nname = \"mem\"\ntype = \"size\"\nconsumable = true\n{cluster}"
    );
    let scenario = crate::load_text(&same).unwrap();
    let defs = scenario.cluster.resources();
    assert_eq!(defs.all().len(), 5, "no resource added");
    assert_eq!(
        scenario
            .cluster
            .capacity_total(defs.consumable_idx(defs.lookup("ngpus").unwrap()).unwrap()),
        2
    );
    assert_eq!(
        error_of(&format!(
            "[[resource]]\nname = \"ngpus\"\ntype = \"string\"\n{cluster}"
        )),
        "test.toml:2:8: key `resource.name`: `ngpus` is built in as a consumable long; this \
         defines it as a non-consumable string"
    );
}

/// `[[vnode]]` entries naming one host form one host, as `pbsnodes` lists a multi-vnode
/// host; an entry without `host` is a host of its own.
#[test]
fn vnodes_naming_one_host_form_one_host() {
    let text = "[[vnode]]\nname = \"a[0]\"\nhost = \"a\"\nncpus = 2\n\
                [[vnode]]\nname = \"a[1]\"\nhost = \"a\"\nncpus = 2\n\
                [[vnode]]\nname = \"b\"\nncpus = 2\n";
    let scenario = crate::load_text(text).unwrap();
    let cluster = &scenario.cluster;
    assert_eq!(cluster.hosts(), ["a", "b"]);
    let host_of_vnodes: Vec<usize> = cluster
        .host_vnodes(placesim_core::HostId::from_index(0))
        .iter()
        .map(|v| v.index())
        .collect();
    assert_eq!(host_of_vnodes, [0, 1]);
}

/// A bad FSTARGET is refused at its entry, under its credential kind's key.
#[test]
fn a_bad_moab_fairshare_target_is_refused_at_its_entry() {
    let text = format!(
        "{BASE}[moab.priority]\nfsgroupweight = 1\n[moab.fairshare]\npolicy = \"DEDICATEDPS\"\n\
         group = {{ \"3\" = \"120+\" }}\n"
    );
    assert_eq!(
        error_of(&text),
        "test.toml:8:17: key `moab.fairshare.group`: `120+`: expected a target percent from 0 to \
         100, optionally followed by + (floor) or - (ceiling)"
    );
}

/// `[pbs] vnode_sharing`: one of PBS's values, not with Moab's placement; under a sharing that
/// makes every job exclusive, no vnode holds two jobs running at the start.
#[test]
fn vnode_sharing_is_checked() {
    assert_eq!(
        error_of(&format!("{BASE}[pbs]\nvnode_sharing = \"sometimes\"\n")),
        "test.toml:5:17: key `pbs.vnode_sharing`: expected one of default_shared, default_excl, default_exclhost, ignore_excl, force_excl, force_exclhost, found `sometimes`"
    );
    assert_eq!(
        error_of(&format!(
            "[run]\nplacement = \"moab\"\n{BASE}[pbs]\nvnode_sharing = \"force_excl\"\n"
        )),
        "test.toml:7:17: key `pbs.vnode_sharing`: vnode sharing is PBS's: Moab's node sharing is moab.node_access_policy"
    );
    let running = "[[running]]\nid = 1\nexec_vnode = \"(n1:ncpus=1)\"\nend = 10\n\
                   [[running]]\nid = 2\nexec_vnode = \"(n1:ncpus=1)\"\nend = 10\n";
    let shared = format!("{BASE}ncpus = 4\n{running}");
    crate::load_text(&shared).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        error_of(&format!(
            "{shared}[pbs]\nvnode_sharing = \"default_excl\"\n"
        )),
        "test.toml:11:14: key `running.exec_vnode`: `(n1:ncpus=1)`: vnode `n1` also holds running job 1, and pbs.vnode_sharing makes each job exclusive"
    );
}

/// `resources_default` takes `walltime` and `place`; any other job-wide resource is refused,
/// as is a place that does not read.
#[test]
fn resources_default_takes_walltime_and_place() {
    assert_eq!(
        error_of(&format!(
            "{BASE}[pbs]\nresources_default = {{ mem = \"1gb\" }}\n"
        )),
        "test.toml:5:29: key `pbs.resources_default.mem`: job-wide `mem` is not modelled: every job here has a select, whose chunks carry their resources (default_chunk fills them); resources_default takes walltime and place"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[[pbs.queue]]\nname = \"q\"\nresources_default = {{ place = \"scatter excl\" }}\n"
        )),
        "test.toml:6:31: key `pbs.queue.resources_default.place`: expected a place such as \"scatter:excl\""
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[pbs]\nresources_default = {{ place = \"scatter:sometimes\" }}\n"
        )),
        "test.toml:5:31: key `pbs.resources_default.place`: `scatter:sometimes`: column 9: unknown place `sometimes`: expected free, pack, scatter, vscatter, excl, shared, exclhost or group=RES"
    );
    let s = crate::load_text(&format!(
        "{BASE}[pbs]\nvnode_sharing = \"force_excl\"\n\
         resources_default = {{ walltime = \"01:00:00\", place = \"scatter:excl\" }}\n\
         [[pbs.queue]]\nname = \"q\"\nresources_default = {{ walltime = 600 }}\n"
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.pbs.resources_default.walltime_s, Some(3600));
    // `placesim check` says them.
    let said = placesim_scenario::describe(&s);
    for line in [
        "vnode sharing: force_excl on every vnode\n",
        "resources_default of the server: walltime 3600 s (jobs that ask for none), place=scatter:excl (jobs that give none)\n",
        "resources_default of the queue q: walltime 600 s (jobs that ask for none)\n",
    ] {
        assert!(said.contains(line), "no `{line}` in\n{said}");
    }
}
