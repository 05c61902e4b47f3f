//! Parsers never panic: random bytes and random mutations of the fixtures give `Ok` or `Err`.

use crate::fixture;
use proptest::prelude::*;
use shingled_trace::{open_stream, Format, OpenOptions};
use std::path::Path;

/// Reads at most a few thousand requests (a mutated length field must not make a test slow).
fn exercise(bytes: &[u8], format: Option<Format>, skip: bool) {
    let opts = OpenOptions { format, skip_bad_lines: skip, ..OpenOptions::default() };
    let input = Box::new(std::io::Cursor::new(bytes.to_vec()));
    if let Ok(mut r) = open_stream(input, Path::new("fuzz"), &opts) {
        for _ in 0..5000 {
            match r.next_request() {
                Ok(Some(q)) => {
                    // Every request can be split into blocks without overflow.
                    assert!(q.offset.checked_add(q.len as u64).is_some());
                    let _ = q.blocks();
                }
                Ok(None) | Err(_) => break,
            }
        }
    }
}

fn formats() -> impl Strategy<Value = Option<Format>> {
    prop_oneof![Just(None), proptest::sample::select(Format::ALL.to_vec()).prop_map(Some)]
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (
            any::<usize>(),
            prop_oneof![Just(b','), Just(b' '), Just(b'\n'), Just(b'-'), Just(b'9'), any::<u8>()]
        )
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(data: &mut Vec<u8>, m: &Mutation) {
    let n = data.len();
    match *m {
        Mutation::Flip(i, b) if n > 0 => data[i % n] ^= b,
        Mutation::Insert(i, b) => data.insert(i % (n + 1), b),
        Mutation::Delete(i) if n > 0 => {
            data.remove(i % n);
        }
        Mutation::Truncate(i) => data.truncate(i % (n + 1)),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600), format in formats(), skip in any::<bool>()) {
        exercise(&bytes, format, skip);
    }

    #[test]
    fn random_text_never_panics(text in "[0-9a-zA-Z,.+ \\[\\]\n-]{0,400}", format in formats(), skip in any::<bool>()) {
        exercise(text.as_bytes(), format, skip);
    }

    #[test]
    fn mutated_fixtures_never_panic(
        which in 0..crate::detect::FIXTURES.len(),
        muts in proptest::collection::vec(mutation(), 1..8),
        format in formats(),
        skip in any::<bool>(),
    ) {
        let mut data = std::fs::read(fixture(crate::detect::FIXTURES[which].0)).unwrap();
        for m in &muts {
            apply(&mut data, m);
        }
        exercise(&data, format, skip);
    }
}
