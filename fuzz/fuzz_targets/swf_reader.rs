//! Any bytes, plain or gzipped, given to the SWF reader: see `placesim_fuzz::swf_reader` for what is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    placesim_fuzz::swf_reader(data);
});
