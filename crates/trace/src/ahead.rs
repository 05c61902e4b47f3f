//! Decoding ahead on another thread: a [`TraceReader`] whose inner reader runs on a thread of its
//! own, parsing (or decompressing, or generating) the next requests while the caller replays the
//! ones before, and hands them over in batches through a bounded channel.
//!
//! What the caller sees is exactly what the inner reader gives: the same requests in the same
//! order, the same error after the same requests, and [`TraceReader::skipped`] and
//! [`TraceReader::filtered`] as the inner reader would report them after the requests handed out
//! so far (each batch carries the points where the inner reader's counts changed, so a caller that
//! stops early — a request limit — reads the counts of what it took, not of what the thread had
//! read ahead). The thread reads at most [`DEPTH`] batches ahead; dropping the reader stops it at
//! its next hand-over (without waiting for it).
//!
//! A batch is handed over when it is full or the trace has ended, so a trace read from a pipe
//! reaches the caller a batch at a time, not a request at a time.
//!
//! It pays where decoding costs about as much as what the caller does with a request (text,
//! gzip, generated traces); a `bin` trace decodes faster than a hand-over between cores, so
//! [`decode_ahead`] leaves it on the calling thread, and leaves everything there on one core.

use crate::{Request, TraceError, TraceReader};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

/// Decoding threads alive in the process: at most one fewer than the cores, so that runs in
/// parallel (a sweep on every core) do not all add a thread of their own.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Requests per batch handed over.
pub const BATCH: usize = 4096;
/// Batches the thread may have decoded ahead of the caller.
pub const DEPTH: usize = 4;

/// What the decoding thread sends.
enum Msg {
    Batch(Batch),
    /// The end of the trace, with the inner reader's final counts.
    End {
        skipped: u64,
        filtered: u64,
    },
    /// The inner reader's error (after the requests of the batches sent before).
    Error(TraceError),
}

struct Batch {
    requests: Vec<Request>,
    /// `(n, skipped, filtered)`: once the first `n` requests of this batch have been handed out,
    /// the inner reader's counts are these (ascending `n`; only where they changed).
    marks: Vec<(usize, u64, u64)>,
}

/// Wraps `reader` so that it decodes on a thread of its own ([`DecodeAhead`]), unless its format
/// is `bin` (cheap to decode: kept on the calling thread), or the decoding threads already alive
/// keep all cores but one busy (one core: never), or the thread cannot be started; then `reader`
/// itself is returned.
pub fn decode_ahead(reader: Box<dyn TraceReader>) -> Box<dyn TraceReader> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if reader.format_name() == "bin" {
        return reader;
    }
    let claimed =
        LIVE.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n + 1 < cores).then_some(n + 1));
    if claimed.is_err() {
        return reader;
    }
    match DecodeAhead::start(reader) {
        Ok(mut r) => {
            r.counted = true;
            r
        }
        Err(r) => {
            LIVE.fetch_sub(1, Ordering::AcqRel);
            r
        }
    }
}

/// A reader whose inner reader runs on another thread; see the module documentation.
pub struct DecodeAhead {
    rx: Option<Receiver<Msg>>,
    /// Emptied batch vectors go back to the thread for reuse (no allocation per batch).
    spare: Sender<Vec<Request>>,
    thread: Option<JoinHandle<()>>,
    format: &'static str,
    /// The batch being handed out and how many of its requests have been.
    cur: Batch,
    pos: usize,
    /// Next of `cur.marks` to apply.
    mark: usize,
    skipped: u64,
    filtered: u64,
    /// The end or an error was handed out: nothing more comes.
    done: bool,
    /// Started by [`decode_ahead`], which counted the thread in [`LIVE`].
    counted: bool,
}

impl DecodeAhead {
    /// Starts the decoding thread on `reader` whatever the cores ([`decode_ahead`] decides when
    /// it pays); gives `reader` back if the thread cannot be started.
    pub fn spawn(reader: Box<dyn TraceReader>) -> Result<Box<dyn TraceReader>, Box<dyn TraceReader>> {
        DecodeAhead::start(reader).map(|r| r as Box<dyn TraceReader>)
    }

    fn start(reader: Box<dyn TraceReader>) -> Result<Box<DecodeAhead>, Box<dyn TraceReader>> {
        let format = reader.format_name();
        let (skipped, filtered) = (reader.skipped(), reader.filtered());
        let (tx, rx) = mpsc::sync_channel::<Msg>(DEPTH);
        let (spare_tx, spare_rx) = mpsc::channel::<Vec<Request>>();
        // The reader goes to the thread through a slot the calling thread can take it back from
        // if the thread does not start.
        let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(reader)));
        let theirs = slot.clone();
        let started = std::thread::Builder::new().name("trace-decode".into()).spawn(move || {
            let reader = theirs.lock().map(|mut r| r.take()).ok().flatten();
            if let Some(reader) = reader {
                produce(reader, &tx, &spare_rx);
            }
        });
        match started {
            Ok(thread) => Ok(Box::new(DecodeAhead {
                rx: Some(rx),
                spare: spare_tx,
                thread: Some(thread),
                format,
                cur: Batch { requests: Vec::new(), marks: Vec::new() },
                pos: 0,
                mark: 0,
                skipped,
                filtered,
                done: false,
                counted: false,
            })),
            Err(_) => {
                let reader = slot.lock().ok().and_then(|mut r| r.take());
                Err(reader.expect("the thread did not start, so the reader is still in its slot"))
            }
        }
    }

    /// Applies the marks of the requests handed out so far.
    #[inline]
    fn apply_marks(&mut self) {
        while let Some(&(n, s, f)) = self.cur.marks.get(self.mark) {
            if n > self.pos {
                break;
            }
            self.skipped = s;
            self.filtered = f;
            self.mark += 1;
        }
    }

    /// Makes `cur` a batch with requests left to hand out; `Ok(false)` at the end.
    fn refill(&mut self) -> Result<bool, TraceError> {
        while self.pos == self.cur.requests.len() {
            if self.done {
                return Ok(false);
            }
            let msg = match self.rx.as_ref().map(|rx| rx.recv()) {
                Some(Ok(m)) => m,
                // The thread stopped without sending the end or an error: it panicked (re-raised
                // here, as the reader's panic would have been on this thread).
                _ => {
                    self.done = true;
                    self.rethrow();
                    return Ok(false);
                }
            };
            match msg {
                Msg::Batch(b) => {
                    let mut old = std::mem::replace(&mut self.cur, b);
                    old.requests.clear();
                    // The thread may have finished: then the vector is simply dropped.
                    let _ = self.spare.send(old.requests);
                    // Marks count from one request handed out: none applies yet.
                    self.pos = 0;
                    self.mark = 0;
                }
                Msg::End { skipped, filtered } => {
                    self.skipped = skipped;
                    self.filtered = filtered;
                    self.done = true;
                }
                Msg::Error(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        }
        Ok(true)
    }

    /// Joins the thread and re-raises its panic, if it panicked.
    fn rethrow(&mut self) {
        self.rx = None;
        if let Some(t) = self.thread.take() {
            if let Err(panic) = t.join() {
                std::panic::resume_unwind(panic);
            }
        }
    }
}

/// The decoding thread: batches of the inner reader's requests with the points where its counts
/// changed, then the end or its error. Stops when the receiver is dropped.
fn produce(mut reader: Box<dyn TraceReader>, tx: &SyncSender<Msg>, spare: &Receiver<Vec<Request>>) {
    let (mut skipped, mut filtered) = (reader.skipped(), reader.filtered());
    loop {
        let mut requests = spare.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let mut marks = Vec::new();
        let mut last = None;
        while requests.len() < BATCH {
            match reader.next_request() {
                Ok(Some(r)) => {
                    requests.push(r);
                    let counts = (reader.skipped(), reader.filtered());
                    if counts != (skipped, filtered) {
                        (skipped, filtered) = counts;
                        marks.push((requests.len(), skipped, filtered));
                    }
                }
                Ok(None) => {
                    last = Some(Msg::End { skipped: reader.skipped(), filtered: reader.filtered() });
                    break;
                }
                Err(e) => {
                    last = Some(Msg::Error(e));
                    break;
                }
            }
        }
        if !requests.is_empty() && tx.send(Msg::Batch(Batch { requests, marks })).is_err() {
            return;
        }
        if let Some(m) = last {
            let _ = tx.send(m);
            return;
        }
    }
}

impl TraceReader for DecodeAhead {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        if !self.refill()? {
            return Ok(None);
        }
        let r = self.cur.requests[self.pos];
        self.pos += 1;
        self.apply_marks();
        Ok(Some(r))
    }

    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        let before = out.len();
        while out.len() - before < max {
            if !self.refill()? {
                break;
            }
            let n = (max - (out.len() - before)).min(self.cur.requests.len() - self.pos);
            out.extend_from_slice(&self.cur.requests[self.pos..self.pos + n]);
            self.pos += n;
            self.apply_marks();
        }
        Ok(out.len() - before)
    }

    fn skipped(&self) -> u64 {
        self.skipped
    }

    fn filtered(&self) -> u64 {
        self.filtered
    }

    fn format_name(&self) -> &'static str {
        self.format
    }
}

impl Drop for DecodeAhead {
    fn drop(&mut self) {
        // Dropping the receiver makes the thread's next send fail, so it stops within a batch.
        // It is not waited for: its reader may be blocked reading a pipe that has nothing more
        // to give yet, and the caller has stopped reading. A panic of it after that is not the
        // caller's either.
        self.rx = None;
        self.thread = None;
        if self.counted {
            LIVE.fetch_sub(1, Ordering::AcqRel);
        }
    }
}
