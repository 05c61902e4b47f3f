//! Opening a trace by name: `synth:` specs, gzip, format detection, and the reader for each
//! [`Format`].

use crate::binary::{convert, convert_with_stats, refuse_same_file, BinaryReader, ConvertSummary, MAGIC};
use crate::formats::alibaba::Alibaba;
use crate::formats::blkparse::Blkparse;
use crate::formats::csv::{parse_op_param, split_params, Csv, CsvParams};
use crate::formats::disksim::{Disksim, Mqsim};
use crate::formats::msr::Msr;
use crate::formats::oracle::OracleReader;
use crate::formats::sac::Sac;
use crate::formats::vscsi::{detect_version, VscsiCsv, VscsiReader};
use crate::formats::Format;
use crate::records::RecordSource;
use crate::text::{is_blank, read_some, LineFormat, LineSource, Parsed, TextReader};
use crate::{Request, TraceError, TraceReader};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// How much of the input is read up front to recognise its format.
pub(crate) const SNIFF_BYTES: usize = 64 * 1024;
/// How many non-blank lines a text format must parse to be recognised.
const SNIFF_LINES: usize = 16;

/// How to open a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenOptions {
    /// The format; `None` detects it from the content (see [`detect_format`]).
    pub format: Option<Format>,
    /// Keep only requests of this volume (MSR `DiskNumber`, Alibaba `device_id`, DiskSim/MQSim
    /// device, blkparse `major << 20 | minor`; 0 for formats without volumes). Dropped requests
    /// are counted in [`TraceReader::filtered`].
    pub volume: Option<u32>,
    /// Count and skip malformed lines or records instead of failing on the first one.
    pub skip_bad_lines: bool,
    /// The blkparse action whose events become requests: `b'D'` (issue, the default), `b'C'`
    /// (complete) or `b'Q'` (queue).
    pub blkparse_action: u8,
    /// Format parameters in libCacheSim's `-t` spelling, `key=value,…`: the columns of a `csv`
    /// trace (`obj-id-col=2,time-col=1,…`, see `docs/trace-format.md`), or `op=write` to read an
    /// `oracleGeneral` trace (which has no op field) as writes.
    pub params: Option<String>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions { format: None, volume: None, skip_bad_lines: false, blkparse_action: b'D', params: None }
    }
}

/// Opens a trace file or a synthetic trace.
///
/// * `synth:REST` is handed to [`crate::synth::open_spec`]; the volume filter applies on top.
/// * gzip files (recognised by their magic bytes, whatever the name) are decompressed on the
///   fly, including concatenated members.
/// * Without `opts.format`, the format is recognised from the first 64 KiB (see
///   [`detect_format`]); when that fails the error lists every format.
///
/// Reading streams: memory stays constant whatever the trace size.
pub fn open(path_or_spec: &str, opts: &OpenOptions) -> Result<Box<dyn TraceReader>, TraceError> {
    if let Some(rest) = path_or_spec.strip_prefix("synth:") {
        let r = crate::synth::open_spec(rest)?;
        return Ok(match opts.volume {
            Some(v) => Box::new(VolumeFilter::new(r, v)),
            None => r,
        });
    }
    let path = PathBuf::from(path_or_spec);
    // A FIFO or socket would block the second open (a run reads its trace twice: sizing, then
    // replay) or never end: refuse it by name instead of hanging.
    if let Ok(m) = std::fs::metadata(&path) {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_fifo() || t.is_socket() {
            return Err(TraceError::Invalid(format!(
                "{} is a {}: a trace is read more than once (sizing, then replay); save it to a file first \
                 (cat {} > trace.csv)",
                path.display(),
                if t.is_fifo() { "FIFO" } else { "socket" },
                path.display()
            )));
        }
    }
    let f = File::open(&path).map_err(|source| TraceError::Io { path: path.clone(), source })?;
    open_stream(Box::new(f), &path, opts)
}

/// Like [`open`] for an already opened input (stdin, a pipe, an in-memory buffer); `name`
/// only labels errors. gzip is still recognised and decompressed.
pub fn open_stream(
    input: Box<dyn Read + Send>,
    name: &Path,
    opts: &OpenOptions,
) -> Result<Box<dyn TraceReader>, TraceError> {
    let (mut head, mut input) = sniff(input, name)?;
    if head.starts_with(&[0x1f, 0x8b]) {
        let raw = Box::new(std::io::Cursor::new(head).chain(input));
        let gz = flate2::read::MultiGzDecoder::new(std::io::BufReader::with_capacity(256 * 1024, raw));
        (head, input) = sniff(Box::new(gz), name)?;
    } else if head.starts_with(&ZSTD_MAGIC) {
        let raw = Box::new(std::io::Cursor::new(head).chain(input));
        let zs = zstd::stream::read::Decoder::new(raw)
            .map_err(|source| TraceError::Io { path: name.to_path_buf(), source })?;
        (head, input) = sniff(Box::new(zs), name)?;
    }
    let format = match opts.format {
        Some(f) => f,
        None => match by_name(name) {
            Some(f) => f,
            None => detect_bytes(&head, opts).ok_or_else(|| unrecognised(name, &head))?,
        },
    };
    build(format, head, input, name.to_path_buf(), opts)
}

/// The first bytes of a zstd frame.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// A format the file's name gives away: oracleGeneral has no magic, and libCacheSim too goes by
/// the name (`*oracleGeneral*`).
fn by_name(name: &Path) -> Option<Format> {
    let n = name.file_name()?.to_string_lossy().to_ascii_lowercase();
    n.contains("oraclegeneral").then_some(Format::OracleGeneral).filter(|_| !n.contains("oraclegeneralopns"))
}

/// Recognises the format of a trace file (decompressing gzip and zstd) from its first 64 KiB,
/// or from its name for oracleGeneral.
pub fn detect_format(path: &Path) -> Result<Format, TraceError> {
    if let Some(f) = by_name(path) {
        return Ok(f);
    }
    let f = File::open(path).map_err(|source| TraceError::Io { path: path.to_path_buf(), source })?;
    let (mut head, input) = sniff(Box::new(f), path)?;
    if head.starts_with(&[0x1f, 0x8b]) {
        let raw = Box::new(std::io::Cursor::new(head).chain(input));
        (head, _) = sniff(Box::new(flate2::read::MultiGzDecoder::new(raw)), path)?;
    } else if head.starts_with(&ZSTD_MAGIC) {
        let raw = Box::new(std::io::Cursor::new(head).chain(input));
        let zs = zstd::stream::read::Decoder::new(raw)
            .map_err(|source| TraceError::Io { path: path.to_path_buf(), source })?;
        (head, _) = sniff(Box::new(zs), path)?;
    }
    detect_bytes(&head, &OpenOptions::default()).ok_or_else(|| unrecognised(path, &head))
}

/// Reads up to [`SNIFF_BYTES`] from the input, returning them and the rest of the input.
fn sniff(
    mut input: Box<dyn Read + Send>,
    name: &Path,
) -> Result<(Vec<u8>, Box<dyn Read + Send>), TraceError> {
    let mut head = vec![0u8; SNIFF_BYTES];
    let mut n = 0;
    while n < head.len() {
        let got = read_some(&mut *input, &mut head[n..], name)?;
        if got == 0 {
            break;
        }
        n += got;
    }
    head.truncate(n);
    Ok((head, input))
}

fn unrecognised(name: &Path, head: &[u8]) -> TraceError {
    let first = head.split(|&b| b == b'\n').find(|l| !is_blank(l)).unwrap_or(&[]);
    let what = if head.is_empty() {
        "the file is empty".to_string()
    } else if head.iter().take(512).any(|&b| b == 0) {
        "it looks binary but has neither the bin magic nor vscsi version fields".to_string()
    } else {
        format!("first line {:?}", crate::text::quote(first))
    };
    TraceError::Format {
        path: name.to_path_buf(),
        reason: format!(
            "cannot recognise the trace format ({what}); name it explicitly, one of:{}",
            Format::list()
        ),
    }
}

/// Recognises a format from the first bytes of a (decompressed) trace.
///
/// Binary formats go by their magic (`bin`) or version fields (`vscsi`). For text, every
/// format's parser reads the first 16 non-blank complete lines; the format accepting the most
/// of them wins, provided it accepts at least half and at least one as a record (a header alone
/// proves nothing). Tolerating a bad line here lets the reader report it precisely (file, line,
/// field) instead of failing detection. Ties go to the earlier of msr, alibaba, vscsi-csv,
/// blkparse, sac, mqsim, disksim. MQSim lines are a subset of DiskSim lines, so a DiskSim trace
/// whose sampled times are all whole numbers and flags all 0 or 1 is taken for MQSim (times
/// read as ns instead of ms): name `disksim` explicitly for such files.
pub(crate) fn detect_bytes(head: &[u8], opts: &OpenOptions) -> Option<Format> {
    if head.starts_with(&MAGIC) {
        return Some(Format::Bin);
    }
    if detect_version(head).is_some() {
        return Some(Format::Vscsi);
    }
    // Only whole lines: the last one may be cut by the sniff window.
    let text = if head.len() == SNIFF_BYTES {
        &head[..head.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1)]
    } else {
        head
    };
    let lines: Vec<(u64, &[u8])> = text
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, l)| (i as u64 + 1, l.strip_suffix(b"\r").unwrap_or(l)))
        .filter(|(_, l)| !is_blank(l))
        .take(SNIFF_LINES)
        .collect();
    // (lines accepted, whether any was a record) for one candidate.
    let score = |fmt: &mut dyn FnMut(&[u8], u64) -> Option<bool>| {
        let (mut ok, mut evidence) = (0usize, false);
        for &(no, l) in &lines {
            if let Some(e) = fmt(l, no) {
                ok += 1;
                evidence |= e;
            }
        }
        (ok, evidence)
    };
    type Probe = Box<dyn FnMut(&[u8], u64) -> Option<bool>>;
    fn probe<F: LineFormat + 'static>(mut f: F) -> Probe {
        Box::new(move |l, no| match f.parse(l, no) {
            Ok(Parsed::Ignore) => Some(false),
            Ok(Parsed::Req(_) | Parsed::Other | Parsed::Unsupported) => Some(true),
            Err(_) => None,
        })
    }
    let candidates: [(Format, Probe); 7] = [
        (Format::Msr, probe(Msr)),
        (Format::Alibaba, probe(Alibaba)),
        (Format::VscsiCsv, probe(VscsiCsv)),
        (Format::Blkparse, probe(Blkparse::new(opts.blkparse_action))),
        (Format::Sac, probe(Sac)),
        (Format::Mqsim, probe(Mqsim)),
        (Format::Disksim, probe(Disksim)),
    ];
    let mut best: Option<(usize, Format)> = None;
    for (f, mut p) in candidates {
        let (ok, evidence) = score(&mut *p);
        if evidence && 2 * ok >= lines.len() && !matches!(best, Some((b, _)) if b >= ok) {
            best = Some((ok, f));
        }
    }
    best.map(|(_, f)| f)
}

fn build(
    format: Format,
    head: Vec<u8>,
    input: Box<dyn Read + Send>,
    path: PathBuf,
    opts: &OpenOptions,
) -> Result<Box<dyn TraceReader>, TraceError> {
    let (vol, skip) = (opts.volume, opts.skip_bad_lines);
    fn text<F: LineFormat + 'static>(
        f: F,
        head: Vec<u8>,
        input: Box<dyn Read + Send>,
        path: PathBuf,
        vol: Option<u32>,
        skip: bool,
    ) -> Box<dyn TraceReader> {
        Box::new(TextReader::new(LineSource::new(head, input, path), f, vol, skip))
    }
    Ok(match format {
        Format::Msr => text(Msr, head, input, path, vol, skip),
        Format::Sac => text(Sac, head, input, path, vol, skip),
        Format::Blkparse => text(Blkparse::new(opts.blkparse_action), head, input, path, vol, skip),
        Format::Disksim => text(Disksim, head, input, path, vol, skip),
        Format::Mqsim => text(Mqsim, head, input, path, vol, skip),
        Format::VscsiCsv => text(VscsiCsv, head, input, path, vol, skip),
        Format::Alibaba => text(Alibaba, head, input, path, vol, skip),
        Format::Vscsi => Box::new(VscsiReader::new(RecordSource::new(head, input, path), vol, skip)?),
        Format::Bin => Box::new(BinaryReader::from_source(RecordSource::new(head, input, path), vol)?),
        Format::OracleGeneral => {
            let mut op = shingled_core::Op::Read;
            for (k, v) in split_params(opts.params.as_deref().unwrap_or(""))? {
                match k.as_str() {
                    "op" => op = parse_op_param(&v)?,
                    _ => {
                        return Err(TraceError::Invalid(format!(
                            "trace parameters: {k:?} does not apply to oracleGeneral (only op=read|write)"
                        )))
                    }
                }
            }
            let r = OracleReader::new(RecordSource::new(head, input, path), op);
            match vol {
                Some(v) => Box::new(VolumeFilter::new(r, v)),
                None => Box::new(r),
            }
        }
        Format::Csv => {
            let p = CsvParams::parse(opts.params.as_deref().unwrap_or(""))?;
            text(Csv::new(p), head, input, path, vol, skip)
        }
    })
}

/// Whether the requests of a reader whose [`crate::TraceReader::format_name`] is `format`,
/// opened with `params`, carry the trace's own timestamps: `sac`, and `csv` without a
/// `time-col`, number their lines instead (bad parameters: the open reports them, so `true`).
pub fn has_timestamps(format: &str, params: Option<&str>) -> bool {
    match format {
        "sac" => false,
        "csv" => CsvParams::parse(params.unwrap_or("")).map_or(true, |p| p.time_col.is_some()),
        _ => true,
    }
}

#[cfg(test)]
#[test]
fn line_numbered_formats_have_no_timestamps() {
    assert!(!has_timestamps("sac", None));
    assert!(!has_timestamps("csv", Some("obj-id-col=2")));
    assert!(has_timestamps("csv", Some("obj-id-col=2,time-col=1")));
    assert!(has_timestamps("csv", Some("obj-id-field=2,time-field=1")));
    assert!(has_timestamps("msr", None));
    assert!(has_timestamps("synth", None));
}

/// Keeps only the requests of one volume from any reader, counting the others in `filtered`.
/// Format readers filter internally; this serves sources that do not (synthetic traces).
pub struct VolumeFilter<R> {
    inner: R,
    volume: u32,
    filtered: u64,
}

impl<R: TraceReader> VolumeFilter<R> {
    /// Wraps `inner`, keeping requests of `volume`.
    pub fn new(inner: R, volume: u32) -> Self {
        VolumeFilter { inner, volume, filtered: 0 }
    }
}

impl<R: TraceReader> TraceReader for VolumeFilter<R> {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        while let Some(r) = self.inner.next_request()? {
            if r.volume == self.volume {
                return Ok(Some(r));
            }
            self.filtered += 1;
        }
        Ok(None)
    }
    fn skipped(&self) -> u64 {
        self.inner.skipped()
    }
    fn filtered(&self) -> u64 {
        self.inner.filtered() + self.filtered
    }
    fn format_name(&self) -> &'static str {
        self.inner.format_name()
    }
}

/// [`convert`] of the trace at `input`, refusing an `out` that is the input itself (the same
/// path, a hard link or a symbolic link to it), which would destroy the trace.
pub fn convert_file(input: &str, opts: &OpenOptions, out: &Path) -> Result<ConvertSummary, TraceError> {
    convert_file_until(input, opts, out, &std::sync::atomic::AtomicBool::new(false))
}

/// [`convert_file`] that stops with [`TraceError::Interrupted`] (leaving `out` as it was) once
/// `stop` is set.
pub fn convert_file_until(
    input: &str,
    opts: &OpenOptions,
    out: &Path,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<ConvertSummary, TraceError> {
    refuse_same_file(&[input], out)?;
    let mut reader = open(input, opts)?;
    convert(&mut crate::Interruptible::new(&mut *reader, stop), out)
}

/// [`convert_file`] with [`convert_with_stats`]: the statistics over `bands` measured in the
/// same pass.
pub fn convert_file_with_stats(
    input: &str,
    opts: &OpenOptions,
    out: &Path,
    bands: &shingled_core::BandConfig,
) -> Result<(ConvertSummary, crate::TraceStats), TraceError> {
    refuse_same_file(&[input], out)?;
    let mut reader = open(input, opts)?;
    convert_with_stats(&mut *reader, out, bands)
}
