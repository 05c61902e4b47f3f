//! One file per trace format, and the [`Format`] registry that names them.
//!
//! Adding a format: write `formats/<name>.rs` with a [`crate::text::LineFormat`] (text) or a
//! [`crate::TraceReader`] (binary), add one line to the `formats!` list below (variant, name,
//! description: the enum, [`Format::ALL`] and the names come from it), and its constructor arm in
//! `open.rs` (the compiler asks for it), plus a sniffing rule there if its content is
//! recognisable.

pub(crate) mod alibaba;
pub(crate) mod blkparse;
pub(crate) mod csv;
pub(crate) mod disksim;
pub(crate) mod msr;
pub mod oracle;
pub(crate) mod sac;
pub(crate) mod vscsi;

use shingled_core::Op;
use std::fmt;
use std::str::FromStr;

/// Declares every format once: its variant (with its documentation), its command-line name and
/// its one-line description; [`Format`], [`Format::ALL`], [`Format::name`] and
/// [`Format::description`] are generated from the list, so none can be forgotten.
macro_rules! formats {
    ($( $(#[doc = $doc:literal])* $variant:ident => $name:literal, $desc:literal; )*) => {
        /// A trace format this crate reads.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        pub enum Format {
            $( $(#[doc = $doc])* #[serde(rename = $name)] $variant, )*
        }

        impl Format {
            /// Every format, in the order `--help` lists them.
            pub const ALL: [Format; 0 $(+ formats!(@one $variant))*] = [$(Format::$variant),*];

            /// The name used on the command line and in [`crate::TraceReader::format_name`].
            pub const fn name(self) -> &'static str {
                match self {
                    $(Format::$variant => $name,)*
                }
            }

            /// One line saying what the format looks like.
            pub const fn description(self) -> &'static str {
                match self {
                    $(Format::$variant => $desc,)*
                }
            }
        }
    };
    (@one $variant:ident) => { 1 };
}

formats! {
    /// MSR Cambridge CSV (SNIA IOTTA 388):
    /// `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, Windows FILETIME ticks
    /// of 100 ns, byte offsets and sizes; an optional header line.
    Msr => "msr", "MSR Cambridge CSV: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime (FILETIME 100 ns ticks, bytes; header optional)";
    /// The SAC artifact's text: `<op> <int> <block>` per line, op `1` = write and `0` = read,
    /// one 4 KiB block per line, middle integer ignored; times are line indices.
    Sac => "sac", "SAC artifact text: '<op> <int> <block>' per line (op 1 = write, 0 = read; one 4 KiB block; time = line index)";
    /// `blkparse` default text output; events of one action (`D` by default) become requests.
    Blkparse => "blkparse", "blkparse default text output ('8,0 3 11 0.0095 697 D W 223490 + 56 [proc]'); D events by default";
    /// DiskSim ASCII: `time devno blkno bcount flags`, time in ms, 512-byte sectors, flags bit
    /// 0 set = read.
    Disksim => "disksim", "DiskSim ASCII: 'time devno blkno bcount flags' (time in ms, 512-byte sectors, flags bit 0 = read)";
    /// MQSim's DiskSim variant: `time_ns device sector nsectors type`, type 0 = write, 1 = read.
    Mqsim => "mqsim", "MQSim ASCII: 'time_ns device sector nsectors type' (512-byte sectors, type 0 = write, 1 = read)";
    /// CloudPhysics vscsi binary, v1 (32-byte records) or v2 (40-byte records), auto-detected.
    Vscsi => "vscsi", "CloudPhysics vscsi binary, v1 (32-byte) or v2 (40-byte) records, version auto-detected";
    /// CloudPhysics vscsi as CSV: `version,time,op,size,lbn` (seconds, hex SCSI opcode, bytes,
    /// 512-byte sectors); an optional header line.
    VscsiCsv => "vscsi-csv", "CloudPhysics vscsi CSV: version,time,op,size,lbn (seconds, hex SCSI opcode, bytes, 512-byte sectors)";
    /// Alibaba block traces: `device_id,opcode,offset,length,timestamp` (R/W, bytes, µs).
    Alibaba => "alibaba", "Alibaba block CSV: device_id,opcode,offset,length,timestamp (R/W, bytes, microseconds)";
    /// This crate's compact binary format (`docs/trace-format.md`).
    Bin => "bin", "shingled binary: 32-byte header + 24-byte little-endian records (docs/trace-format.md)";
    /// libCacheSim's oracleGeneral binary (also zstd-compressed): 24-byte records `u32 time,
    /// u64 id, u32 size, i64 next access`, no header; object `id` is the 4 KiB block `id`.
    OracleGeneral => "oracleGeneral", "libCacheSim oracleGeneral binary (or .zst): 24-byte records u32 time, u64 obj id, u32 size, i64 next access; id = 4 KiB block; reads unless op=write";
    /// A delimited text trace with columns named by libCacheSim-style parameters
    /// (`obj-id-col=2,time-col=1,…`, see [`crate::OpenOptions::params`]).
    Csv => "csv", "generic CSV, columns named by --trace-params as libCacheSim's -t: obj-id-col=N[,time-col=N,obj-size-col=N,op-col=N,has-header=B,delimiter=C]";
}

impl Format {
    /// Whether the format is binary (not line-oriented text).
    pub const fn is_binary(self) -> bool {
        matches!(self, Format::Vscsi | Format::Bin | Format::OracleGeneral)
    }

    /// A multi-line list of every format with its description, for error and help messages.
    pub fn list() -> String {
        let mut s = String::new();
        for f in Format::ALL {
            s.push_str(&format!("\n  {:<13} {}", f.name(), f.description()));
        }
        s
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name that is not one of [`Format::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown trace format {0:?}; known formats:{list}", list = Format::list())]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    /// Accepts the names of [`Format::name`], case-insensitively, and `_` for `-`.
    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        let norm = s.trim().replace('_', "-");
        let norm = if norm.eq_ignore_ascii_case("oracleGeneralBin") { "oracleGeneral" } else { &norm };
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(norm))
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// SCSI READ/WRITE commands of every CDB size (6, 10, 12, 16 bytes); anything else (TEST UNIT
/// READY, INQUIRY, SYNCHRONIZE CACHE, …) is not a data transfer we can replay.
#[inline]
pub(crate) fn scsi_op(cmd: u64) -> Option<Op> {
    match cmd {
        0x08 | 0x28 | 0xa8 | 0x88 => Some(Op::Read),
        0x0a | 0x2a | 0xaa | 0x8a => Some(Op::Write),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>().unwrap(), f);
            assert_eq!(f.to_string(), f.name());
            assert!(!f.description().is_empty());
        }
        assert_eq!("VSCSI_CSV".parse::<Format>().unwrap(), Format::VscsiCsv);
        assert_eq!("oracleGeneralBin".parse::<Format>().unwrap(), Format::OracleGeneral);
        assert_eq!("ORACLEGENERAL".parse::<Format>().unwrap(), Format::OracleGeneral);
        let e = "tsv".parse::<Format>().unwrap_err().to_string();
        assert!(e.contains("\"tsv\"") && e.contains("alibaba"), "{e}");
    }
}
