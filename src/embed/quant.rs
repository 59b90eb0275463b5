//! 4-bit weights times 8-bit activations, the encoder's hot path (`e5.c`'s
//! `matmul_q4q8`).
//!
//! Weights are GGML's Q4_0: blocks of 32, an f16 scale `d` and 16 bytes of
//! nibbles (byte j holds weight j in its low nibble, weight j + 16 in its
//! high one), weight = (nibble − 8)·d. Activations are quantized per block of
//! 32 to i8 with their own scale (Q8_0), so a block's dot product is integer:
//! `d_w·d_a·(Σ nibble·a − 8·Σ a)`.
//!
//! Both kernels sum the same integers and differ only by float rounding.

use half::f16;

use super::file::{Q4_BLOCK_BYTES, QK};

/// Which matrix kernel runs, chosen once at load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX2 with AVX-VNNI (Intel since Alder Lake and Sapphire Rapids, AMD
    /// since Zen 5): a block's bytes multiplied and summed into 32-bit lanes
    /// in one instruction, where AVX2 takes two.
    #[cfg(target_arch = "x86_64")]
    AvxVnni,
    /// AVX2 with AVX-512 VNNI (Intel since Ice Lake, AMD since Zen 4, which
    /// lacks AVX-VNNI): the same instruction in its AVX-512 encoding, on the
    /// same 256-bit vectors. On a 2-core Zen 4 cloud machine, in one run, a
    /// query's vector took 14.2 ms against AVX2's 16.0 (p50), and a
    /// 128-token passage 53.2 ms against 59.3.
    #[cfg(target_arch = "x86_64")]
    Avx512Vnni,
}

impl Kernel {
    pub fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            if is_x86_feature_detected!("avxvnni") {
                return Kernel::AvxVnni;
            }
            if is_x86_feature_detected!("avx512vnni") && is_x86_feature_detected!("avx512vl") {
                return Kernel::Avx512Vnni;
            }
            return Kernel::Avx2;
        }
        Kernel::Portable
    }

    /// Every kernel this CPU can run, for tests that compare them.
    #[cfg(test)]
    pub fn available() -> Vec<Kernel> {
        let mut kernels = vec![Kernel::Portable];
        // A CPU with a VNNI kernel runs the AVX2 one too.
        #[cfg(target_arch = "x86_64")]
        match Kernel::detect() {
            Kernel::Portable => {}
            Kernel::Avx2 => kernels.push(Kernel::Avx2),
            best => kernels.extend([Kernel::Avx2, best]),
        }
        kernels
    }
}

/// Defines `$name(kernel, …)`, which runs `$body` compiled for AVX2 and FMA
/// when the kernel is AVX2 (the compiler vectorizes its loops 8 wide), and
/// for the baseline CPU otherwise.
macro_rules! multiversion {
    ($(#[$doc:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)? $body:block) => {
        $(#[$doc])*
        #[allow(clippy::too_many_arguments)]
        $vis fn $name(kernel: Kernel, $($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            #[allow(clippy::too_many_arguments)]
            fn body($($arg: $ty),*) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            #[allow(clippy::too_many_arguments)]
            fn avx2($($arg: $ty),*) $(-> $ret)? {
                body($($arg),*)
            }
            match kernel {
                Kernel::Portable => body($($arg),*),
                #[cfg(target_arch = "x86_64")]
                // SAFETY: the AVX2 kernels are only chosen on a CPU with AVX2 and FMA.
                Kernel::Avx2 | Kernel::AvxVnni | Kernel::Avx512Vnni => unsafe { avx2($($arg),*) },
            }
        }
    };
}
pub(crate) use multiversion;

/// A block's scale, its f16 as f32: the exponent rebased by a multiply,
/// which also turns subnormals right, in three inlined instructions (the
/// `half` crate's general conversion was a twentieth of a query's time).
/// Infinities and NaN, which no scale is, are not kept.
#[inline(always)]
fn block_scale(block: &[u8]) -> f32 {
    const REBASE: f32 = 5.192_297e33; // 2^112: from f16's exponent bias (15) to f32's (127)
    let h = u32::from(u16::from_le_bytes([block[0], block[1]]));
    let magnitude = f32::from_bits((h & 0x7fff) << 13) * REBASE;
    f32::from_bits(magnitude.to_bits() | (h & 0x8000) << 16)
}

/// `row` (a multiple of 32 weights) as Q4_0 blocks, as GGML's reference
/// `quantize_row_q4_0`: each block's weight of largest magnitude is -8
/// steps, so it is kept exactly.
pub(crate) fn quantize_row(row: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(row.len() / QK * Q4_BLOCK_BYTES);
    for block in row.chunks_exact(QK) {
        let extreme = block.iter().fold(0f32, |m, &v| if v.abs() > m.abs() { v } else { m });
        let d = extreme / -8.0;
        let inv = if d != 0.0 { 1.0 / d } else { 0.0 };
        out.extend(f16::from_f32(d).to_le_bytes());
        let nibble = |v: f32| ((v * inv + 8.5) as u8).min(15);
        out.extend((0..QK / 2).map(|j| nibble(block[j]) | nibble(block[j + QK / 2]) << 4));
    }
    out
}

/// One Q4_0 row (`out.len()` weights) as f32.
pub(crate) fn dequantize_row(row: &[u8], out: &mut [f32]) {
    for (block, out) in row.chunks_exact(Q4_BLOCK_BYTES).zip(out.chunks_exact_mut(QK)) {
        let d = block_scale(block);
        for (j, &q) in block[2..].iter().enumerate() {
            out[j] = ((q & 0x0f) as i32 - 8) as f32 * d;
            out[j + 16] = ((q >> 4) as i32 - 8) as f32 * d;
        }
    }
}

/// Activations quantized per block of 32 (Q8_0): values, scales, and 8 times
/// each block's sum (the nibbles' offset of 8, taken out once per block).
#[derive(Default)]
pub(crate) struct Q8 {
    q: Vec<i8>,
    d: Vec<f32>,
    offset: Vec<f32>,
    nin: usize,
}

impl Q8 {
    /// Quantizes `x`, rows of `nin` values (`e5.c`'s `quantize_acts`).
    pub fn quantize(&mut self, kernel: Kernel, x: &[f32], nin: usize) {
        let blocks = x.len() / QK;
        self.nin = nin;
        self.q.resize(x.len(), 0);
        self.d.resize(blocks, 0.0);
        self.offset.resize(blocks, 0.0);
        match kernel {
            Kernel::Portable => quantize_blocks(x, &mut self.q, &mut self.d, &mut self.offset),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the vector kernels are only chosen after detecting AVX2 and FMA.
            Kernel::Avx2 | Kernel::AvxVnni | Kernel::Avx512Vnni => unsafe {
                avx2::quantize_blocks(x, &mut self.q, &mut self.d, &mut self.offset)
            },
        }
    }
}

/// [`Q8::quantize`]'s loops, portably, written so that they vectorize
/// where the compiler can: the largest magnitude is found on the floats'
/// bits (a non-negative float's bits order as its value), and no branch is
/// taken per value.
fn quantize_blocks(x: &[f32], q: &mut [i8], d: &mut [f32], offset: &mut [f32]) {
    for (((x, q), d), offset) in x.chunks_exact(QK).zip(q.chunks_exact_mut(QK)).zip(d).zip(offset) {
        let amax = f32::from_bits(x.iter().fold(0, |m, v| m.max(v.to_bits() & 0x7fff_ffff)));
        *d = amax / 127.0;
        let inv = if *d > 0.0 { 1.0 / *d } else { 0.0 };
        let mut sum = 0;
        for (q, &v) in q.iter_mut().zip(x) {
            let v = (round_ties_even(v * inv) as i32).clamp(-128, 127);
            *q = v as i8;
            sum += v;
        }
        *offset = (8 * sum) as f32;
    }
}

/// `x` rounded to the nearest integer, ties to even (as `lrintf`), for
/// |x| < 2^22: adding 1.5·2^23 leaves no fraction bits. Unlike
/// `f32::round_ties_even` it is no library call where SSE4.1 is not assumed.
fn round_ties_even(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0;
    (x + MAGIC) - MAGIC
}

/// Tokens computed together: their activations (at most 48 KB) stay in the
/// cache while every row of the weights passes.
const TILE: usize = 32;

/// Weight rows unpacked together (at most 12 KB of bytes), which stay in the
/// cache while a tile's tokens pass.
const RO: usize = 8;

/// `y[t][o] = bias[o] + Σ_i w[o][i]·a[t][i]` for every row t of `a`:
/// `w` is `nout` Q4_0 rows of `a.nin` weights. `nout` is a multiple of 8.
pub(crate) fn matmul(kernel: Kernel, w: &[u8], bias: &[f32], a: &Q8, y: &mut [f32]) {
    let (nin, nout) = (a.nin, bias.len());
    debug_assert_eq!(w.len(), nout * nin / QK * Q4_BLOCK_BYTES);
    debug_assert_eq!(y.len(), a.q.len() / nin * nout);
    debug_assert_eq!(nout % RO, 0);
    match kernel {
        Kernel::Portable => matmul_portable(w, bias, a, y),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Kernel::Avx2` is only chosen after detecting AVX2 and FMA.
        Kernel::Avx2 => unsafe { avx2::matmul(w, bias, a, y) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Kernel::AvxVnni` is only chosen after detecting AVX-VNNI too.
        Kernel::AvxVnni => unsafe { avx2::matmul_vnni(w, bias, a, y) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Kernel::Avx512Vnni` is only chosen after detecting AVX-512 VNNI and VL too.
        Kernel::Avx512Vnni => unsafe { avx2::matmul_vnni512(w, bias, a, y) },
    }
}

/// Unpacks `RO` rows of nibbles (0..=15, unsigned), row after row, for the
/// portable kernel, and their scales block by block (`dw[b * RO + r]`: the
/// rows' scales of one block side by side, as the vector kernels' too).
#[inline(always)]
fn expand_rows(w: &[u8], first: usize, nin: usize, wexp: &mut [u8], dw: &mut [f32]) {
    let nb = nin / QK;
    let rows = &w[first * nb * Q4_BLOCK_BYTES..(first + RO) * nb * Q4_BLOCK_BYTES];
    for (r, (row, out)) in rows.chunks_exact(nb * Q4_BLOCK_BYTES).zip(wexp.chunks_exact_mut(nin)).enumerate() {
        for (b, (block, out)) in row.chunks_exact(Q4_BLOCK_BYTES).zip(out.chunks_exact_mut(QK)).enumerate() {
            dw[b * RO + r] = block_scale(block);
            let (low, high) = out.split_at_mut(QK / 2);
            for ((&q, low), high) in block[2..].iter().zip(low).zip(high) {
                *low = q & 0x0f;
                *high = q >> 4;
            }
        }
    }
}

fn matmul_portable(w: &[u8], bias: &[f32], a: &Q8, y: &mut [f32]) {
    let (nin, nout) = (a.nin, bias.len());
    let nb = nin / QK;
    let mut wexp = vec![0u8; RO * nin];
    let mut dw = vec![0f32; RO * nb];
    for (tile, y) in y.chunks_mut(TILE * nout).enumerate() {
        for first in (0..nout).step_by(RO) {
            expand_rows(w, first, nin, &mut wexp, &mut dw);
            for (t, yt) in y.chunks_exact_mut(nout).enumerate() {
                let t = tile * TILE + t;
                let (aq, ad, off) = (&a.q[t * nin..(t + 1) * nin], &a.d[t * nb..], &a.offset[t * nb..]);
                for r in 0..RO {
                    let we = &wexp[r * nin..(r + 1) * nin];
                    let mut acc = 0.0f32;
                    for b in 0..nb {
                        let wb = &we[b * QK..(b + 1) * QK];
                        let ab = &aq[b * QK..(b + 1) * QK];
                        let isum: i32 = wb.iter().zip(ab).map(|(&w, &a)| w as i32 * a as i32).sum();
                        acc += dw[b * RO + r] * ad[b] * (isum as f32 - off[b]);
                    }
                    yt[first + r] = bias[first + r] + acc;
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Q4_BLOCK_BYTES, Q8, QK, RO, TILE, block_scale};
    use std::arch::x86_64::*;

    // A group's 8 rows are the 8 lanes of a vector.
    const _: () = assert!(RO == 8);

    /// How 32 weight bytes meet 32 activation bytes: 8 lanes, each adding
    /// the sum of 4 products to its own, and a block's running sums become
    /// 8 sums of 32 bits.
    trait Dot {
        /// Running sums a token keeps within a block, taking turns, so that
        /// one instruction need not wait for the one before: more hide a
        /// longer latency, fewer leave registers for the rest.
        const CHAINS: usize;

        /// # Safety
        /// Only inlined into a function compiled for the instructions used.
        unsafe fn dot_add(sums: __m256i, w: __m256i, a: __m256i) -> __m256i;

        /// The block's sums, from its `CHAINS` running sums (the rest are
        /// zero).
        ///
        /// # Safety
        /// As [`Dot::dot_add`].
        unsafe fn block_sum(sums: [__m256i; 4]) -> __m256i;
    }

    /// AVX2: products summed in pairs to 16 bits, and kept at 16 bits for
    /// the whole block, then summed in pairs to 32 once. A pair of a
    /// nibble (0..=15) by an activation (-127..=127) is at most 3,810, and a
    /// block's 16 pairs a lane at most 30,480: within 16 bits, and half the
    /// multiplications of widening every piece.
    struct Madd;

    impl Dot for Madd {
        // An addition of 16 bits waits a cycle: two chains, and no spills
        // (a tenth less time than four, on Zen 3).
        const CHAINS: usize = 2;

        #[inline(always)]
        unsafe fn dot_add(sums: __m256i, w: __m256i, a: __m256i) -> __m256i {
            // SAFETY: see the trait.
            unsafe { _mm256_add_epi16(sums, _mm256_maddubs_epi16(w, a)) }
        }

        #[inline(always)]
        unsafe fn block_sum([p0, p1, ..]: [__m256i; 4]) -> __m256i {
            // SAFETY: see the trait.
            unsafe { _mm256_madd_epi16(_mm256_add_epi16(p0, p1), _mm256_set1_epi16(1)) }
        }
    }

    /// The four running sums of 32 bits, added.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline(always)]
    unsafe fn add_four([p0, p1, p2, p3]: [__m256i; 4]) -> __m256i {
        // SAFETY: the caller's.
        unsafe { _mm256_add_epi32(_mm256_add_epi32(p0, p1), _mm256_add_epi32(p2, p3)) }
    }

    /// AVX-VNNI: the sums of 4 products to 32 bits in one instruction.
    struct Vnni;

    impl Dot for Vnni {
        const CHAINS: usize = 4;

        #[inline(always)]
        unsafe fn dot_add(sums: __m256i, w: __m256i, a: __m256i) -> __m256i {
            // SAFETY: see the trait.
            unsafe { _mm256_dpbusd_avx_epi32(sums, w, a) }
        }

        #[inline(always)]
        unsafe fn block_sum(sums: [__m256i; 4]) -> __m256i {
            // SAFETY: see the trait.
            unsafe { add_four(sums) }
        }
    }

    /// AVX-512 VNNI on 256-bit vectors: the same instruction as [`Vnni`].
    struct Vnni512;

    impl Dot for Vnni512 {
        const CHAINS: usize = 4;

        #[inline(always)]
        unsafe fn dot_add(sums: __m256i, w: __m256i, a: __m256i) -> __m256i {
            // SAFETY: see the trait.
            unsafe { _mm256_dpbusd_epi32(sums, w, a) }
        }

        #[inline(always)]
        unsafe fn block_sum(sums: [__m256i; 4]) -> __m256i {
            // SAFETY: see the trait.
            unsafe { add_four(sums) }
        }
    }

    /// [`super::quantize_blocks`] in vectors (as GGML's
    /// `quantize_row_q8_0`): the conversion rounds half to even, as the
    /// portable loop does, and no value needs clamping, the largest being
    /// 127 at most.
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn quantize_blocks(x: &[f32], q: &mut [i8], d: &mut [f32], offset: &mut [f32]) {
        let blocks = x.chunks_exact(QK).zip(q.chunks_exact_mut(QK)).zip(d).zip(offset);
        for (((x, q), d), offset) in blocks {
            // SAFETY: each block is 32 floats in and 32 bytes out.
            unsafe {
                let v: [__m256; 4] = std::array::from_fn(|i| _mm256_loadu_ps(x[i * 8..].as_ptr()));
                let magnitude = _mm256_set1_ps(f32::from_bits(0x7fff_ffff));
                let mut amax = _mm256_and_ps(v[0], magnitude);
                for v in &v[1..] {
                    amax = _mm256_max_ps(amax, _mm256_and_ps(*v, magnitude));
                }
                let half = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
                let half = _mm_max_ps(half, _mm_movehl_ps(half, half));
                let amax = _mm_cvtss_f32(_mm_max_ss(half, _mm_movehdup_ps(half)));
                *d = amax / 127.0;
                let inv = _mm256_set1_ps(if *d > 0.0 { 1.0 / *d } else { 0.0 });
                let i: [__m256i; 4] = std::array::from_fn(|k| _mm256_cvtps_epi32(_mm256_mul_ps(v[k], inv)));
                let sum = _mm256_add_epi32(_mm256_add_epi32(i[0], i[1]), _mm256_add_epi32(i[2], i[3]));
                let sum = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
                let sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0b01_00_11_10));
                let sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0b10_11_00_01));
                *offset = (8 * _mm_cvtsi128_si32(sum)) as f32;
                // The packs work within 128-bit lanes; the permute puts the
                // 32 bytes back in order.
                let packed = _mm256_packs_epi16(_mm256_packs_epi32(i[0], i[1]), _mm256_packs_epi32(i[2], i[3]));
                let ordered = _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
                _mm256_storeu_si256(q.as_mut_ptr().cast(), ordered);
            }
        }
    }

    /// See [`super::matmul`].
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn matmul(w: &[u8], bias: &[f32], a: &Q8, y: &mut [f32]) {
        // SAFETY: compiled for what `Madd` uses.
        unsafe { kernel::<Madd>(w, bias, a, y) }
    }

    /// See [`super::matmul`].
    ///
    /// # Safety
    /// The CPU must have AVX2, FMA and AVX-VNNI.
    #[target_feature(enable = "avx2,fma,avxvnni")]
    pub(super) unsafe fn matmul_vnni(w: &[u8], bias: &[f32], a: &Q8, y: &mut [f32]) {
        // SAFETY: compiled for what `Vnni` uses.
        unsafe { kernel::<Vnni>(w, bias, a, y) }
    }

    /// See [`super::matmul`].
    ///
    /// # Safety
    /// The CPU must have AVX2, FMA, AVX-512 VNNI and AVX-512 VL.
    #[target_feature(enable = "avx2,fma,avx512vnni,avx512vl")]
    pub(super) unsafe fn matmul_vnni512(w: &[u8], bias: &[f32], a: &Q8, y: &mut [f32]) {
        // SAFETY: compiled for what `Vnni512` uses.
        unsafe { kernel::<Vnni512>(w, bias, a, y) }
    }

    /// Bytes of one block of `RO` rows, unpacked.
    const BLOCK_ROWS: usize = RO * QK;

    /// See [`super::matmul`]. The 8 rows of a group are unpacked side by
    /// side (`expand_interleaved`), so that each lane of a sum is one row's:
    /// a block's 32 products for 8 rows take 8 dot-product instructions,
    /// each of 4 weights of every row against the same 4 activations, and
    /// the block's scales then apply to the 8 rows at once. Two tokens are
    /// taken a pass, loading the weights once for both.
    ///
    /// # Safety
    /// Only inlined into a function compiled for AVX2, FMA and what `D` uses.
    #[inline(always)]
    unsafe fn kernel<D: Dot>(w: &[u8], bias: &[f32], a: &Q8, y: &mut [f32]) {
        let (nin, nout) = (a.nin, bias.len());
        let mut wexp = vec![0u8; RO * nin];
        let mut dw = vec![0f32; RO * (nin / QK)];
        for (tile, y) in y.chunks_mut(TILE * nout).enumerate() {
            let tokens = y.len() / nout;
            for first in (0..nout).step_by(RO) {
                // SAFETY: as this function's.
                unsafe { expand_interleaved(w, first, nin, &mut wexp, &mut dw) };
                let group = Group { wexp: &wexp, dw: &dw, bias: &bias[first..first + RO], a };
                let mut t = 0;
                while t < tokens {
                    let token = tile * TILE + t;
                    let out = |n: usize| (t + n) * nout + first;
                    // SAFETY: as this function's.
                    unsafe {
                        if tokens - t >= 2 {
                            let [y0, y1] = group.times::<D, 2>(token);
                            _mm256_storeu_ps(y[out(0)..out(0) + RO].as_mut_ptr(), y0);
                            _mm256_storeu_ps(y[out(1)..out(1) + RO].as_mut_ptr(), y1);
                            t += 2;
                        } else {
                            let [y0] = group.times::<D, 1>(token);
                            _mm256_storeu_ps(y[out(0)..out(0) + RO].as_mut_ptr(), y0);
                            t += 1;
                        }
                    }
                }
            }
        }
    }

    /// Unpacks the `RO` rows from `first` for [`kernel`]: block by block,
    /// 8 groups of 32 bytes, group j holding weights 4j..4j+4 of row 0, then
    /// of row 1, and so on (an 8 by 8 transpose of 4-byte pieces). The
    /// scales as [`super::expand_rows`] lays them out.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline(always)]
    unsafe fn expand_interleaved(w: &[u8], first: usize, nin: usize, wexp: &mut [u8], dw: &mut [f32]) {
        let nb = nin / QK;
        let row_bytes = nb * Q4_BLOCK_BYTES;
        let rows = &w[first * row_bytes..(first + RO) * row_bytes];
        // SAFETY: every load is a block's 16 bytes of nibbles, every store
        // 32 bytes within the group's block.
        unsafe {
            let low = _mm_set1_epi8(0x0f);
            for (b, (dw, out)) in dw.chunks_exact_mut(RO).zip(wexp.chunks_exact_mut(BLOCK_ROWS)).enumerate() {
                // Closures and `array::from_fn` would not be compiled for
                // AVX2, nor inlined: plain loops here.
                let mut r = [_mm256_setzero_si256(); RO];
                for (row, (r, dw)) in r.iter_mut().zip(dw.iter_mut()).enumerate() {
                    let block = &rows[row * row_bytes + b * Q4_BLOCK_BYTES..][..Q4_BLOCK_BYTES];
                    *dw = block_scale(block);
                    let q = _mm_loadu_si128(block[2..].as_ptr().cast());
                    *r = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), low), _mm_and_si128(q, low));
                }
                let t0 = _mm256_unpacklo_epi32(r[0], r[1]);
                let t1 = _mm256_unpackhi_epi32(r[0], r[1]);
                let t2 = _mm256_unpacklo_epi32(r[2], r[3]);
                let t3 = _mm256_unpackhi_epi32(r[2], r[3]);
                let t4 = _mm256_unpacklo_epi32(r[4], r[5]);
                let t5 = _mm256_unpackhi_epi32(r[4], r[5]);
                let t6 = _mm256_unpacklo_epi32(r[6], r[7]);
                let t7 = _mm256_unpackhi_epi32(r[6], r[7]);
                // Pieces j and j + 4 of rows 0-3 (u0-u3), and of rows 4-7 (u4-u7).
                let u = [
                    _mm256_unpacklo_epi64(t0, t2),
                    _mm256_unpackhi_epi64(t0, t2),
                    _mm256_unpacklo_epi64(t1, t3),
                    _mm256_unpackhi_epi64(t1, t3),
                    _mm256_unpacklo_epi64(t4, t6),
                    _mm256_unpackhi_epi64(t4, t6),
                    _mm256_unpacklo_epi64(t5, t7),
                    _mm256_unpackhi_epi64(t5, t7),
                ];
                for j in 0..4 {
                    let lower = _mm256_permute2x128_si256(u[j], u[j + 4], 0x20);
                    let upper = _mm256_permute2x128_si256(u[j], u[j + 4], 0x31);
                    _mm256_storeu_si256(out[j * 32..].as_mut_ptr().cast(), lower);
                    _mm256_storeu_si256(out[(j + 4) * 32..].as_mut_ptr().cast(), upper);
                }
            }
        }
    }

    /// A group of `RO` rows, unpacked by [`expand_interleaved`], and the
    /// activations they meet.
    struct Group<'a> {
        wexp: &'a [u8],
        dw: &'a [f32],
        bias: &'a [f32],
        a: &'a Q8,
    }

    impl Group<'_> {
        /// The group's 8 outputs for each of the `N` tokens from `token` on.
        ///
        /// # Safety
        /// As [`kernel`].
        #[inline(always)]
        unsafe fn times<D: Dot, const N: usize>(&self, token: usize) -> [__m256; N] {
            let (nin, a) = (self.a.nin, self.a);
            let nb = nin / QK;
            // SAFETY: the loads stay within the slices they are taken from;
            // the instructions are the caller's to have.
            unsafe {
                let mut sums = [_mm256_setzero_ps(); N];
                let mut corr = [_mm256_setzero_ps(); N];
                for (b, (w, dw)) in self.wexp.chunks_exact(BLOCK_ROWS).zip(self.dw.chunks_exact(RO)).enumerate() {
                    // Each token's 32 activations of the block.
                    let mut act = [std::ptr::null::<u8>(); N];
                    for (n, act) in act.iter_mut().enumerate() {
                        *act = a.q[(token + n) * nin + b * QK..][..QK].as_ptr().cast();
                    }
                    // `D::CHAINS` sums a token, taking turns (those past
                    // them stay zero, and the compiler drops them).
                    let mut partial = [[_mm256_setzero_si256(); 4]; N];
                    for j in 0..QK / 4 {
                        // Piece j of the 8 rows: 32 bytes within the block's
                        // 256; 4 bytes within each token's 32 activations.
                        let wv = _mm256_loadu_si256(w.as_ptr().add(j * 32).cast());
                        for (partial, act) in partial.iter_mut().zip(act) {
                            let av = _mm256_set1_epi32(act.add(j * 4).cast::<i32>().read_unaligned());
                            partial[j % D::CHAINS] = D::dot_add(partial[j % D::CHAINS], wv, av);
                        }
                    }
                    let dw = _mm256_loadu_ps(dw.as_ptr());
                    for n in 0..N {
                        let dot = D::block_sum(partial[n]);
                        let at = (token + n) * nb + b;
                        let scale = _mm256_mul_ps(dw, _mm256_set1_ps(a.d[at]));
                        sums[n] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, sums[n]);
                        corr[n] = _mm256_fmadd_ps(scale, _mm256_set1_ps(a.offset[at]), corr[n]);
                    }
                }
                let bias = _mm256_loadu_ps(self.bias.as_ptr());
                for (sum, corr) in sums.iter_mut().zip(corr) {
                    *sum = _mm256_sub_ps(_mm256_add_ps(*sum, bias), corr);
                }
                sums
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model's products all have an even number of blocks a row; a
    /// user's model may not.
    #[test]
    fn every_kernel_multiplies_as_the_portable_one_with_an_odd_number_of_blocks() {
        let (nin, nout, tokens) = (3 * QK, 16, 5);
        let weights: Vec<f32> = (0..nin * nout).map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0).collect();
        let w: Vec<u8> = weights.chunks(nin).flat_map(quantize_row).collect();
        let bias: Vec<f32> = (0..nout).map(|o| o as f32 / 10.0).collect();
        let x: Vec<f32> = (0..nin * tokens).map(|i| ((i * 53 % 89) as f32 - 44.0) / 44.0).collect();
        let product = |kernel| {
            let mut a = Q8::default();
            a.quantize(kernel, &x, nin);
            let mut y = vec![0f32; tokens * nout];
            matmul(kernel, &w, &bias, &a, &mut y);
            y
        };
        let portable = product(Kernel::Portable);
        for kernel in Kernel::available() {
            let y = product(kernel);
            for (got, want) in y.iter().zip(&portable) {
                assert!((got - want).abs() < 1e-3 * want.abs().max(1.0), "{kernel:?}: {got} against {want}");
            }
        }
    }

    #[test]
    fn every_kernel_quantizes_activations_as_the_portable_one() {
        // Halves (ties), negatives, a zero block and values near the extremes.
        let x: Vec<f32> =
            (0..4 * QK).map(|i| if i < QK { 0.0 } else { ((i * 71 % 255) as f32 - 127.0) / 2.0 }).collect();
        let quantized = |kernel| {
            let mut a = Q8::default();
            a.quantize(kernel, &x, 2 * QK);
            (a.q, a.d, a.offset)
        };
        let portable = quantized(Kernel::Portable);
        for kernel in Kernel::available() {
            assert_eq!(quantized(kernel), portable, "{kernel:?}");
        }
    }

    #[test]
    fn a_block_scale_is_its_f16_exactly_for_every_finite_value() {
        for bits in 0..=u16::MAX {
            let expected = f16::from_bits(bits);
            if expected.is_finite() {
                let [lo, hi] = bits.to_le_bytes();
                assert_eq!(block_scale(&[lo, hi]).to_bits(), expected.to_f32().to_bits(), "{bits:#06x}");
            }
        }
    }
}
