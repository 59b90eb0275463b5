//! The macOS builds (`aarch64-apple-darwin` and `x86_64-apple-darwin`),
//! cross-linked here by cargo-zigbuild. Nothing on this machine runs a Mach-O
//! binary, so each is checked as macOS's loader would take it: the right
//! architecture, an executable with an entry point, a code signature whose
//! page hashes match the file (Apple silicon runs nothing else), the oldest macOS Rust supports as its
//! minimum, and libraries that every Mac has, the system's own and nothing
//! else.
//!
//! `scripts/test` builds them only where cargo-zigbuild is installed, names
//! them in `TRAE_MEM_TEST_MACOS_ARM64_EXE` and `TRAE_MEM_TEST_MACOS_X64_EXE`,
//! and says at the end whether it did.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

use crate::util::bin;

const MH_MAGIC_64: u32 = 0xfeed_facf;
const MH_EXECUTE: u32 = 2;
const LC_LOAD_DYLIB: u32 = 0xc;
const LC_LOAD_WEAK_DYLIB: u32 = 0x8000_0018;
const LC_CODE_SIGNATURE: u32 = 0x1d;
const LC_BUILD_VERSION: u32 = 0x32;
const LC_VERSION_MIN_MACOSX: u32 = 0x24;
const LC_MAIN: u32 = 0x8000_0028;
const PLATFORM_MACOS: u32 = 1;
const CPU_ARM64: u32 = 0x0100_000c;
const CPU_X86_64: u32 = 0x0100_0007;

/// What a Mach-O executable asks of the loader.
#[derive(Debug, Default)]
struct MachO {
    cputype: u32,
    filetype: u32,
    dylibs: Vec<String>,
    has_entry_point: bool,
    /// Where the code signature lies in the file (LC_CODE_SIGNATURE).
    signature: Option<usize>,
    /// (platform, minimum OS as major.minor)
    build_version: Option<(u32, (u32, u32))>,
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

/// A version as Mach-O packs it (xxxx.yy.zz), as major.minor.
fn version(packed: u32) -> (u32, u32) {
    (packed >> 16, (packed >> 8) & 0xff)
}

/// Reads the 64-bit little-endian Mach-O header and its load commands.
fn parse(bytes: &[u8]) -> MachO {
    assert_eq!(read_u32(bytes, 0), MH_MAGIC_64, "not a 64-bit Mach-O file");
    let mut macho = MachO { cputype: read_u32(bytes, 4), filetype: read_u32(bytes, 12), ..MachO::default() };
    let count = read_u32(bytes, 16);
    let mut at = 32; // the 64-bit header's size
    for _ in 0..count {
        let (cmd, size) = (read_u32(bytes, at), read_u32(bytes, at + 4) as usize);
        let command = &bytes[at..at + size];
        match cmd {
            LC_LOAD_DYLIB | LC_LOAD_WEAK_DYLIB => {
                let name = &command[read_u32(command, 8) as usize..];
                let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                macho.dylibs.push(String::from_utf8_lossy(&name[..end]).into_owned());
            }
            LC_MAIN => macho.has_entry_point = true,
            LC_CODE_SIGNATURE => macho.signature = Some(read_u32(command, 8) as usize),
            LC_BUILD_VERSION => macho.build_version = Some((read_u32(command, 8), version(read_u32(command, 12)))),
            // What a minimum before macOS 10.14 is stated with instead.
            LC_VERSION_MIN_MACOSX => macho.build_version = Some((PLATFORM_MACOS, version(read_u32(command, 8)))),
            _ => {}
        }
        at += size;
    }
    macho
}

/// Checks an ad hoc code signature (at `offset`) against the file: each
/// page's SHA-256 in its code directory. Apple silicon kills a binary whose
/// pages differ from what was signed (a tool that changed the file after
/// the linker signed it, as `strip` does) as surely as an unsigned one.
fn check_page_hashes(bytes: &[u8], offset: usize) {
    // The signature's structures are big-endian, unlike the rest.
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(be(offset), 0xfade_0cc0, "not an embedded signature");
    let blobs = be(offset + 8);
    let directory = (0..blobs)
        .map(|i| offset + be(offset + 12 + i * 8 + 4))
        .find(|&blob| be(blob) == 0xfade_0c02)
        .expect("a signature without a code directory");
    let (hashes, slots, signed_bytes) = (directory + be(directory + 16), be(directory + 28), be(directory + 32));
    let (hash_size, hash_type, page_shift) = (bytes[directory + 36], bytes[directory + 37], bytes[directory + 39]);
    assert_eq!((hash_size, hash_type), (32, 2), "SHA-256 page hashes");
    assert_eq!(signed_bytes, offset, "the signature covers the whole file before it");
    let page = 1usize << page_shift;
    assert_eq!(slots, signed_bytes.div_ceil(page));
    for slot in 0..slots {
        let content = &bytes[slot * page..((slot + 1) * page).min(signed_bytes)];
        let signed = &bytes[hashes + slot * 32..hashes + (slot + 1) * 32];
        assert!(Sha256::digest(content).as_slice() == signed, "page {slot} of {slots} differs from what was signed");
    }
}

/// Checks the build named by `var`, or says it did not run.
fn check(var: &str, cputype: u32, platform: &str) {
    let Some(exe) = std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_file()) else {
        eprintln!(
            "NOT RUN macos: the {platform} build is not checked (scripts/test makes it where cargo-zigbuild is on the PATH)"
        );
        return;
    };
    let bytes = std::fs::read(&exe).unwrap();
    let macho = parse(&bytes);
    assert_eq!(macho.cputype, cputype, "{} is not a {platform} binary: {macho:?}", exe.display());
    assert_eq!(macho.filetype, MH_EXECUTE, "{macho:?}");
    assert!(macho.has_entry_point, "no LC_MAIN: {macho:?}");
    // Apple silicon runs no unsigned code (the linker signs ad hoc); Intel
    // Macs run it, and zig's linker signs only arm64.
    if cputype == CPU_ARM64 {
        let signature = macho.signature.expect("macOS on Apple silicon runs no unsigned code");
        check_page_hashes(&bytes, signature);
    }
    let (os, (major, minor)) = macho.build_version.expect("no minimum macOS stated");
    assert_eq!(os, PLATFORM_MACOS, "{macho:?}");
    // Rust's own minimum (11.0 on arm64, 10.12 on x86-64), not the
    // newest macOS the linker knows: that would refuse to start on any older.
    let oldest = if cputype == CPU_ARM64 { (11, 0) } else { (10, 12) };
    assert_eq!((major, minor), oldest, "a minimum macOS of {major}.{minor} leaves out users of older ones");

    // Only what ships with macOS: libSystem (the C library) and system
    // frameworks, the ones the stand-ins in tests/macos/frameworks name.
    assert!(macho.dylibs.iter().any(|d| d == "/usr/lib/libSystem.B.dylib"), "{:?}", macho.dylibs);
    for dylib in &macho.dylibs {
        assert!(
            dylib.starts_with("/usr/lib/") || dylib.starts_with("/System/Library/Frameworks/"),
            "{dylib} is not part of macOS: a user's Mac would not start the binary ({:?})",
            macho.dylibs
        );
    }

    // The whole program, the model inside it (no download at run time): as
    // large as this machine's build, give or take what each platform's code
    // and linker add.
    let native = std::fs::metadata(bin()).unwrap().len() as f64;
    let ratio = bytes.len() as f64 / native;
    assert!((0.7..1.3).contains(&ratio), "{} is {ratio:.2}× the Linux binary", exe.display());
}

#[test]
fn the_macos_arm64_build_is_a_signed_mach_o_executable_that_needs_only_macos() {
    check("TRAE_MEM_TEST_MACOS_ARM64_EXE", CPU_ARM64, "macOS arm64");
}

#[test]
fn the_macos_x64_build_is_a_mach_o_executable_that_needs_only_macos() {
    check("TRAE_MEM_TEST_MACOS_X64_EXE", CPU_X86_64, "macOS x86-64");
}
