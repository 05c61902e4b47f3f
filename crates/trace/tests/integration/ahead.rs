//! Decoding ahead on another thread (`DecodeAhead`): the caller sees exactly what the reader on
//! its own thread gives — requests, errors, skipped and filtered counts after every call — and
//! dropping it mid-trace stops the thread.

use proptest::prelude::*;
use shingled_trace::{open_stream, DecodeAhead, Format, OpenOptions, Request, TraceError, TraceReader};
use std::path::Path;

fn msr(text: &str, skip_bad_lines: bool, volume: Option<u32>) -> Box<dyn TraceReader> {
    let opts = OpenOptions { format: Some(Format::Msr), skip_bad_lines, volume, ..Default::default() };
    open_stream(Box::new(std::io::Cursor::new(text.as_bytes().to_vec())), Path::new("t.csv"), &opts).unwrap()
}

fn ahead(r: Box<dyn TraceReader>) -> Box<dyn TraceReader> {
    DecodeAhead::spawn(r).unwrap_or_else(|_| panic!("the decoding thread did not start"))
}

/// One call's outcome and the counts right after it.
#[derive(Debug, PartialEq)]
enum Step {
    Got(Vec<Request>, u64, u64),
    Failed(String),
}

/// Calls `r` as `calls` says (0: `next_request`, n: `next_batch` of n) until the end or an
/// error, recording each call's outcome and the counts after it.
fn drive(mut r: Box<dyn TraceReader>, calls: &[usize]) -> Vec<Step> {
    let mut steps = Vec::new();
    for i in 0.. {
        let want = calls[i % calls.len()];
        let got = if want == 0 {
            r.next_request().map(|o| o.into_iter().collect::<Vec<_>>())
        } else {
            let mut out = Vec::new();
            r.next_batch(&mut out, want).map(|_| out)
        };
        match got {
            Ok(v) => {
                let end = v.is_empty();
                steps.push(Step::Got(v, r.skipped(), r.filtered()));
                if end {
                    break;
                }
            }
            Err(e) => {
                steps.push(Step::Failed(e.to_string()));
                break;
            }
        }
    }
    steps
}

/// An MSR CSV of `lines`: 0 a request on volume 0, 1 on volume 1, 2 a malformed line.
fn csv(lines: &[u8]) -> String {
    let mut s = String::new();
    for (i, &k) in lines.iter().enumerate() {
        match k {
            0 | 1 => s.push_str(&format!("{},h,{k},Write,{},4096,1\n", 1000 + i, 4096 * i)),
            _ => s.push_str("this is not a request\n"),
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Across batch boundaries (the thread's batches hold 4096 requests), with malformed lines
    /// skipped or failing and a volume filter, every call gives the same outcome and counts.
    #[test]
    fn same_requests_errors_and_counts(
        lines in proptest::collection::vec(prop_oneof![8 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8)], 0..9000),
        skip in any::<bool>(),
        filter in any::<bool>(),
        calls in proptest::collection::vec(prop_oneof![Just(0usize), 1usize..5000], 1..6),
    ) {
        let text = csv(&lines);
        let volume = filter.then_some(0);
        let plain = drive(msr(&text, skip, volume), &calls);
        let threaded = drive(ahead(msr(&text, skip, volume)), &calls);
        prop_assert_eq!(plain, threaded);
    }
}

/// A request limit: the counts after the last request taken are those of the lines before it,
/// not of the lines the thread has read ahead.
#[test]
fn counts_are_those_of_the_requests_taken() {
    let mut lines = vec![0u8; 10];
    lines.extend([2, 2, 2]);
    lines.extend(vec![0u8; 10_000]);
    lines.extend([2, 2]);
    let text = csv(&lines);
    let mut r = ahead(msr(&text, true, None));
    for _ in 0..10 {
        r.next_request().unwrap().unwrap();
    }
    assert_eq!(r.skipped(), 0, "the bad lines after the tenth request are not read yet");
    r.next_request().unwrap().unwrap();
    assert_eq!(r.skipped(), 3);
    let mut out = Vec::new();
    while r.next_batch(&mut out, 777).unwrap() > 0 {}
    assert_eq!(out.len(), 9_999);
    assert_eq!(r.skipped(), 5);
}

/// The error comes after exactly the requests before the bad line, with the reader's message.
#[test]
fn an_error_after_the_same_requests() {
    let mut lines = vec![0u8; 6000];
    lines.push(2);
    lines.extend([0u8; 5]);
    let text = csv(&lines);
    let mut r = ahead(msr(&text, false, None));
    let mut n = 0;
    let err = loop {
        match r.next_request() {
            Ok(Some(_)) => n += 1,
            Ok(None) => panic!("the bad line was not reported"),
            Err(e) => break e,
        }
    };
    assert_eq!(n, 6000);
    let plain = drive(msr(&text, false, None), &[0]);
    assert_eq!(plain.last(), Some(&Step::Failed(err.to_string())));
    assert!(err.to_string().starts_with("t.csv:6001:"), "{err}");
}

/// Dropping the reader does not wait for its thread, whose reader may be blocked (a pipe with
/// nothing more yet): here the reader blocks after ten requests until a watchdog opens its gate
/// five seconds later, and the caller drops it without reading, so a drop that waited for the
/// thread would return only after the watchdog fired.
#[test]
fn dropping_does_not_wait_for_a_blocked_reader() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc};
    struct Stuck {
        n: u32,
        gate: mpsc::Receiver<()>,
    }
    impl TraceReader for Stuck {
        fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
            self.n += 1;
            if self.n > 10 {
                let _ = self.gate.recv();
                return Ok(None);
            }
            Ok(Some(Request { time_ns: 0, volume: 0, op: shingled_core::Op::Write, offset: 0, len: 4096 }))
        }
        fn format_name(&self) -> &'static str {
            "stuck"
        }
    }
    let (open_gate, gate) = mpsc::channel();
    let r = ahead(Box::new(Stuck { n: 0, gate }));
    // Until the ten requests are decoded and the thread is blocked on the gate (a batch is
    // handed over when full or at the end, so none reaches the caller before the gate opens).
    std::thread::sleep(std::time::Duration::from_millis(200));
    let fired = Arc::new(AtomicBool::new(false));
    let flag = fired.clone();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(5));
        flag.store(true, Ordering::SeqCst);
        let _ = open_gate.send(());
    });
    drop(r);
    assert!(!fired.load(Ordering::SeqCst), "dropping waited for the blocked reader");
}

/// A reader that panics: the panic reaches the caller, as it would on the caller's thread.
#[test]
fn a_panic_of_the_reader_reaches_the_caller() {
    struct Bomb(u32);
    impl TraceReader for Bomb {
        fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
            self.0 += 1;
            assert!(self.0 < 3, "the reader's own panic");
            Ok(Some(Request { time_ns: 0, volume: 0, op: shingled_core::Op::Read, offset: 0, len: 4096 }))
        }
        fn format_name(&self) -> &'static str {
            "bomb"
        }
    }
    let mut r = ahead(Box::new(Bomb(0)));
    let got =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || while r.next_request().is_ok() {}));
    let msg = got.expect_err("the panic must reach the caller");
    let text = msg.downcast_ref::<String>().map(String::as_str).or(msg.downcast_ref::<&str>().copied());
    assert_eq!(text, Some("the reader's own panic"));
}

/// `decode_ahead` keeps a `bin` trace on the calling thread and gives every format the same
/// requests.
#[test]
fn decode_ahead_gives_the_same_requests() {
    let text = csv(&vec![0u8; 5000]);
    let mut a = shingled_trace::decode_ahead(msr(&text, false, None));
    let mut b = msr(&text, false, None);
    let (mut x, mut y) = (Vec::new(), Vec::new());
    while a.next_batch(&mut x, 1000).unwrap() > 0 {}
    while b.next_batch(&mut y, 1000).unwrap() > 0 {}
    assert_eq!(x, y);
    assert_eq!(a.format_name(), "msr");
}
