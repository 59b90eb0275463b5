//! Candidates by meaning: the rows whose vectors lie nearest the query's,
//! from the embedding model inside the binary (`embed`). Words find what
//! was said in the query's words; this finds what was said in others
//! ("slow" for "latency", 崩溃 for "crash").

use anyhow::Result;
use rustc_hash::FxHashMap;

use crate::embed::{self, Embedder, Query};
use crate::store::{Filters, Store, Table, WAITING_COUNTED_UP_TO};

/// What search's readers are told while `waiting` memories have no
/// vector yet (an import, a forget's rewrite, before the background embed
/// reached them): those are found by their words alone until then.
pub fn waiting_line(waiting: u64) -> Option<String> {
    let (memories, wait, them) = match waiting {
        0 => return None,
        1 => ("1 memory".to_owned(), "waits", "it"),
        n if n >= WAITING_COUNTED_UP_TO => (format!("{n} or more memories"), "wait", "them"),
        n => (format!("{n} memories"), "wait", "them"),
    };
    Some(format!(
        "{memories} {wait} for a vector, and search finds {them} by words alone until then: `trae-mem embed` gives {them} one now"
    ))
}

/// A row near the query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Near {
    pub table: Table,
    pub id: i64,
    /// Cosine similarity, from -1 to 1.
    pub similarity: f32,
    /// How many standard deviations it stands above the rows compared.
    pub stands: f32,
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

/// Which rows count as near.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bounds {
    /// Within `FLOOR` and `WINDOW`: the rows search adds by meaning.
    Search,
    /// However far: the model alone (the recall benchmark's dense baseline).
    None,
}

/// The rows nearest a query, sought on a thread of its own: the encoder
/// keeps a core busy for about 5 ms and the stored vectors take a few
/// more to read (5 ms for 15,000), while the words' lookups and the reading
/// of their candidates keep this thread busy, so a search waits for the
/// longer of the two, not their sum.
pub struct Nearest(Beside<Vec<Near>>);

impl Nearest {
    /// Begins seeking the rows (at most `limit`) nearest `text` in meaning,
    /// by the model the store's vectors came from: none when the store has
    /// no vectors (until `trae-mem embed` has run, search finds by words
    /// alone) or their model cannot be loaded.
    pub fn begin(
        store: &Store,
        text: &str,
        filters: &Filters,
        tables: &[Table],
        limit: usize,
        bounds: Bounds,
    ) -> Result<Nearest> {
        let Some(embedder) = embed::of_store(store)? else { return Ok(Nearest::none()) };
        let (text, filters, tables) = (text.to_owned(), filters.clone(), tables.to_vec());
        Ok(Nearest(Beside::begin(store, move |store| {
            nearest_rows(store, embedder, &text, &filters, &tables, limit, bounds)
        })))
    }

    /// Nothing sought: search goes by words alone.
    pub fn none() -> Nearest {
        Nearest(Beside(None))
    }

    /// The rows sought, nearest first.
    pub fn wait(self, store: &Store) -> Result<Vec<Near>> {
        self.0.wait(store)
    }
}

fn nearest_rows(
    store: &Store,
    embedder: &Embedder,
    text: &str,
    filters: &Filters,
    tables: &[Table],
    limit: usize,
    bounds: Bounds,
) -> Result<Vec<Near>> {
    let query = Query::new(&embedder.embed_query(text));
    let floor = if bounds == Bounds::Search { FLOOR } else { f32::NEG_INFINITY };
    let mut near: Vec<Near> = Vec::new();
    let mut spread = Spread::default();
    for &table in tables {
        store.each_vector(table, filters, |id, packed| {
            if let Some(similarity) = query.similarity(packed) {
                spread.add(similarity);
                if similarity >= floor {
                    near.push(Near { table, id, similarity, stands: 0.0 });
                }
            }
        })?;
    }
    // With too few rows for a spread, no row can be told apart from the
    // rest, and each near one counts.
    let spread_known = spread.count >= SPREAD_ROWS;
    near.iter_mut().for_each(|n| n.stands = if spread_known { spread.stands(n.similarity) } else { f32::INFINITY });
    near.sort_by(|a, b| b.similarity.total_cmp(&a.similarity).then(b.id.cmp(&a.id)));
    if bounds == Bounds::Search {
        let window = near.first().map_or(FLOOR, |nearest| nearest.similarity - WINDOW);
        near.retain(|n| n.similarity >= window);
    }
    near.truncate(limit);
    Ok(near)
}

/// Fewer rows than this compared have no spread to stand out from.
const SPREAD_ROWS: f64 = 20.0;

/// The mean and spread of similarities, added one at a time (Welford's way).
#[derive(Default)]
pub(super) struct Spread {
    count: f64,
    mean: f64,
    squares: f64,
}

impl Spread {
    pub(super) fn add(&mut self, x: f32) {
        self.count += 1.0;
        let delta = f64::from(x) - self.mean;
        self.mean += delta / self.count;
        self.squares += delta * (f64::from(x) - self.mean);
    }

    /// How many standard deviations `x` stands above the mean.
    pub(super) fn stands(&self, x: f32) -> f32 {
        let deviation = (self.squares / self.count).sqrt().max(1e-3);
        ((f64::from(x) - self.mean) / deviation) as f32
    }
}

/// A prompt's vector is made from its first this many tokens: what a prompt
/// is about comes first, and the encoder's time grows with its tokens
/// (about half a millisecond each on one core), on a hook the agent waits for.
pub const PROMPT_TOKENS: usize = 64;

/// A session of the project, by the part of it nearest the query.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionNear {
    pub session_id: String,
    /// The cosine similarity of its nearest part (a prompt, an answer, an
    /// error, a decision, a learning, its brief summary).
    pub similarity: f32,
}

/// The sessions of a project nearest a query, each by its best part. The
/// query's vector is made on a thread of its own while the caller goes on,
/// and reads the project's vectors when it waits: on a hook the agent waits
/// for, the two take about as long, and one no longer follows the other.
pub struct NearSessions(Option<Sought>);

struct Sought {
    query: Embedding,
    project: String,
    exclude: Option<String>,
}

/// A query's vector: being made on a thread, or to be made when waited for
/// (when no thread could be had).
enum Embedding {
    Thread(std::thread::JoinHandle<Vec<f32>>),
    Here(&'static Embedder, String),
}

impl NearSessions {
    /// Begins ranking `project`'s sessions, but `exclude`, by their part
    /// nearest `text`: none when the store has no vectors.
    pub fn begin(store: &Store, text: &str, project: &str, exclude: Option<&str>) -> Result<NearSessions> {
        let Some(embedder) = embed::of_store(store)? else { return Ok(NearSessions::none()) };
        let owned = text.to_owned();
        let thread = std::thread::Builder::new()
            .name("meaning".into())
            .spawn(move || embedder.embed_query_within(&owned, PROMPT_TOKENS));
        let query = match thread {
            Ok(handle) => Embedding::Thread(handle),
            Err(_) => Embedding::Here(embedder, text.to_owned()),
        };
        Ok(NearSessions(Some(Sought { query, project: project.to_owned(), exclude: exclude.map(str::to_owned) })))
    }

    /// Nothing sought: words alone decide.
    pub fn none() -> NearSessions {
        NearSessions(None)
    }

    /// Whether anything is sought: the store has vectors and a model.
    pub fn sought(&self) -> bool {
        self.0.is_some()
    }

    /// The sessions, nearest first.
    pub fn wait(self, store: &Store) -> Result<Vec<SessionNear>> {
        let Some(Sought { query, project, exclude }) = self.0 else { return Ok(Vec::new()) };
        let mut parts: Vec<(String, Vec<u8>)> = Vec::new();
        store.each_session_vector(&project, exclude.as_deref(), |session, packed| {
            parts.push((session.to_owned(), packed.to_vec()));
        })?;
        let query = match query {
            // A panic there was printed; the caller goes on by words alone.
            Embedding::Thread(handle) => match handle.join() {
                Ok(vector) => vector,
                Err(_) => return Ok(Vec::new()),
            },
            Embedding::Here(embedder, text) => embedder.embed_query_within(&text, PROMPT_TOKENS),
        };
        let query = Query::new(&query);
        let mut best: FxHashMap<String, f32> = FxHashMap::default();
        for (session, packed) in parts {
            if let Some(similarity) = query.similarity(&packed) {
                let b = best.entry(session).or_insert(similarity);
                *b = b.max(similarity);
            }
        }
        let mut sessions: Vec<SessionNear> =
            best.into_iter().map(|(session_id, similarity)| SessionNear { session_id, similarity }).collect();
        sessions.sort_by(|a, b| b.similarity.total_cmp(&a.similarity).then(a.session_id.cmp(&b.session_id)));
        Ok(sessions)
    }
}

/// Reading work begun on a thread of its own, through a connection of its
/// own, while the caller goes on; or, when no thread or connection can be
/// had, done when it is waited for.
struct Beside<T>(Option<Pending<T>>);

type Job<T> = std::sync::Arc<dyn Fn(&Store) -> Result<T> + Send + Sync>;

enum Pending<T> {
    Thread(std::thread::JoinHandle<Result<T>>),
    Here(Job<T>),
}

impl<T: Send + 'static> Beside<T> {
    fn begin(store: &Store, job: impl Fn(&Store) -> Result<T> + Send + Sync + 'static) -> Beside<T> {
        let job: Job<T> = std::sync::Arc::new(job);
        let Ok(beside) = store.read_only() else { return Beside(Some(Pending::Here(job))) };
        let handed = job.clone();
        let thread = std::thread::Builder::new().name("meaning".into()).spawn(move || handed(&beside));
        Beside(Some(match thread {
            Ok(handle) => Pending::Thread(handle),
            Err(_) => Pending::Here(job),
        }))
    }
}

impl<T: Default> Beside<T> {
    fn wait(self, store: &Store) -> Result<T> {
        match self.0 {
            None => Ok(T::default()),
            // A panic there was printed; the caller goes on by words alone.
            Some(Pending::Thread(handle)) => handle.join().unwrap_or_else(|_| Ok(T::default())),
            Some(Pending::Here(job)) => job(store),
        }
    }
}
