//! Any bytes, plain or gzipped, given to the SWF reader: it must return a trace or an error,
//! never panic, and a trace must account for every record.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placesim_core::ResourceDefs;
use placesim_workload::{SwfOptions, read_trace};
use std::io::{BufReader, Read};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let defs = ResourceDefs::default();
    for skip_bad_lines in [false, true] {
        let opts = SwfOptions {
            procs: None,
            skip_bad_lines,
            // Extended lines keep a field, so the kept-field path is fuzzed too.
            keep_field: Some(19),
        };
        let reader: Box<dyn Read> = if data.starts_with(&[0x1f, 0x8b]) {
            Box::new(flate2::read::MultiGzDecoder::new(data))
        } else {
            Box::new(data)
        };
        if let Ok(trace) = read_trace(BufReader::new(reader), Path::new("fuzz.swf"), &opts, &defs)
        {
            let kept = trace.workload.jobs().len() as u64;
            assert_eq!(trace.records, kept + trace.skipped.total());
        }
    }
});
