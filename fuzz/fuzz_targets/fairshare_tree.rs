//! Any text as a fairshare resource_group file: see `placesim_fuzz::fairshare_tree` for what is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    placesim_fuzz::fairshare_tree(data);
});
