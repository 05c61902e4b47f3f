//! Memory for large simulations: a global allocator that asks Linux for transparent huge pages
//! on large allocations, and a cache-line prefetch.
//!
//! A simulation at a large cache size is bound by memory latency: every block request looks up
//! a hash table and a few arrays of millions of entries at random. With 4 KiB pages nearly every
//! such access also misses the TLB; with 2 MiB pages the page walks mostly go away (measured in
//! docs/benchmarks.md: "A large cache"). Most distributions set transparent huge pages to
//! `madvise`, so a program gets them only where it asks. [`HugePageAlloc`] asks, with
//! `madvise(MADV_HUGEPAGE)`, for the 2 MiB-aligned interior of every allocation of at least
//! [`HUGE_MIN`] bytes, right after the system allocator returns it (before the caller touches
//! it, so fresh zeroed memory faults in as huge pages). Everything else goes to
//! [`std::alloc::System`] unchanged; on other systems, or where the advice fails, nothing
//! changes but the page size. The binaries (`shingled`, the Python extension) install it with
//! `#[global_allocator]`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};

/// Allocations at least this large are advised to use huge pages (4 MiB: at least one whole
/// 2 MiB page inside whatever alignment the allocator gives).
pub const HUGE_MIN: usize = 4 << 20;

/// [`System`], with huge-page advice on large allocations (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct HugePageAlloc;

#[cfg(target_os = "linux")]
fn advise(ptr: *mut u8, size: usize) {
    const HUGE: usize = 2 << 20;
    if ptr.is_null() || size < HUGE_MIN {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE);
    let end = (ptr as usize + size) & !(HUGE - 1);
    if end > start {
        // SAFETY: the range lies inside an allocation the caller owns; MADV_HUGEPAGE changes no
        // contents, only how the kernel backs the pages. A failure (THP disabled) is harmless.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_ptr: *mut u8, _size: usize) {}

// SAFETY: every method forwards to `System` with the same arguments and returns its result; the
// advice only touches the page backing of memory `System` just handed out.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        advise(p, new_size);
        p
    }
}

/// Asks the CPU to bring the cache line holding `items[index]` into its caches, without waiting
/// for it: for look-ahead over tables far larger than the caches, so that several misses
/// overlap. An index past the end is harmless (a prefetch never faults and reads nothing);
/// a no-op off x86-64.
#[inline(always)]
pub fn prefetch<T>(items: &[T], index: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = items.as_ptr().wrapping_add(index) as *const i8;
        // SAFETY: PREFETCHT0 has no architectural effect and cannot fault, whatever the address;
        // SSE is part of the x86-64 baseline.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, index);
}

/// A direct array indexed by block number (4 bytes per block of the span) replaces a hash index
/// of `hash_bytes` when it is no larger, or at most this large.
pub const DIRECT_ARRAY_MAX_BYTES: u64 = 64 << 20;

/// Whether a direct array of `u32` over `span` blocks is used instead of a hash index of
/// `hash_bytes` (see [`DIRECT_ARRAY_MAX_BYTES`]). Its pages are touched only where blocks are,
/// so a sparse span costs less than its size.
pub fn direct_array_pays(span: u64, hash_bytes: usize) -> bool {
    span.saturating_mul(4) <= (hash_bytes as u64).max(DIRECT_ARRAY_MAX_BYTES)
}

/// The second-level cache of one core, in bytes, when nothing says otherwise: the smallest
/// seen on the machines this project is measured on (AMD EPYC VMs).
pub const L2_DEFAULT: usize = 512 << 10;

/// The size of the CPU's per-core second-level data cache, read once from Linux's sysfs
/// (`/sys/devices/system/cpu/cpu0/cache/index*/`, the level-2 data or unified entry);
/// [`L2_DEFAULT`] where that is absent or unreadable. Look-ahead uses it to tell tables that
/// stay in the core's caches (prefetching them only costs instructions) from tables whose
/// lookups miss.
pub fn l2_cache_bytes() -> usize {
    static L2: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *L2.get_or_init(|| read_level(SYS_CACHE, "2").unwrap_or(L2_DEFAULT))
}

/// The size of the last-level (third-level) cache CPU 0 shares with others, read once from
/// sysfs like [`l2_cache_bytes`]; `None` where there is none or it is unreadable.
pub fn l3_cache_bytes() -> Option<usize> {
    static L3: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *L3.get_or_init(|| read_level(SYS_CACHE, "3"))
}

const SYS_CACHE: &str = "/sys/devices/system/cpu/cpu0/cache";

/// The data (or unified) cache size of `level` listed under `dir` (sysfs's `cache` directory
/// of a CPU), if one is.
fn read_level(dir: &str, level: &str) -> Option<usize> {
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok().map(|s| s.trim().to_string());
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let d = entry.path();
        if !d.file_name()?.to_str()?.starts_with("index") {
            continue;
        }
        if read(d.join("level")).as_deref() != Some(level) {
            continue;
        }
        if !matches!(read(d.join("type")).as_deref(), Some("Data" | "Unified")) {
            continue;
        }
        return parse_size(&read(d.join("size"))?);
    }
    None
}

/// A sysfs cache size (`2048K`, `1M`, `32768`) in bytes.
fn parse_size(s: &str) -> Option<usize> {
    let (num, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let n: usize = num.parse().ok()?;
    let mult = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mult).filter(|&b| b > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_parse_as_sysfs_writes_them() {
        assert_eq!(parse_size("2048K"), Some(2 << 20));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("32768"), Some(32768));
        assert_eq!(parse_size("0K"), None);
        assert_eq!(parse_size("12Q"), None);
        assert_eq!(parse_size(""), None);
        assert!(l2_cache_bytes() > 0);
    }

    #[test]
    fn the_level_2_entry_is_found_among_the_others() {
        let dir = std::env::temp_dir().join(format!("shingled-l2-{}", std::process::id()));
        for (i, level, kind, size) in [
            (0, "1", "Data", "48K"),
            (1, "1", "Instruction", "32K"),
            (2, "2", "Unified", "2048K"),
            (3, "3", "Unified", "260M"),
        ] {
            let d = dir.join(format!("index{i}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("level"), format!("{level}\n")).unwrap();
            std::fs::write(d.join("type"), format!("{kind}\n")).unwrap();
            std::fs::write(d.join("size"), format!("{size}\n")).unwrap();
        }
        assert_eq!(read_level(dir.to_str().unwrap(), "2"), Some(2 << 20));
        assert_eq!(read_level(dir.to_str().unwrap(), "3"), Some(260 << 20));
        std::fs::remove_dir_all(dir.join("index2")).unwrap();
        assert_eq!(read_level(dir.to_str().unwrap(), "2"), None);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(read_level("/nonexistent/cache", "2"), None);
    }

    #[test]
    fn prefetch_anywhere_is_harmless() {
        let v = vec![1u64; 10];
        for i in [0, 9, 10, 1 << 40, usize::MAX] {
            prefetch(&v, i);
        }
        prefetch::<u8>(&[], 3);
        assert_eq!(v.iter().sum::<u64>(), 10);
    }

    #[test]
    fn allocates_reads_writes_and_frees_small_and_large() {
        let a = HugePageAlloc;
        for size in [8usize, 4096, HUGE_MIN, HUGE_MIN * 3 + 12345] {
            let layout = Layout::from_size_align(size, 64).unwrap();
            // SAFETY: a non-zero layout; the pointer is used within it and freed once.
            unsafe {
                let p = a.alloc_zeroed(layout);
                assert!(!p.is_null());
                assert!(std::slice::from_raw_parts(p, size).iter().all(|&b| b == 0));
                p.write_bytes(7, size);
                let q = a.realloc(p, layout, size * 2);
                assert!(!q.is_null());
                assert!(std::slice::from_raw_parts(q, size).iter().all(|&b| b == 7));
                a.dealloc(q, Layout::from_size_align(size * 2, 64).unwrap());
            }
        }
    }
}
