/*
 * memcpy, memmove and memcmp for the x86-64 musl build (build.rs links this
 * file in place of musl's own, on that target only).
 *
 * Why: SQLite and FTS5 copy and compare millions of short runs of bytes.
 * musl's memcpy starts every copy with `rep movsq`, about 24 ns before the
 * first byte moves (glibc: 1 ns for 16 bytes), and its memcmp compares a
 * byte at a time. An import spent 35% of its time in memcpy and 7% in
 * memcmp, and took 1.7x as long as the glibc build.
 *
 * How: short copies load every byte before they store any (two overlapping
 * loads cover any length between two powers of two), so they are also
 * correct for overlapping memmove. Longer ones move 16 bytes at a time with
 * SSE2 (every x86-64 CPU has it), forwards or, for a memmove whose
 * destination overlaps the source from above, backwards.
 *
 * This file must not call memcpy, memmove or memcmp, nor let the compiler
 * turn its loops into such calls: build.rs compiles it with -fno-builtin
 * and -fno-tree-loop-distribute-patterns.
 */

#include <emmintrin.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t __attribute__((__may_alias__, __aligned__(1))) u64_unaligned;
typedef uint32_t __attribute__((__may_alias__, __aligned__(1))) u32_unaligned;
typedef uint16_t __attribute__((__may_alias__, __aligned__(1))) u16_unaligned;

static inline __m128i load16(const unsigned char *p) { return _mm_loadu_si128((const __m128i *)p); }
static inline void store16(unsigned char *p, __m128i v) { _mm_storeu_si128((__m128i *)p, v); }

/* Up to 64 bytes, all loaded before any is stored: safe for any overlap. */
static inline void copy_short(unsigned char *d, const unsigned char *s, size_t n)
{
    if (n > 32) {
        __m128i a = load16(s), b = load16(s + 16), c = load16(s + n - 32), e = load16(s + n - 16);
        store16(d, a);
        store16(d + 16, b);
        store16(d + n - 32, c);
        store16(d + n - 16, e);
    } else if (n >= 16) {
        __m128i a = load16(s), b = load16(s + n - 16);
        store16(d, a);
        store16(d + n - 16, b);
    } else if (n >= 8) {
        uint64_t a = *(const u64_unaligned *)s, b = *(const u64_unaligned *)(s + n - 8);
        *(u64_unaligned *)d = a;
        *(u64_unaligned *)(d + n - 8) = b;
    } else if (n >= 4) {
        uint32_t a = *(const u32_unaligned *)s, b = *(const u32_unaligned *)(s + n - 4);
        *(u32_unaligned *)d = a;
        *(u32_unaligned *)(d + n - 4) = b;
    } else if (n >= 2) {
        uint16_t a = *(const u16_unaligned *)s, b = *(const u16_unaligned *)(s + n - 2);
        *(u16_unaligned *)d = a;
        *(u16_unaligned *)(d + n - 2) = b;
    } else if (n == 1) {
        *d = *s;
    }
}

/* More than 64 bytes, front to back. Correct when the destination does not
 * overlap the source from above: each chunk is read before any store can
 * reach it, and the last 16 bytes are read first and stored last. */
static void copy_forward(unsigned char *d, const unsigned char *s, size_t n)
{
    __m128i tail = load16(s + n - 16);
    unsigned char *end = d + n - 16;
    while (d + 64 <= end) {
        __m128i a = load16(s), b = load16(s + 16), c = load16(s + 32), e = load16(s + 48);
        store16(d, a);
        store16(d + 16, b);
        store16(d + 32, c);
        store16(d + 48, e);
        d += 64;
        s += 64;
    }
    while (d < end) {
        store16(d, load16(s));
        d += 16;
        s += 16;
    }
    store16(end, tail);
}

/* More than 64 bytes, back to front, for a destination above an
 * overlapping source: the mirror of copy_forward. */
static void copy_backward(unsigned char *d, const unsigned char *s, size_t n)
{
    __m128i head = load16(s);
    unsigned char *start = d + 16;
    d += n;
    s += n;
    while (d - 64 >= start) {
        __m128i a = load16(s - 16), b = load16(s - 32), c = load16(s - 48), e = load16(s - 64);
        store16(d - 16, a);
        store16(d - 32, b);
        store16(d - 48, c);
        store16(d - 64, e);
        d -= 64;
        s -= 64;
    }
    while (d > start) {
        store16(d - 16, load16(s - 16));
        d -= 16;
        s -= 16;
    }
    store16(start - 16, head);
}

void *memcpy(void *restrict dest, const void *restrict src, size_t n)
{
    if (n <= 64)
        copy_short(dest, src, n);
    else
        copy_forward(dest, src, n);
    return dest;
}

void *memmove(void *dest, const void *src, size_t n)
{
    if (n <= 64)
        copy_short(dest, src, n);
    else if ((uintptr_t)dest - (uintptr_t)src >= n)
        copy_forward(dest, src, n); /* below the source, or apart from it */
    else
        copy_backward(dest, src, n);
    return dest;
}

int memcmp(const void *left, const void *right, size_t n)
{
    const unsigned char *l = left, *r = right;
    for (; n >= 8; n -= 8, l += 8, r += 8) {
        uint64_t a = *(const u64_unaligned *)l, b = *(const u64_unaligned *)r;
        if (a != b) {
            /* The first differing byte decides: big-endian order compares it first. */
            a = __builtin_bswap64(a);
            b = __builtin_bswap64(b);
            return a < b ? -1 : 1;
        }
    }
    for (; n; n--, l++, r++)
        if (*l != *r)
            return *l - *r;
    return 0;
}
