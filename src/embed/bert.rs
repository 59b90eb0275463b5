//! The encoder: BERT (XLM-RoBERTa's shape, positions from 0), as `e5.c`'s
//! `forward_batch`. Several sequences run as one batch, their tokens side by
//! side, so each weight matrix is read once for all of them; attention stays
//! within each sequence. The result is each sequence's mean over its tokens.

use anyhow::{Result, ensure};

use super::file::{DTYPE_F32, DTYPE_Q4_0, ModelFile, Q4_BLOCK_BYTES, QK, Shape, Span, f32_at, f32s};
use super::quant::{Kernel, Q8, dequantize_row, matmul, multiversion};

struct Layer {
    q: Span,
    k: Span,
    v: Span,
    /// Attention output projection.
    ao: Span,
    /// Feed-forward in and out.
    fi: Span,
    fo: Span,
    q_bias: Vec<f32>,
    k_bias: Vec<f32>,
    v_bias: Vec<f32>,
    ao_bias: Vec<f32>,
    fi_bias: Vec<f32>,
    fo_bias: Vec<f32>,
    attn_norm: Norm,
    out_norm: Norm,
}

struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

pub(crate) struct Encoder {
    shape: Shape,
    word: Span,
    /// Position embeddings, read in place (not copied at load).
    pos: Span,
    /// The embedding of token type 0 (the only type used).
    token_type: Vec<f32>,
    emb_norm: Norm,
    layers: Vec<Layer>,
}

impl Encoder {
    pub fn load(bytes: &[u8], file: &ModelFile) -> Result<Encoder> {
        let shape = file.shape;
        let Shape { hidden: h, ff, .. } = shape;
        ensure!(file.vocab.pieces <= shape.rows, "{} pieces but {} embedding rows", file.vocab.pieces, shape.rows);
        let f32v = |name: &str, n: usize| file.tensor(name, DTYPE_F32, n).map(|s| f32s(bytes, s));
        let q4 = |name: &str, n: usize| file.tensor(name, DTYPE_Q4_0, n);
        let norm = |prefix: &str| -> Result<Norm> {
            Ok(Norm { weight: f32v(&format!("{prefix}.w"), h)?, bias: f32v(&format!("{prefix}.b"), h)? })
        };
        let word = q4("emb.word", shape.rows * h)?;
        let pos = file.tensor("emb.pos", DTYPE_F32, shape.max_positions * h)?;
        let mut token_type = f32v("emb.type", shape.type_vocab * h)?;
        token_type.truncate(h);
        let emb_norm = norm("emb.ln")?;
        let mut layers = Vec::with_capacity(shape.layers);
        for l in 0..shape.layers {
            let n = |s: &str| format!("l{l}.{s}");
            layers.push(Layer {
                q: q4(&n("q.w"), h * h)?,
                k: q4(&n("k.w"), h * h)?,
                v: q4(&n("v.w"), h * h)?,
                ao: q4(&n("ao.w"), h * h)?,
                fi: q4(&n("fi.w"), ff * h)?,
                fo: q4(&n("fo.w"), h * ff)?,
                q_bias: f32v(&n("q.b"), h)?,
                k_bias: f32v(&n("k.b"), h)?,
                v_bias: f32v(&n("v.b"), h)?,
                ao_bias: f32v(&n("ao.b"), h)?,
                fi_bias: f32v(&n("fi.b"), ff)?,
                fo_bias: f32v(&n("fo.b"), h)?,
                attn_norm: norm(&n("aln"))?,
                out_norm: norm(&n("oln"))?,
            });
        }
        Ok(Encoder { shape, word, pos, token_type, emb_norm, layers })
    }

    pub fn hidden(&self) -> usize {
        self.shape.hidden
    }

    pub fn max_positions(&self) -> usize {
        self.shape.max_positions
    }

    /// The mean of the last hidden states of each sequence (ids with their
    /// `<s>` and `</s>`, each at most `max_positions` long), not normalized.
    pub fn forward(&self, bytes: &[u8], kernel: Kernel, seqs: &[Vec<u32>]) -> Vec<Vec<f32>> {
        let Shape { hidden: h, ff, heads, .. } = self.shape;
        let total: usize = seqs.iter().map(Vec::len).sum();
        let mut bounds = Vec::with_capacity(seqs.len() + 1);
        bounds.push(0);
        for s in seqs {
            debug_assert!(s.len() <= self.shape.max_positions);
            bounds.push(bounds.last().unwrap() + s.len());
        }

        // Embeddings: word + position + type 0, then the layer norm.
        let mut x = vec![0f32; total * h];
        let row_bytes = h / QK * Q4_BLOCK_BYTES;
        let word = self.word.of(bytes);
        let mut rows = x.chunks_exact_mut(h);
        for s in seqs {
            for (p, &id) in s.iter().enumerate() {
                let r = rows.next().unwrap();
                dequantize_row(&word[id as usize * row_bytes..][..row_bytes], r);
                for (i, (v, t)) in r.iter_mut().zip(&self.token_type).enumerate() {
                    *v += f32_at(bytes, self.pos, p * h + i) + t;
                }
            }
        }
        layer_norm(&mut x, None, &self.emb_norm, h, self.shape.eps);

        let (mut q, mut k, mut v, mut ctx, mut o) = (
            vec![0f32; total * h],
            vec![0f32; total * h],
            vec![0f32; total * h],
            vec![0f32; total * h],
            vec![0f32; total * h],
        );
        let mut mid = vec![0f32; total * ff];
        let mut acts = Q8::default();
        let mut scratch = Vec::new();
        for l in &self.layers {
            acts.quantize(kernel, &x, h);
            matmul(kernel, l.q.of(bytes), &l.q_bias, &acts, &mut q);
            matmul(kernel, l.k.of(bytes), &l.k_bias, &acts, &mut k);
            matmul(kernel, l.v.of(bytes), &l.v_bias, &acts, &mut v);
            for w in bounds.windows(2) {
                attention(kernel, &q, &k, &v, &mut ctx, w[0]..w[1], h, heads, &mut scratch);
            }
            acts.quantize(kernel, &ctx, h);
            matmul(kernel, l.ao.of(bytes), &l.ao_bias, &acts, &mut o);
            layer_norm(&mut x, Some(&o), &l.attn_norm, h, self.shape.eps);

            acts.quantize(kernel, &x, h);
            matmul(kernel, l.fi.of(bytes), &l.fi_bias, &acts, &mut mid);
            gelu(kernel, &mut mid);
            acts.quantize(kernel, &mid, ff);
            matmul(kernel, l.fo.of(bytes), &l.fo_bias, &acts, &mut o);
            layer_norm(&mut x, Some(&o), &l.out_norm, h, self.shape.eps);
        }

        bounds
            .windows(2)
            .map(|w| {
                let mut mean = vec![0f32; h];
                for r in x[w[0] * h..w[1] * h].chunks_exact(h) {
                    mean.iter_mut().zip(r).for_each(|(m, v)| *m += v);
                }
                let inv = 1.0 / (w[1] - w[0]) as f32;
                mean.iter_mut().for_each(|m| *m *= inv);
                mean
            })
            .collect()
    }
}

/// `x = LayerNorm(x + y)` row by row (`y` absent: `LayerNorm(x)`).
fn layer_norm(x: &mut [f32], y: Option<&[f32]>, norm: &Norm, h: usize, eps: f32) {
    for (t, r) in x.chunks_exact_mut(h).enumerate() {
        if let Some(y) = y {
            r.iter_mut().zip(&y[t * h..(t + 1) * h]).for_each(|(a, b)| *a += b);
        }
        let mean = r.iter().sum::<f32>() / h as f32;
        let var = r.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, w), b) in r.iter_mut().zip(&norm.weight).zip(&norm.bias) {
            *v = (*v - mean) * inv * w + b;
        }
    }
}

multiversion! {
    /// GELU, exact form (with erf), in place.
    fn gelu(x: &mut [f32]) {
        for v in x {
            *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
        }
    }
}

multiversion! {
    /// Scaled dot-product attention of the tokens `seq` among themselves,
    /// head by head (rows of `h` values, heads of a multiple of 32). Sums
    /// run 32 lanes wide, four independent vectors in registers: `scratch`
    /// holds one head's keys transposed, so a query meets 32 keys at a time.
    fn attention(
        q: &[f32],
        k: &[f32],
        v: &[f32],
        ctx: &mut [f32],
        seq: std::ops::Range<usize>,
        h: usize,
        heads: usize,
        scratch: &mut Vec<f32>
    ) {
        let (n, hd) = (seq.len(), h / heads);
        let nl = n.div_ceil(L) * L;
        let scale = 1.0 / (hd as f32).sqrt();
        scratch.clear();
        scratch.resize(hd * nl + nl, 0.0);
        let (keys, scores) = scratch.split_at_mut(hd * nl);
        for head in 0..heads {
            let at = |t: usize| (seq.start + t) * h + head * hd;
            for s in 0..n {
                for (e, &kv) in k[at(s)..at(s) + hd].iter().enumerate() {
                    keys[e * nl + s] = kv;
                }
            }
            for t in 0..n {
                let qh = &q[at(t)..at(t) + hd];
                for (c, out) in scores.chunks_exact_mut(L).enumerate() {
                    let mut acc = [0f32; L];
                    for (e, &qv) in qh.iter().enumerate() {
                        let kv = &keys[e * nl + c * L..e * nl + (c + 1) * L];
                        for i in 0..L {
                            acc[i] += qv * kv[i];
                        }
                    }
                    out.copy_from_slice(&acc);
                }
                let scores = &mut scores[..n];
                let max = scores.iter().fold(f32::NEG_INFINITY, |m, &x| if x > m { x } else { m });
                for sc in scores.iter_mut() {
                    *sc = exp((*sc - max) * scale);
                }
                let inv = 1.0 / sum(scores);
                let out = &mut ctx[at(t)..at(t) + hd];
                for (c, out) in out.chunks_exact_mut(L).enumerate() {
                    let mut acc = [0f32; L];
                    for (s, &p) in scores.iter().enumerate() {
                        let vv = &v[at(s) + c * L..at(s) + (c + 1) * L];
                        for i in 0..L {
                            acc[i] += p * vv[i];
                        }
                    }
                    for i in 0..L {
                        out[i] = acc[i] * inv;
                    }
                }
            }
        }
    }
}

/// Lanes of attention's sums: 4 vectors of 8, independent chains of adds.
const L: usize = 32;

/// A sum in 8 lanes (which vectorizes; a plain sum is one long chain).
#[inline(always)]
fn sum(x: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let chunks = x.chunks_exact(8);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for i in 0..8 {
            lanes[i] += c[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// e^x for x ≤ 0 (down to −87; below, e^−87), within 2 ulp: Cephes' `expf`
/// without branches or integer casts, so that a loop of it vectorizes.
#[inline(always)]
fn exp(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5·2^23: adding it rounds to an integer
    let x = if x > -87.0 { x } else { -87.0 };
    // x = k·ln 2 + r, |r| ≤ ln 2 / 2.
    let k = (x * std::f32::consts::LOG2_E + MAGIC) - MAGIC;
    let r = x - k * 0.693_359_4 - k * -2.121_944_4e-4;
    let mut p = 1.987_569_1e-4;
    for c in [1.398_199_9e-3, 8.333_452e-3, 4.166_579_6e-2, 0.166_666_65, 0.5] {
        p = p * r + c;
    }
    let e = p * r * r + r + 1.0;
    // 2^k: k + 127 (1..=127) sits in the low bits of k + 127 + 2^23.
    let biased = (k + (127.0 + 8_388_608.0)).to_bits() & 0xff;
    e * f32::from_bits(biased << 23)
}

/// erf(x) within 1.5e-7 (Abramowitz and Stegun 7.1.26), without branches.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let mut p = 1.061_405_4;
    for c in [-1.453_152_1, 1.421_413_8, -0.284_496_72, 0.254_829_6] {
        p = p * t + c;
    }
    let y = 1.0 - p * t * exp(-a * a);
    if x < 0.0 { -y } else { y }
}
