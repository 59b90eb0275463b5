//! A vector as the store keeps it: a unit vector in one signed byte per
//! dimension and one scale, a quarter of its f32 size. Ranking by the dot
//! product with a query's f32 vector loses next to nothing: the error per
//! dimension is under half a step of 1/127 of the largest component.

use super::quant::{Kernel, multiversion};

/// Bytes before the dimensions: the scale, an f32.
const HEADER: usize = 4;

/// The step that puts `vector`'s largest component at `steps` steps (1 for
/// a zero vector), as a stored vector and a query both scale their integers.
fn step(vector: &[f32], steps: f32) -> f32 {
    let largest = vector.iter().fold(0.0_f32, |m, x| m.max(x.abs()));
    if largest > 0.0 { largest / steps } else { 1.0 }
}

/// `vector` as stored.
pub fn pack(vector: &[f32]) -> Vec<u8> {
    let scale = step(vector, 127.0);
    let mut packed = Vec::with_capacity(HEADER + vector.len());
    packed.extend_from_slice(&scale.to_le_bytes());
    packed.extend(vector.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8 as u8));
    packed
}

/// A query's unit vector, made ready to meet many stored ones: its
/// dimensions as 16-bit integers, so that each comparison is an integer
/// dot product, which the compiler vectorizes (a float sum must keep its
/// order, one add after another: 100k stored vectors then take tens of
/// milliseconds). The 16 bits lose nothing the stored 8 have not lost.
pub struct Query {
    dims: Vec<i16>,
    scale: f32,
    kernel: Kernel,
}

impl Query {
    pub fn new(vector: &[f32]) -> Query {
        let scale = step(vector, f32::from(i16::MAX));
        Query { dims: vector.iter().map(|x| (x / scale).round() as i16).collect(), scale, kernel: Kernel::detect() }
    }

    /// The cosine similarity with a stored unit vector, or `None` when the
    /// stored one has another number of dimensions.
    pub fn similarity(&self, packed: &[u8]) -> Option<f32> {
        let (scale, dims) = packed.split_first_chunk::<HEADER>()?;
        if dims.len() != self.dims.len() {
            return None;
        }
        let dot = dot(self.kernel, &self.dims, dims);
        Some(dot as f32 * self.scale * f32::from_le_bytes(*scale))
    }
}

multiversion! {
    /// The integer dot product of a query's dimensions and a stored
    /// vector's. Every stored vector is compared on each search (150k of
    /// them at 1M rows): AVX2 widens 16 bytes at a time and multiplies and
    /// pairs their sums in one instruction, about three times the baseline
    /// CPU's speed here.
    fn dot(query: &[i16], stored: &[u8]) -> i32 {
        query.iter().zip(stored).map(|(&q, &d)| i32::from(q) * i32::from(d as i8)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: Vec<f32>) -> Vec<f32> {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    }

    #[test]
    fn a_packed_vector_keeps_its_similarities() {
        let a = unit((0..384).map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0).collect());
        let b = unit((0..384).map(|i| ((i * 53 % 89) as f32 - 44.0) / 3.0).collect());
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert_eq!(pack(&a).len(), 4 + 384);
        let query = Query::new(&a);
        assert!((query.similarity(&pack(&a)).unwrap() - 1.0).abs() < 0.01);
        assert!((query.similarity(&pack(&b)).unwrap() - exact).abs() < 0.01);
    }

    #[test]
    fn every_kernel_sums_the_same_dot_product() {
        let query: Vec<i16> =
            (0..384).map(|i| if i % 3 == 0 { i16::MAX } else { (i * 7919 % 65_535) as i16 }).collect();
        let stored: Vec<u8> =
            (0..384).map(|i| if i % 5 == 0 { (-127_i8) as u8 } else { (i * 31 % 251) as u8 }).collect();
        let portable = dot(Kernel::Portable, &query, &stored);
        for kernel in Kernel::available() {
            assert_eq!(dot(kernel, &query, &stored), portable, "{kernel:?}");
        }
    }

    #[test]
    fn another_size_compares_with_nothing() {
        let a = Query::new(&unit(vec![1.0; 8]));
        assert_eq!(a.similarity(&pack(&unit(vec![1.0; 4]))), None);
        assert_eq!(a.similarity(&[1, 2]), None);
        assert_eq!(Query::new(&[]).similarity(&[]), None);
    }
}
