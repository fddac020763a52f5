//! Generated clusters, generated workloads and the runtime model, from scenario files.

use crate::{error_of, load_text};
use placesim_core::{AttrValue, VnodeId};
use placesim_scenario::{WorkloadSource, describe};

#[test]
fn nodes_in_racks_under_switches_by_generation() {
    let s = load_text(
        "[cluster]\nnodes = 10\nracks_of = 2\nswitches_of = 4\n\
         [[cluster.generation]]\nname = \"old\"\ncount = 6\nspeed = 1.0\nncpus = 16\nmem = \"64gb\"\nresources = { features = [\"ib\"] }\n\
         [[cluster.generation]]\nname = \"new\"\ncount = 4\nspeed = 1.8\nncpus = 32\nmem = \"256gb\"\nresources = { features = [\"ib\", \"gpu\"] }\n",
    )
    .unwrap();
    let c = &s.cluster;
    assert_eq!(c.n_vnodes(), 10);
    let defs = c.resources();
    let attr = |v: usize, name: &str| {
        c.vnode(VnodeId::from_index(v))
            .attr(defs.lookup(name).unwrap())
            .cloned()
    };
    let text = |v: usize, name: &str| match attr(v, name) {
        Some(AttrValue::Str(s)) => s,
        other => panic!("{name} of vnode {v}: {other:?}"),
    };
    // Node 7 (0-based 6) is the first `new` one: rack 4 (of 2), switch 2 (of 4).
    assert_eq!(c.vnode(VnodeId(6)).name(), "new1");
    assert_eq!(
        (text(6, "rack"), text(6, "switch"), text(6, "model")),
        ("rack4".into(), "switch2".into(), "new".into())
    );
    assert_eq!(
        (text(0, "rack"), text(0, "switch"), text(0, "model")),
        ("rack1".into(), "switch1".into(), "old".into())
    );
    assert_eq!(text(9, "switch"), "switch3");
    assert_eq!(c.vnode(VnodeId(9)).speed, 1.8);
    assert_eq!(
        attr(9, "features"),
        Some(AttrValue::StrArray(vec!["ib".into(), "gpu".into()]))
    );
    let out = describe(&s);
    assert!(
        out.contains("    switch=switch1: 4 vnodes old[1-4]; 64 ncpus, 256gb mem\n"),
        "{out}"
    );
    assert!(
        out.contains("    switch=switch2: 4 vnodes old[5-6],new[1-2]; 96 ncpus, 640gb mem\n"),
        "{out}"
    );
    // The runtime model's topology defaults to the generated switch key.
    assert_eq!(s.runtime.settings.topology, defs.lookup("switch"));
}

#[test]
fn the_seed_examples_as_generators() {
    // Seed 002's two switches of 12 vnodes.
    let s = load_text("[cluster]\nswitches_of = 12\n[[cluster.generation]]\nname = \"n\"\ncount = 24\nncpus = 8\n").unwrap();
    let all = (0..24).map(VnodeId::from_index);
    let sets = s
        .cluster
        .sets_by(s.cluster.resources().lookup("switch").unwrap(), all, false);
    let sizes: Vec<_> = sets.iter().map(|(v, m)| (v.as_str(), m.len())).collect();
    assert_eq!(sizes, vec![("switch1", 12), ("switch2", 12)]);
    // Seed 000's colour/shape cluster: four generations of two.
    let mut text = String::from(
        "[[resource]]\nname = \"color\"\ntype = \"string\"\n[[resource]]\nname = \"shape\"\ntype = \"string\"\n[cluster]\n",
    );
    for (name, color, shape) in [
        ("bs", "blue", "square"),
        ("bt", "blue", "triangle"),
        ("rs", "red", "square"),
        ("rt", "red", "triangle"),
    ] {
        text += &format!(
            "[[cluster.generation]]\nname = \"{name}\"\ncount = 2\nresources = {{ color = \"{color}\", shape = \"{shape}\" }}\n"
        );
    }
    let out = describe(&load_text(&text).unwrap());
    assert!(
        out.contains("    color=blue: 4 vnodes bs[1-2],bt[1-2]; 4 ncpus, 0kb mem\n"),
        "{out}"
    );
    assert!(
        out.contains("    shape=square: 4 vnodes bs[1-2],rs[1-2]; 4 ncpus, 0kb mem\n"),
        "{out}"
    );
}

#[test]
fn generated_cluster_errors() {
    assert_eq!(
        error_of("[cluster]\nnodes = 5\n[[cluster.generation]]\nname = \"a\"\ncount = 4\n"),
        "test.toml:2:9: key `cluster.nodes`: the generations' counts add up to 4, not 5"
    );
    assert_eq!(
        error_of("[cluster]\nracks_of = 0\n[[cluster.generation]]\nname = \"a\"\ncount = 4\n"),
        "test.toml:2:12: key `cluster.racks_of`: expected at least 1 node"
    );
    assert_eq!(
        error_of("[cluster]\n[[cluster.generation]]\nname = \"a\"\n"),
        "test.toml:3:8: key `cluster.generation.count`: a class needs `count`, the number of its vnodes"
    );
}

#[test]
fn a_generator_workload_is_seeded_by_the_scenario() {
    let text = |seed: u64| {
        format!(
            "[run]\nseed = {seed}\n[[class]]\nname = \"n\"\ncount = 64\nncpus = 4\n[workload.generator]\njobs = 2000\nstreams = \"typeless\"\nmax_estimate = \"36:00:00\"\n[workload.generator.typeless]\nserial_prob = 0.5\n"
        )
    };
    let s = load_text(&text(1)).unwrap();
    let WorkloadSource::Generator(spec) = &s.workload.as_ref().unwrap().source else {
        panic!("a generator")
    };
    assert_eq!((spec.jobs, spec.max_estimate_s), (2000, 36 * 3600));
    let a = s.workload().unwrap();
    let jobs = a.trace.workload.jobs();
    assert_eq!(jobs.len(), 2000);
    // Machine: 256 ncpus, so sizes reach it but not beyond; estimates cover runtimes.
    assert!(
        jobs.iter()
            .all(|j| j.size <= 256 && j.estimate >= j.runtime)
    );
    let serial = jobs.iter().filter(|j| j.size == 1).count();
    assert!(
        (900..1100).contains(&serial),
        "{serial} serial jobs with serial_prob 0.5"
    );
    let b = load_text(&text(1)).unwrap().workload().unwrap();
    assert_eq!(b.trace.workload.jobs(), jobs);
    let c = load_text(&text(2)).unwrap().workload().unwrap();
    assert_ne!(c.trace.workload.jobs(), jobs);
}

#[test]
fn generator_errors() {
    let base = "[[class]]\nname = \"n\"\ncount = 4\n";
    assert_eq!(
        error_of(&format!(
            "{base}[workload.generator]\njobs = 10\nstreams = \"mixed\"\n"
        )),
        "test.toml:6:11: key `workload.generator.streams`: unknown value `mixed`: expected one of batch+interactive, batch, interactive, typeless"
    );
    assert_eq!(
        error_of(&format!(
            "{base}[workload.generator]\njobs = 10\n[workload.generator.batch]\nserial = 0.5\n"
        )),
        "test.toml:7:1: key `serial`: unknown field `serial`, expected one of `serial_prob`, `pow2_prob`, `ulow`, `umed`, `uhi`, `uprob`, `a1`, `b1`, `a2`, `b2`, `pa`, `pb`, `aarr`, `barr`, `arar`, `anum`, `bnum`"
    );
    assert_eq!(
        error_of(&format!(
            "{base}[workload]\ntrace = \"t.swf\"\n[workload.generator]\njobs = 10\n"
        )),
        "test.toml:5:9: key `workload.trace`: give either `trace` or [workload.generator], not both"
    );
    let s = load_text(&format!(
        "{base}[workload.generator]\njobs = 10\n[workload.generator.batch]\nb1 = -1.0\n"
    ))
    .unwrap();
    assert_eq!(
        s.workload().unwrap_err().to_string(),
        "test.toml: [workload.generator]: Lublin model parameter a1/b1 = -1 is invalid: gamma shape and scale must be positive and finite"
    );
    let s = load_text(&format!(
        "{base}[workload.generator]\njobs = 10\n[workload.generator.interactive]\nulow = -2\n"
    ))
    .unwrap();
    assert_eq!(
        s.workload().unwrap_err().to_string(),
        "test.toml: [workload.generator]: Lublin model parameter ulow = -2 is invalid: a log2 size from 0 to 64"
    );
    assert_eq!(
        error_of(&format!(
            "{base}[workload.generator]\njobs = 10\nmax_estimate = \"00:30:00\"\n"
        )),
        "test.toml:6:16: key `workload.generator.max_estimate`: expected at least 01:00:00, the least maximum the estimate model of Tsafrir et al. accepts, found 1800 s"
    );
    // The model itself fails when more jobs run an hour than it gives estimates of an hour.
    let s = load_text(&format!(
        "{base}[workload.generator]\njobs = 2000\nstreams = \"batch\"\nmax_estimate = 3600\n"
    ))
    .unwrap();
    assert_eq!(
        s.workload().unwrap_err().to_string(),
        "test.toml: [workload.generator]: the estimate model cannot give every job an estimate at least its runtime: 720 jobs run 3600 s or longer, but only 640 of its estimates are that long; raise the maximum estimate (3600 s)"
    );
}

#[test]
fn runtime_model_defaults_and_classes() {
    let base = "[[resource]]\nname = \"switch\"\ntype = \"string\"\n[[class]]\nname = \"n\"\ncount = 64\nncpus = 4\nresources = { switch = \"s1\" }\n[workload.generator]\njobs = 4000\nstreams = \"typeless\"\n";
    let s = load_text(base).unwrap();
    // The spec's defaults: half the jobs sensitive with β = 0.2, no noise, switch topology.
    assert_eq!(s.runtime.classes.len(), 1);
    assert_eq!(
        (s.runtime.classes[0].fraction, s.runtime.classes[0].beta),
        (0.5, 0.2)
    );
    assert_eq!(s.runtime.noise_sigma, 0.0);
    assert_eq!(
        s.runtime.settings.topology,
        s.cluster.resources().lookup("switch")
    );
    let text = format!(
        "{base}[runtime]\nnoise_sigma = 0.15\ntopology = \"\"\n[[runtime.class]]\nsize_min = 8\nbeta = 1.0\n"
    );
    let s = load_text(&text).unwrap();
    assert_eq!(s.runtime.settings.topology, None);
    let w = s.workload().unwrap();
    let model = s.runtime_model(&w.trace.workload);
    let again = load_text(&text).unwrap().runtime_model(&w.trace.workload);
    // Same seed, same draws.
    assert_eq!(format!("{model:?}"), format!("{again:?}"));
    assert_eq!(
        error_of(&format!("{base}[runtime]\nspeed_reference = \"median\"\n")),
        "test.toml:13:19: key `runtime.speed_reference`: expected slowest, fastest or a positive speed"
    );
    assert_eq!(
        error_of(&format!("{base}[[runtime.class]]\nbeta = -0.5\n")),
        "test.toml:13:8: key `runtime.class.beta`: expected β ≥ 0, found -0.5"
    );
}
