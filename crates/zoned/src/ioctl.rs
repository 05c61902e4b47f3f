//! Linux block-device ioctl request numbers, encoded as `asm-generic/ioctl.h` does (number
//! bits 0..8, type 8..16, size 16..30, direction 30..32; powerpc, mips and sparc put a 3-bit
//! direction at bit 29 and have `_IOC_NONE` = 1). Shared by the zoned block device (`blkdev`)
//! and `shingled_stl::FileBlock`; the tests pin the numbers to the kernel headers.

#[cfg(any(
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "mips32r6",
    target_arch = "mips64r6",
    target_arch = "sparc",
    target_arch = "sparc64"
))]
mod arch {
    pub const NONE: u64 = 1;
    pub const READ: u64 = 2;
    pub const WRITE: u64 = 4;
    pub const DIR_SHIFT: u32 = 29;
}
#[cfg(not(any(
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "mips32r6",
    target_arch = "mips64r6",
    target_arch = "sparc",
    target_arch = "sparc64"
)))]
mod arch {
    pub const NONE: u64 = 0;
    pub const READ: u64 = 2;
    pub const WRITE: u64 = 1;
    pub const DIR_SHIFT: u32 = 30;
}

/// `_IOC_NONE`.
pub const IOC_NONE: u64 = arch::NONE;
/// `_IOC_READ`.
pub const IOC_READ: u64 = arch::READ;
/// `_IOC_WRITE`.
pub const IOC_WRITE: u64 = arch::WRITE;

/// `_IOC(dir, ty, nr, size)`.
pub const fn ioc(dir: u64, ty: u64, nr: u64, size: u64) -> u64 {
    (dir << arch::DIR_SHIFT) | (size << 16) | (ty << 8) | nr
}

/// `BLKGETSIZE64` = `_IOR(0x12, 114, size_t)` (`linux/fs.h`): the device size in bytes (a
/// `u64`, whatever the encoded size says).
pub const BLKGETSIZE64: u64 = ioc(IOC_READ, 0x12, 114, std::mem::size_of::<usize>() as u64);
/// `BLKZEROOUT` = `_IO(0x12, 127)`: zero `u64[2] = {start, length}` bytes.
pub const BLKZEROOUT: u64 = ioc(IOC_NONE, 0x12, 127, 0);

#[cfg(test)]
mod tests {
    use super::*;

    /// The request numbers `linux/fs.h` implies on asm-generic architectures (x86-64, arm64,
    /// riscv64).
    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "riscv64"))]
    fn ioctl_numbers_match_the_kernel_header() {
        assert_eq!(BLKGETSIZE64, 0x8008_1272);
        assert_eq!(BLKZEROOUT, 0x127f);
    }
}
