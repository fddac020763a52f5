//! `placesim gen`: a synthetic workload as standard SWF, and its requests in a side file.

use crate::cli::{GenArgs, StreamsArg};
use anyhow::Context as _;
use placesim_workload::generate::{GeneratedJobs, GeneratorSpec, StreamParams, Streams};
use std::path::Path;
use std::time::Instant;

pub(crate) fn gen_command(args: &GenArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    match &args.scenario {
        Some(path) => from_scenario(path, args, started),
        None => from_flags(args, started),
    }
}

fn from_flags(args: &GenArgs, started: Instant) -> anyhow::Result<()> {
    let (Some(jobs), Some(procs)) = (args.jobs, args.procs) else {
        anyhow::bail!("give --scenario FILE, or both --jobs N and --procs P");
    };
    anyhow::ensure!(
        (1..=placesim_workload::MAX_PROCS as u64).contains(&procs),
        "--procs {procs}: expected from 1 to {}, the most an SWF trace may name",
        placesim_workload::MAX_PROCS
    );
    anyhow::ensure!(
        jobs <= placesim_scenario::MAX_GENERATED_JOBS,
        "--jobs {jobs} is more than placesim's limit of {} generated jobs",
        placesim_scenario::MAX_GENERATED_JOBS
    );
    let max_estimate_s = match &args.max_estimate {
        Some(text) => placesim_request::parse_duration(text)
            .with_context(|| format!("--max-estimate `{text}`: expected [[[DD:]HH:]MM:]SS"))?,
        None => GeneratorSpec::lublin(1).max_estimate_s,
    };
    anyhow::ensure!(
        max_estimate_s >= placesim_workload::generate::tsafrir::MIN_MAX_ESTIMATE_S,
        "--max-estimate must be at least 01:00:00, the least maximum the estimate model of Tsafrir et al. accepts"
    );
    if let Some(load) = args.load {
        anyhow::ensure!(
            load > 0.0 && load.is_finite(),
            "--load must be a positive number, not {load}"
        );
    }
    let spec = GeneratorSpec {
        streams: match args.streams {
            StreamsArg::BatchInteractive => Streams::default(),
            StreamsArg::Batch => Streams::Batch(StreamParams::BATCH),
            StreamsArg::Interactive => Streams::Interactive(StreamParams::INTERACTIVE),
            StreamsArg::Typeless => Streams::Typeless(StreamParams::TYPELESS),
        },
        jobs: usize::try_from(jobs).context("--jobs is too large")?,
        max_estimate_s,
        load: args.load,
    };
    let generated =
        placesim_workload::generate::generate_jobs(&spec, procs, args.seed.unwrap_or(0))?;
    write(&args.out, &generated)?;
    report(&args.out, generated.records().len(), started);
    Ok(())
}

fn from_scenario(path: &Path, args: &GenArgs, started: Instant) -> anyhow::Result<()> {
    let mut scenario = placesim_run::read_scenario(path)?;
    if let Some(seed) = args.seed {
        scenario.run.seed = seed;
    }
    let Some(w) = &scenario.workload else {
        anyhow::bail!(
            "{}: the scenario has no [workload.generator]",
            path.display()
        );
    };
    let placesim_scenario::WorkloadSource::Generator(spec) = &w.source else {
        anyhow::bail!(
            "{}: the scenario's workload is a trace, not a [workload.generator]",
            path.display()
        );
    };
    let procs = scenario
        .cluster
        .capacity_total(placesim_core::ConsumableIdx::NCPUS);
    let generated = placesim_workload::generate::generate_jobs(spec, procs, scenario.run.seed)?;
    write(&args.out, &generated)?;
    // The requests the scenario's rules give: our extension, in a side file that SWF readers
    // never see, in the format of a scenario's `requests_file`.
    let loaded = scenario.workload()?;
    let side = side_file(&args.out);
    let mut text = String::from("# placesim requests: JOB_ID REQUEST (SWF field 1)\n");
    for job in loaded.trace.workload.jobs() {
        text += &format!(
            "{} {}\n",
            job.source_id,
            loaded.request_texts[job.request.index()]
        );
    }
    placesim_run::write_atomic(&side, text.as_bytes())?;
    eprintln!("placesim: requests written to {}", side.display());
    report(&args.out, generated.records().len(), started);
    Ok(())
}

/// `OUT.requests`, beside the SWF file.
fn side_file(out: &Path) -> std::path::PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".requests");
    name.into()
}

/// Writes `generated` as SWF, its records made as they are written rather than held in a
/// list (144 bytes a job) beside the text.
fn write(out: &Path, generated: &GeneratedJobs) -> anyhow::Result<()> {
    let (header, records) = (&generated.header, generated.records());
    let mut bytes = Vec::with_capacity(records.len() * 64);
    if out.extension().is_some_and(|e| e == "gz") {
        let mut gz = flate2::write::GzEncoder::new(&mut bytes, flate2::Compression::fast());
        placesim_workload::write_swf(&mut gz, header, records)?;
        gz.finish()?;
    } else {
        placesim_workload::write_swf(&mut bytes, header, records)?;
    }
    Ok(placesim_run::write_atomic(out, &bytes)?)
}

fn report(out: &Path, jobs: usize, started: Instant) {
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "placesim: {jobs} jobs written to {} in {secs:.3} s ({:.0} jobs/s)",
        out.display(),
        jobs as f64 / secs.max(1e-9)
    );
}
