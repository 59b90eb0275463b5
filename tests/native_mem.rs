//! memcpy, memmove and memcmp, as the binary links them: on x86-64 musl,
//! `native/musl_mem.c` stands in for musl's own, and every byte SQLite
//! stores passes through it. Each is checked against a byte-by-byte
//! reference, for every length up to past its longest special case, at
//! every alignment, and (memmove) at every overlap in both directions.

use std::ffi::{c_int, c_void};

unsafe extern "C" {
    fn memcpy(dest: *mut c_void, src: *const c_void, n: usize) -> *mut c_void;
    fn memmove(dest: *mut c_void, src: *const c_void, n: usize) -> *mut c_void;
    fn memcmp(left: *const c_void, right: *const c_void, n: usize) -> c_int;
}

const LONGEST: usize = 300;

/// memcpy from `src` into `dest`, `len` bytes; returns what memcpy returned.
fn copy(dest: &mut [u8], src: &[u8], len: usize) -> *mut c_void {
    assert!(len <= dest.len() && len <= src.len());
    // SAFETY: both slices hold `len` bytes, and a `&mut` cannot overlap a `&`.
    unsafe { memcpy(dest.as_mut_ptr().cast(), src.as_ptr().cast(), len) }
}

/// memmove of `len` bytes within `buf`, from `src` to `dest`.
fn move_within(buf: &mut [u8], dest: usize, src: usize, len: usize) {
    assert!(dest + len <= buf.len() && src + len <= buf.len());
    // SAFETY: both runs lie inside `buf`; memmove allows them to overlap.
    unsafe { memmove(buf.as_mut_ptr().add(dest).cast(), buf.as_ptr().add(src).cast(), len) };
}

/// memcmp of the first `len` bytes of `left` and `right`.
fn compare(left: &[u8], right: &[u8], len: usize) -> c_int {
    assert!(len <= left.len() && len <= right.len());
    // SAFETY: both slices hold `len` bytes, and memcmp only reads them.
    unsafe { memcmp(left.as_ptr().cast(), right.as_ptr().cast(), len) }
}

/// Bytes that differ from their neighbours, so a byte copied from the wrong
/// place shows.
fn pattern(len: usize, seed: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 131 + seed * 7 + 1) as u8).collect()
}

#[test]
fn memcpy_copies_every_length_at_every_alignment() {
    for len in 0..=LONGEST {
        for (src_at, dest_at) in [(0, 0), (1, 0), (0, 3), (5, 11), (15, 1)] {
            let src = pattern(src_at + len + 16, len);
            let mut dest = vec![0xAA; dest_at + len + 16];
            let returned = copy(&mut dest[dest_at..], &src[src_at..], len);
            assert_eq!(returned, dest[dest_at..].as_mut_ptr().cast(), "memcpy returns its destination");
            assert_eq!(&dest[dest_at..dest_at + len], &src[src_at..src_at + len], "len {len}, at {src_at}/{dest_at}");
            assert!(
                dest[..dest_at].iter().chain(&dest[dest_at + len..]).all(|&b| b == 0xAA),
                "len {len}: wrote outside"
            );
        }
    }
}

#[test]
fn memmove_copies_overlapping_runs_both_ways() {
    for len in 0..=LONGEST {
        for shift in -70isize..=70 {
            let mut buf = pattern(LONGEST + 200, len);
            let mut expected = buf.clone();
            let src = 100usize;
            let dest = (100 + shift) as usize;
            let reference: Vec<u8> = expected[src..src + len].to_vec();
            expected[dest..dest + len].copy_from_slice(&reference);
            move_within(&mut buf, dest, src, len);
            assert_eq!(buf, expected, "len {len}, shift {shift}");
        }
    }
}

#[test]
fn memcmp_orders_by_the_first_differing_byte() {
    for len in 0..=LONGEST {
        let left = pattern(len + 1, 3);
        // Equal bytes at another address, so that no shortcut on the
        // pointers can answer.
        let twin = left[1..].to_vec();
        let same = compare(&left[1..], &twin, len);
        assert_eq!(same, 0, "len {len}");
        for at in 0..len {
            for (a, b) in [(0x01u8, 0xFEu8), (0x80, 0x7F), (0x00, 0xFF)] {
                let (mut l, mut r) = (left[1..].to_vec(), left[1..].to_vec());
                (l[at], r[at]) = (a, b);
                // A later byte that differs the other way must not decide.
                if at + 1 < len {
                    (l[at + 1], r[at + 1]) = (0xFF, 0x00);
                }
                let sign = compare(&l, &r, len).signum();
                assert_eq!(sign, if a < b { -1 } else { 1 }, "len {len}, differing at {at}: {a:#x} against {b:#x}");
            }
        }
    }
}
