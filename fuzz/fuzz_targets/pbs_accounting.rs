//! Any text given to the PBS accounting reader, line by line: each line is a record or an
//! error naming a column inside the line, never a panic; the records assemble into jobs
//! whose counts never exceed the jobs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placesim_workload::pbs_accounting::{assemble_jobs, parse_record};

fuzz_target!(|data: &[u8]| {
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
});
