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

/// How far below the nearest row a row may be and still count as near.
/// The cosines of one query's rows lie close together: on the recall
/// benchmark's tuning half, a relevant row among the 30 nearest was at most
/// 0.024 below the nearest; rows further down are the many that merely
/// share a language or a topic (a Chinese question sits at about 0.81
/// from every English row).
pub const WINDOW: f32 = 0.04;

/// The rows (at most `limit`) whose vectors are nearest `text`, nearest
/// first, within `FLOOR` and `WINDOW`: the rows search adds by meaning.
/// None when the store has no vectors (until `trae-mem embed` has run,
/// search finds by words alone) or their model cannot be loaded.
pub fn nearest(store: &Store, text: &str, filters: &Filters, tables: &[Table], limit: usize) -> Result<Vec<Near>> {
    let mut near = by_similarity(store, text, filters, tables, FLOOR)?;
    let window = near.first().map_or(FLOOR, |nearest| nearest.similarity - WINDOW);
    near.retain(|n| n.similarity >= window);
    near.truncate(limit);
    Ok(near)
}

/// The `limit` rows nearest `text`, however far: the model alone, with
/// none of search's bounds (the recall benchmark's dense baseline).
pub fn nearest_unbounded(
    store: &Store,
    text: &str,
    filters: &Filters,
    tables: &[Table],
    limit: usize,
) -> Result<Vec<Near>> {
    let mut near = by_similarity(store, text, filters, tables, f32::NEG_INFINITY)?;
    near.truncate(limit);
    Ok(near)
}

/// Every row with a vector at least `floor` near `text`, nearest first.
fn by_similarity(store: &Store, text: &str, filters: &Filters, tables: &[Table], floor: f32) -> Result<Vec<Near>> {
    let Some(embedder) = embed::of_store(store)? else { return Ok(Vec::new()) };
    let query = embedder.embed_query(text);
    let mut near: Vec<Near> = Vec::new();
    for &table in tables {
        store.each_vector(table, filters, |id, packed| {
            if let Some(similarity) = stored::similarity(&query, packed)
                && similarity >= floor
            {
                near.push(Near { table, id, similarity });
            }
        })?;
    }
    near.sort_by(|a, b| b.similarity.total_cmp(&a.similarity).then(b.id.cmp(&a.id)));
    Ok(near)
}
