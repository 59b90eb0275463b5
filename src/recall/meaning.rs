//! Candidates by meaning: the rows whose vectors lie nearest the query's,
//! from the embedding model inside the binary (`embed`). Words find what
//! was said in the query's words; this finds what was said in others
//! ("slow" for "latency", 崩溃 for "crash").

use anyhow::Result;

use crate::embed::{self, stored};
use crate::store::{Filters, Store, Table};

/// A row near the query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Near {
    pub table: Table,
    pub id: i64,
    /// Cosine similarity, from -1 to 1.
    pub similarity: f32,
}

/// Below this similarity a row is not near, however few rows there are:
/// multilingual-e5's cosines are compressed, with unrelated texts of one
/// language at about 0.70 to 0.80, paraphrases above, and a Chinese
/// question about an English answer just above. (0.78 and 0.82 gave the
/// same recall on the benchmark's tuning half.)
pub const FLOOR: f32 = 0.80;

/// The rows (at most `limit`) whose vectors are nearest `text`, nearest
/// first. None when the store has no vectors (until `trae-mem embed` has
/// run, search finds by words alone) or their model cannot be loaded.
pub fn nearest(store: &Store, text: &str, filters: &Filters, tables: &[Table], limit: usize) -> Result<Vec<Near>> {
    let Some(embedder) = embed::of_store(store)? else { return Ok(Vec::new()) };
    let query = embedder.embed_query(text);
    let mut near: Vec<Near> = Vec::new();
    for &table in tables {
        store.each_vector(table, filters, |id, packed| {
            if let Some(similarity) = stored::similarity(&query, packed)
                && similarity >= FLOOR
            {
                near.push(Near { table, id, similarity });
            }
        })?;
    }
    near.sort_by(|a, b| b.similarity.total_cmp(&a.similarity).then(b.id.cmp(&a.id)));
    near.truncate(limit);
    Ok(near)
}
