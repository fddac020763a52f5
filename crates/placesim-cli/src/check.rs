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
            .map(|(v, _)| scenario.cluster.vnode(*v).name.as_str())
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
            .map(|v| scenario.cluster.vnode(v).name.as_str())
            .collect();
        let every = scenario
            .reservations
            .get(listed - occurrences + 1)
            .filter(|_| occurrences > 1)
            .map(|next| {
                format!(
                    ", {occurrences} occurrences every {} s",
                    next.start.as_secs() - resv.start.as_secs()
                )
            })
            .unwrap_or_default();
        println!(
            "reservation {}: [{} s, {} s){every} on {} ({} ncpus{}){}",
            resv.name,
            resv.start.as_secs(),
            resv.end.as_secs(),
            vnodes.join(","),
            resv.allocation
                .total(n_cons, placesim_core::ConsumableIdx::NCPUS),
            if resv.allocation.sharing.is_exclusive() {
                ", exclusive"
            } else {
                ""
            },
            if resv.queue.is_some() {
                format!(", its queue's jobs run inside: qsub -q {}", resv.name)
            } else {
                String::new()
            }
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
