//! Any text as a `job_sort_formula`: it parses to a formula or an error naming a column inside
//! the text, never panics or overflows the stack; a formula that parses evaluates to a finite
//! value for any job.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placesim_core::{
    Chunk, ConsumableIdx, Job, JobId, Request, RequestId, SimDuration, SimTime, Workload,
};
use placesim_policy::queue::{Formula, Term, TermValues};

fuzz_target!(|data: &[u8]| {
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
            let request = Request::from_chunks(vec![Chunk::new(u32::MAX, vec![u64::from(u32::MAX) + 2, 0, 1])]);
            let workload = Workload::new(vec![job], vec![request]).expect("one job");
            let v = formula.value(&TermValues {
                queue_priority: i64::MIN,
                ..TermValues::at(&workload, JobId(0), SimTime(u64::MAX))
            });
            assert!(v.is_finite());
        }
    }
});
