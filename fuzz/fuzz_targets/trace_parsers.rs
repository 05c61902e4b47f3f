//! Every trace reader, on arbitrary bytes: it may return errors, never panic or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shingled_trace::{open_stream, Format, OpenOptions};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the format (or detection), the rest is the file.
    let Some((&pick, body)) = data.split_first() else { return };
    let format = Format::ALL.get(pick as usize % (Format::ALL.len() + 1)).copied();
    for skip_bad_lines in [false, true] {
        let opts = OpenOptions { format, skip_bad_lines, ..Default::default() };
        let input: Box<dyn std::io::Read + Send> = Box::new(std::io::Cursor::new(body.to_vec()));
        let Ok(mut reader) = open_stream(input, Path::new("fuzz-input"), &opts) else { continue };
        // A reader yields at most one request per input byte (plus headers), so this bound
        // catches a reader that loops without consuming input.
        for _ in 0..=body.len() + 16 {
            match reader.next_request() {
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
    }
});
