//! `placesim check`: validate a scenario and show what it describes.

use crate::cli::CheckArgs;

pub(crate) fn check_command(args: &CheckArgs) -> anyhow::Result<()> {
    let scenario = placesim_run::read_scenario(&args.scenario)?;
    print!("{}", placesim_scenario::describe(&scenario));
    if let Some(w) = &scenario.workload {
        let source = match &w.source {
            placesim_scenario::WorkloadSource::Trace(path) => path.display().to_string(),
            placesim_scenario::WorkloadSource::Generator(g) => format!(
                "generated: {} Lublin & Feitelson jobs, estimates up to {} s",
                g.jobs, g.max_estimate_s
            ),
        };
        println!(
            "workload: {source} ({} request rules{})",
            w.rules.len(),
            w.requests_file
                .as_ref()
                .map(|f| format!(", requests file {}", f.display()))
                .unwrap_or_default()
        );
    }
    for job in &scenario.running {
        let vnodes: Vec<&str> = job
            .vnodes
            .iter()
            .map(|(v, _)| scenario.cluster.vnode(*v).name())
            .collect();
        println!(
            "running at t = 0: job {} on {} until {} s (estimated {} s)",
            job.id,
            vnodes.join(","),
            job.end_s,
            job.estimated_end_s
        );
    }
    let n_cons = scenario.cluster.resources().n_consumables();
    // A standing reservation's occurrences are consecutive entries of one name: told once.
    let mut listed = 0;
    while listed < scenario.reservations.len() {
        let resv = &scenario.reservations[listed];
        let occurrences = scenario.reservations[listed..]
            .iter()
            .take_while(|r| r.name == resv.name)
            .count();
        listed += occurrences;
        let vnodes: Vec<&str> = resv
            .allocation
            .vnodes()
            .map(|v| scenario.cluster.vnode(v).name())
            .collect();
        let all = &scenario.reservations[listed - occurrences..listed];
        let gaps: Vec<u64> = all
            .windows(2)
            .map(|w| w[1].start.as_secs() - w[0].start.as_secs())
            .collect();
        let every = match (gaps.first(), all.last()) {
            (None, _) | (_, None) => String::new(),
            (Some(&gap), _) if gaps.iter().all(|&g| g == gap) => {
                format!(", {occurrences} occurrences every {gap} s")
            }
            (Some(_), Some(last)) => format!(
                ", {occurrences} occurrences, the last [{} s, {} s)",
                last.start.as_secs(),
                last.end.as_secs()
            ),
        };
        let access = match &resv.access {
            placesim_core::ReservationAccess::Acl { acl, .. } if acl.entries.is_empty() => {
                ", Moab system reservation: no job may use it".to_owned()
            }
            placesim_core::ReservationAccess::Acl { acl, .. } => {
                format!(", Moab ACL {}", acl.text)
            }
            placesim_core::ReservationAccess::Held if resv.allocation.sharing.is_exclusive() => {
                ", exclusive".to_owned()
            }
            placesim_core::ReservationAccess::Held => String::new(),
        };
        println!(
            "reservation {}: [{} s, {} s){every} on {} ({} ncpus{access}){}",
            resv.name,
            resv.start.as_secs(),
            resv.end.as_secs(),
            placesim_scenario::hostlist(&vnodes),
            resv.allocation
                .total(n_cons, placesim_core::ConsumableIdx::NCPUS),
            if resv.queue.is_some() {
                format!(", its queue's jobs run inside: qsub -q {}", resv.name)
            } else {
                String::new()
            }
        );
    }
    print_timeline(&scenario);
    for p in &scenario.partitions {
        let vnodes: Vec<&str> = p
            .vnodes
            .iter()
            .map(|&v| scenario.cluster.vnode(v).name())
            .collect();
        let queues: Vec<&str> = p
            .queues
            .iter()
            .map(|&q| scenario.pbs.queues[q as usize].name.as_str())
            .collect();
        println!(
            "scheduler {}: partition {}, {} vnodes {}, queues {}, {}{}{}",
            p.scheduler,
            p.partition,
            p.vnodes.len(),
            placesim_scenario::hostlist(&vnodes),
            if queues.is_empty() {
                "(none)".to_owned()
            } else {
                queues.join(",")
            },
            p.discipline.label(),
            if p.do_not_span {
                ", do_not_span_psets"
            } else {
                ""
            },
            if p.only_explicit {
                ", only_explicit_psets"
            } else {
                ""
            },
        );
    }
    let r = &scenario.runtime;
    let classes: Vec<String> = r
        .classes
        .iter()
        .map(|c| format!("beta {} for {} of matching jobs", c.beta, c.fraction))
        .collect();
    println!(
        "runtime model: speed reference {}, {}, topology {}, {:?}, noise sigma {}; {}",
        r.settings
            .speed_reference
            .map_or_else(|| "slowest".to_owned(), |s| s.to_string()),
        if r.settings.balanced {
            "load-balanced"
        } else {
            "slowest node"
        },
        r.settings.topology.map_or("none", |t| scenario
            .cluster
            .resources()
            .def(t)
            .name
            .as_str()),
        r.settings.comm,
        r.noise_sigma,
        classes.join("; ")
    );
    println!("ok: {} is valid", args.scenario.display());
    Ok(())
}

/// The timeline's entries that are not outages (those are among the failures): each `qdel`,
/// each extra cycle, each `rdel`, and the placement-set settings from each change on.
fn print_timeline(scenario: &placesim_scenario::Scenario) {
    let t = &scenario.timeline;
    for (at, job, line) in &t.deletions {
        println!(
            "timeline: qdel job {job} at {} s (line {line})",
            at.as_secs()
        );
    }
    for at in &t.cycles {
        println!("timeline: one more scheduling cycle at {} s", at.as_secs());
    }
    for (at, name) in &t.reservation_deletions {
        println!("timeline: pbs_rdel {name} at {} s", at.as_secs());
    }
    for (v, at) in &t.added {
        println!(
            "timeline: vnode {} added at {} s (out of service until then)",
            scenario.cluster.vnode(*v).name(),
            at.as_secs()
        );
    }
    let defs = scenario.cluster.resources();
    let keys = |ids: &[placesim_core::ResourceId]| -> String {
        if ids.is_empty() {
            return "(unset)".to_owned();
        }
        let names: Vec<&str> = ids.iter().map(|&r| defs.def(r).name.as_str()).collect();
        names.join(",")
    };
    let truth = |b: bool| if b { "True" } else { "False" };
    for (at, p) in &t.pset_changes {
        let queues: String = scenario
            .pbs
            .queues
            .iter()
            .zip(&p.queue_keys)
            .filter(|(_, k)| !k.is_empty())
            .map(|(q, k)| format!(", queue {} node_group_key {}", q.name, keys(k)))
            .collect();
        println!(
            "timeline: from {} s, node_group_enable {}, node_group_key {}{queues}, do_not_span_psets {}, only_explicit_psets {}",
            at.as_secs(),
            truth(p.node_group_enable),
            keys(&p.server_key),
            truth(p.do_not_span),
            truth(p.only_explicit),
        );
    }
}
