//! Search, the one entry point every reader uses (the CLI, MCP, the viewer
//! and prompt recall): a query understood (`query`), candidates nominated
//! by the full-text index, the best of them ranked (`rank`), and each hit
//! told with the terms it matched and an excerpt (`snippet`).
//!
//! A query's terms need not all match. The index nominates the rows holding
//! each form of each term, over its whole postings (up to a cap past which
//! a term weighs next to nothing), and the newest rows holding every term;
//! the rows whose terms weigh most are read and ranked, newest first among
//! equals. An older row holding the one rare word competes with every
//! newer row holding only common ones.
//! Summaries are searched beside observations and come back as hits of
//! kind `summary`.

use anyhow::Result;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

use super::asking;
use super::fuse::{self, FoundBy};
use super::meaning;
use super::query::{self, Needle, Query, Shape, Term};
use super::rank::{self, Document, Voice};
use super::snippet;
use crate::store::{
    Candidate, Filters, HitRow, IndexMode, Kind, SESSION_END_NOTE, STOP_NOTE, Scope, Store, SummaryLevel, TURN_ENDED,
    Table,
};

/// What to search for.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// Raw text as typed. Empty means "the most recent observations".
    pub text: String,
    pub filters: Filters,
    pub limit: usize,
    pub offset: usize,
}

/// One search result: enough to decide whether to look closer, no full content.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    /// The observation's id, for `timeline` and `show`; none for a
    /// summary, which `session_id` names.
    pub id: Option<i64>,
    pub session_id: String,
    pub project: String,
    /// Unix milliseconds.
    pub ts: i64,
    /// The observation's kind, or `summary`.
    pub kind: Kind,
    pub tool: Option<String>,
    /// For a summary: `brief` or `detailed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<SummaryLevel>,
    /// The teammate it was pulled from (`trae-mem sync`); none for one's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// An excerpt with matches between « and ».
    pub snippet: String,
    /// Relevance, higher is better: about 0.9 for the first hit by words
    /// alone, up to about 1.6 for the first by words and meaning; 0
    /// without a text query.
    pub score: f64,
    /// The query's terms this hit holds; a synonym found stands for its term.
    pub matched: Vec<String>,
    /// Whether the hit holds the query's words, says something alike in
    /// other words (its meaning is near the query's), or both; none
    /// without a text query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found_by: Option<FoundBy>,
}

/// Why a row is a hit.
struct Found {
    score: f64,
    by: Option<FoundBy>,
    matched: Vec<String>,
}

impl SearchHit {
    /// How a person or agent names the hit: `#42` for an observation, the
    /// session for a summary.
    pub fn reference(&self) -> String {
        match self.id {
            Some(id) => format!("#{id}"),
            None => format!("session {}", &self.session_id[..self.session_id.len().min(8)]),
        }
    }

    fn new(row: HitRow, table: Table, id: i64, found: Found, marks: &[(&str, bool)]) -> Self {
        debug_assert_eq!(table == Table::Summaries, row.level.is_some());
        SearchHit {
            snippet: snippet::Folded::new(&row.content).snippet(&snippet::needles(marks.iter().copied())),
            id: (table == Table::Observations).then_some(id),
            session_id: row.session_id,
            project: row.project,
            ts: row.ts,
            kind: row.kind,
            tool: row.tool,
            level: row.level,
            author: row.author,
            score: (found.score * 1000.0).round() / 1000.0,
            matched: found.matched,
            found_by: found.by,
        }
    }
}

/// A one-term query nominates this many of the newest rows holding it:
/// with one term, rows differ only by how often they hold it.
const ONE_TERM: usize = 1000;

/// The nominated rows read and ranked, those whose terms weigh most. With
/// many matches, the newest this many rows holding every term are all that
/// are nominated for holding every term: they weigh the most, and the
/// newest of equals go first, so an older one could never be read.
/// Ranking every match of a common word in a million rows would cost far
/// more than the answer is worth, and recent work matters most.
const POOL: usize = 250;

/// The rows nearest the query in meaning, read and fused with those.
const NEAREST: usize = 30;

/// A row that holds none of the query's words is a hit by meaning alone
/// only when it stands this many standard deviations above the rows
/// compared: a keyword query gets no tail of rows merely near its topic.
const MEANING_ALONE: f32 = 3.0;

/// At most this many of the newest rows holding a form are read (about
/// 0.3 µs each at 100k rows, where 10,000 a form were most of a question's
/// time). Past it, the form's document frequency is reckoned from how far
/// back those rows reach, and its weight is near the floor anyway.
const POSTINGS_READ: usize = 2_000;

/// How many rows holding a form are read, for a query of `terms` terms.
/// One term's rarity ranks nothing against another's: for a lone term,
/// only the newest rows are worth reading.
fn postings_cap(terms: usize) -> usize {
    if terms == 1 { ONE_TERM } else { POSTINGS_READ }
}

/// About how many rows of a table of `size` rows hold a form, from its
/// newest rows up to `cap` (`ids`, newest first): their count when the
/// cap was not reached, else that count scaled by the share of the table
/// they were found in (rows assumed spread evenly over time).
fn document_frequency(ids: &[i64], cap: usize, size: i64) -> f64 {
    match ids.last() {
        Some(&oldest) if ids.len() >= cap => {
            let searched = (size - oldest + 1).max(1) as f64;
            (ids.len() as f64 * size as f64 / searched).min(size as f64)
        }
        _ => ids.len() as f64,
    }
}

/// A term still in play: one or more of its forms occurs somewhere.
struct LiveTerm<'q> {
    term: &'q Term,
    /// The index expression for its own form, and for any of its synonyms.
    own: Option<String>,
    synonyms: Option<String>,
    /// Rarity: BM25's inverse document frequency of its own form (of its
    /// synonyms, at their weight, when only they occur).
    idf: f64,
    /// The observations holding its own form (the newest, up to the cap)
    /// where the search looks, when its rarity was counted there: the
    /// count read them anyway (`live_terms`).
    postings: Option<Vec<i64>>,
    /// Whether `postings` holds every such observation: fewer than the cap
    /// were found.
    whole: bool,
}

impl LiveTerm<'_> {
    /// Every form of it, in the order `Count::found` refers to.
    fn needles(&self) -> impl Iterator<Item = &Needle> {
        self.term.needles.iter()
    }
}

/// Searches public observations and summaries. Never fails on what the
/// text says: every query is valid, and one that cannot match returns no
/// hits. Without a query, results are the newest observations.
pub fn search(store: &Store, request: &SearchRequest) -> Result<Vec<SearchHit>> {
    let query = query::understand(&request.text);
    if query.terms.is_empty() {
        return newest(store, request);
    }
    let tables = request.filters.tables();
    if tables.is_empty() {
        return Ok(Vec::new());
    }
    // A query that names something exact (an identifier, a path, quoted
    // text) asks for rows that hold it, and one word alone (in Chinese, a
    // term of one or two characters, as most words are) says too little to
    // be near anything in particular: words alone answer them. Meaning had
    // only ordered what words found there, at the cost of a query vector
    // and a scan of every stored vector (34 ms a query at 1M rows), and the
    // recall benchmark's tuning half found the same rows without it
    // (recall@5 the same in every category, MRR@10 0.83 → 0.82).
    let exact = query.terms.iter().any(|t| matches!(t.needles[0].shape, Shape::Exact));
    let one_word = match &query.terms[..] {
        [term] => !matches!(term.needles[0].shape, Shape::Cjk) || term.needles[0].text.chars().count() <= 2,
        _ => false,
    };
    let nearest = match exact || one_word {
        true => meaning::Nearest::none(),
        false => {
            meaning::Nearest::begin(store, &request.text, &request.filters, &tables, NEAREST, meaning::Bounds::Search)?
        }
    };
    let scopes = tables.iter().map(|&table| store.scope(table, &request.filters)).collect::<Result<Vec<_>>>()?;
    let Some(live) = live_terms(store, &query, &request.filters, &tables, &scopes)? else {
        return Ok(Vec::new());
    };
    let weights: Vec<f64> = live.iter().map(|t| t.idf).collect();
    let counter = rank::Counter::new(live.iter().map(|t| t.needles().collect()).collect());
    let mut nominated: FxHashMap<(Table, i64), f64> = FxHashMap::default();
    if !live.is_empty() {
        for (&table, scope) in tables.iter().zip(&scopes) {
            nominate(store, table, &live, &request.filters, scope, &counter, &mut nominated)?;
        }
    }
    let mut pool: Vec<((Table, i64), f64)> = nominated.into_iter().collect();
    pool.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.1.cmp(&a.0.1)));
    pool.truncate(POOL);
    // The words' candidates are read and counted while the meaning's
    // thread is still at work; the rows only meaning found, after it.
    let nominees: FxHashSet<(Table, i64)> = pool.iter().map(|(source, _)| *source).collect();
    let mut read = Vec::with_capacity(pool.len() + NEAREST);
    read_candidates(store, &counter, &nominees, &mut read)?;
    let near = nearest.wait(store)?;
    let near_ones: FxHashSet<(Table, i64)> = near.iter().map(|n| (n.table, n.id)).collect();
    let stand_out: FxHashSet<(Table, i64)> =
        near.iter().filter(|n| n.stands >= MEANING_ALONE).map(|n| (n.table, n.id)).collect();
    read_candidates(store, &counter, &(&near_ones - &nominees), &mut read)?;
    read.sort_unstable_by_key(|(source, _)| *source);

    let mut documents = Vec::with_capacity(read.len());
    let mut sources = Vec::with_capacity(read.len());
    let mut keys: FxHashMap<(Table, i64), usize> = FxHashMap::default();
    for (source, document) in read {
        let counts = &document.counts;
        let missing_required = live.iter().zip(counts).any(|(t, c)| t.term.required && c.tf == 0.0);
        if missing_required || !stand_out.contains(&source) && counts.iter().all(|c| c.tf == 0.0) {
            continue;
        }
        keys.insert(source, documents.len());
        documents.push(Document { key: documents.len(), ..document });
        sources.push(source);
    }
    let worded: Vec<Document> = documents.iter().filter(|d| d.counts.iter().any(|c| c.tf > 0.0)).cloned().collect();
    let by_words: Vec<usize> = rank::rank(&worded, &weights).into_iter().map(|r| r.key).collect();
    // A question is nearest in meaning to the same question asked again,
    // which says nothing of its answer: meaning ranks what states.
    let by_meaning: Vec<usize> = near
        .iter()
        .filter_map(|n| keys.get(&(n.table, n.id)).copied())
        .filter(|&key| documents[key].voice != Voice::Asks)
        .collect();
    let ranked = fuse::fuse(&by_words, &by_meaning);
    // Twins are told apart as hits are read, not for every candidate: the
    // folding reads a whole text, and most candidates are never shown.
    let mut seen_twins = FxHashSet::default();
    let mut skipped = 0;
    let mut hits = Vec::new();
    for fuse::Fused { key, score, by } in ranked {
        if hits.len() == request.limit {
            break;
        }
        let (table, id) = sources[key];
        let Some(row) = store.hit_row(table, id)? else { continue };
        let twins = twin_keys(&row, documents[key].voice);
        let first_of_its_twins = twins.iter().all(|k| !seen_twins.contains(k));
        seen_twins.extend(twins);
        if !first_of_its_twins {
            continue;
        }
        if skipped < request.offset {
            skipped += 1;
            continue;
        }
        let counts = &documents[key].counts;
        let mut matched = Vec::new();
        let mut marks = Vec::new();
        for (term, count) in live.iter().zip(counts) {
            if let Some(found) = count.found {
                let needle = &term.term.needles[found];
                matched.push(if found == 0 { term.term.label.clone() } else { needle.display().to_owned() });
                marks.extend(term.needles().map(|n| (n.text.as_str(), matches!(n.shape, Shape::Word { .. }))));
            }
        }
        hits.push(SearchHit::new(row, table, id, Found { score, by: Some(by), matched }, &marks));
    }
    Ok(hits)
}

/// Reads the public rows among `sources` and counts the query's terms in
/// each: the documents to rank, not yet admitted nor given their keys.
fn read_candidates(
    store: &Store,
    counter: &rank::Counter,
    sources: &FxHashSet<(Table, i64)>,
    read: &mut Vec<((Table, i64), Document)>,
) -> Result<()> {
    for table in [Table::Observations, Table::Summaries] {
        let mut ids: Vec<i64> = sources.iter().filter(|s| s.0 == table).map(|s| s.1).collect();
        if ids.is_empty() {
            continue;
        }
        ids.sort_unstable();
        store.candidates(table, &ids, |candidate| {
            let document = Document {
                key: 0,
                length: candidate.content.len(),
                ts: candidate.ts,
                voice: voice(&candidate),
                counts: counter.count(own_words(&candidate)),
            };
            read.push(((table, candidate.id), document));
            Ok(())
        })?;
    }
    Ok(())
}

/// The words a candidate says of its own: a lifecycle note's label
/// ("stop: ", "session end: ") and the reason trae-mem gives when the
/// client names none are trae-mem's words, and a query about "end" is not
/// about every turn that ended.
fn own_words<'c>(candidate: &Candidate<'c>) -> &'c [u8] {
    if candidate.kind == Kind::Note {
        for label in [STOP_NOTE, SESSION_END_NOTE] {
            if let Some(reason) = candidate.content.strip_prefix(label.as_bytes()) {
                return if reason == TURN_ENDED.as_bytes() { &[] } else { reason };
            }
        }
    }
    candidate.content
}

/// What a candidate does with its words: a prompt that only asks asks, as
/// does the summary of a session that only asked memory.
fn voice(candidate: &Candidate<'_>) -> Voice {
    let text = || std::str::from_utf8(candidate.content);
    match candidate.kind {
        Kind::Tool => Voice::Tool,
        Kind::User if text().is_ok_and(|t| !asking::only_asks(t)) => Voice::States,
        Kind::User => Voice::Asks,
        Kind::Summary if candidate.asked_without_work.is_some_and(asking::all_ask_memory) => Voice::Asks,
        _ => Voice::States,
    }
}

/// The keys under which a hit is the same as another: a session's two
/// summaries are one hit, and a question asked again, an answer given again
/// or a session summarized again the same way, in another session, say
/// nothing new. (Tool rows are left alone: the same output at another time
/// is another fact.)
fn twin_keys(row: &HitRow, voice: Voice) -> Vec<u64> {
    let hash = |part: &[u8]| {
        let mut hasher = rustc_hash::FxHasher::default();
        std::hash::Hasher::write(&mut hasher, part);
        std::hash::Hasher::finish(&hasher)
    };
    let mut keys = Vec::new();
    if row.kind == Kind::Summary {
        keys.push(hash(format!("summary of {}", row.session_id).as_bytes()));
    }
    if voice != Voice::Tool {
        let folded: String = row.content.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        keys.push(hash(folded.as_bytes()));
    }
    keys
}

/// The public observations that hold every term of `text` in its own form
/// (not a synonym: what this selects may be deleted) and pass the filters,
/// oldest first.
pub fn observations_holding(store: &Store, text: &str, filters: &Filters) -> Result<Vec<i64>> {
    let query = query::understand(text);
    if query.terms.is_empty() {
        return Ok(Vec::new());
    }
    let expressions: Vec<String> =
        query.terms.iter().filter_map(|t| store.expression(&t.needles[0].text, t.required)).collect();
    let candidates = if expressions.is_empty() {
        // Nothing the index can look up (punctuation in the word index):
        // every row passing the filters is a candidate.
        store.observations_passing(filters, true)?
    } else {
        let scope = store.scope(Table::Observations, filters)?;
        store.matching(Table::Observations, &expressions, filters, &scope, usize::MAX)?
    };
    let counter = rank::Counter::new(query.terms.iter().map(|t| vec![&t.needles[0]]).collect());
    let mut holding = Vec::new();
    for chunk in candidates.chunks(1000) {
        store.candidates(Table::Observations, chunk, |candidate| {
            if counter.count(candidate.content).iter().all(|c| c.tf > 0.0) {
                holding.push(candidate.id);
            }
            Ok(())
        })?;
    }
    holding.sort_unstable();
    Ok(holding)
}

/// The newest public observations that pass the filters.
fn newest(store: &Store, request: &SearchRequest) -> Result<Vec<SearchHit>> {
    let ids = store.newest_observations(&request.filters, request.limit, request.offset)?;
    let mut hits = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(row) = store.hit_row(Table::Observations, id)? {
            let found = Found { score: 0.0, by: None, matched: Vec::new() };
            hits.push(SearchHit::new(row, Table::Observations, id, found, &[]));
        }
    }
    Ok(hits)
}

/// Each term with the forms of it that occur, and its rarity. `None` when
/// quoted text occurs nowhere, so nothing can match.
///
/// Rarity is reckoned over the rows the search looks in when the index can
/// count them there: everywhere, or one project's rows by its mark
/// (`Scope::Project`) with no other filter. The rows a term's count read
/// are then the ones its nomination would read, and are kept for it. With
/// other filters, rarity is the whole store's, and nomination reads again.
fn live_terms<'q>(
    store: &Store,
    query: &'q Query,
    filters: &Filters,
    tables: &[Table],
    scopes: &[Scope],
) -> Result<Option<Vec<LiveTerm<'q>>>> {
    let unfiltered = Filters::default();
    let in_project = Filters { project: None, ..filters.clone() };
    let counted_in_project = !in_project.narrows() && scopes.iter().all(|s| matches!(s, Scope::Project(_)));
    let counted_scopes: Vec<&Scope> = match counted_in_project {
        true => scopes.iter().collect(),
        false => tables.iter().map(|_| &Scope::Everywhere).collect(),
    };
    let where_searched = !filters.narrows() || counted_in_project;
    let cap = postings_cap(query.terms.len());
    let mut sizes = Vec::with_capacity(tables.len());
    let mut extents = Vec::with_capacity(tables.len());
    for (&table, scope) in tables.iter().zip(&counted_scopes) {
        let extent = store.table_size(table)?;
        sizes.push(match scope {
            Scope::Project(_) => {
                let rows = store.matching(table, &[], &unfiltered, scope, cap)?;
                document_frequency(&rows, cap, extent)
            }
            _ => extent as f64,
        });
        extents.push(extent);
    }
    let total: f64 = sizes.iter().sum();
    let rarity = |n: f64| (1.0 + (total - n + 0.5) / (n + 0.5)).ln().max(0.01);
    let mut live = Vec::new();
    for term in &query.terms {
        let own = store.expression(&term.needles[0].text, term.required);
        let (mut frequency, mut postings) = (0.0, Vec::new());
        if let Some(own) = &own {
            for ((&table, &extent), scope) in tables.iter().zip(&extents).zip(&counted_scopes) {
                let ids = store.matching(table, std::slice::from_ref(own), &unfiltered, scope, cap)?;
                frequency += document_frequency(&ids, cap, extent);
                if table == Table::Observations {
                    postings = ids;
                }
            }
        }
        let synonyms: Vec<String> = term.needles[1..].iter().filter_map(|n| store.expression(&n.text, false)).collect();
        let synonyms = (!synonyms.is_empty()).then(|| synonyms.join(" OR "));
        let idf = if frequency > 0.0 {
            rarity(frequency)
        } else {
            let Some(any) = &synonyms else {
                if term.required {
                    return Ok(None);
                }
                continue;
            };
            let found = store.matching(tables[0], std::slice::from_ref(any), &unfiltered, counted_scopes[0], cap)?;
            if found.is_empty() {
                continue;
            }
            rarity(document_frequency(&found, cap, extents[0])) * query::SYNONYM_WEIGHT
        };
        let whole = postings.len() < cap;
        let postings = where_searched.then_some(postings);
        live.push(LiveTerm { term, own: own.filter(|_| idf > 0.0), synonyms, idf, postings, whole });
    }
    Ok(Some(live))
}

/// The observations holding a term of one form, where the search looks,
/// when the count read every one of them, the fewest of any such term:
/// every row holding every term is among them.
fn shortest_whole_postings<'l>(live: &'l [LiveTerm<'_>]) -> Option<&'l [i64]> {
    live.iter()
        .filter(|t| t.whole && t.own.is_some() && t.synonyms.is_none())
        .filter_map(|t| t.postings.as_deref())
        .min_by_key(|postings| postings.len())
}

/// The newest of `postings` (up to `POOL`) whose text holds every term,
/// read and counted as ranking counts them. When one term's rows are few,
/// this is much cheaper than asking the index for the rows holding every
/// term, which walks the common terms' lists to their ends when few rows
/// hold them all: 82 ms of a 96 ms Chinese question at a million rows,
/// eight overlapping two-character terms each OR'd with its synonyms.
fn holding_every_term(store: &Store, counter: &rank::Counter, postings: &[i64]) -> Result<Vec<i64>> {
    let mut ids = postings.to_vec();
    ids.sort_unstable();
    let mut holding = Vec::new();
    store.candidates(Table::Observations, &ids, |candidate| {
        if counter.count(own_words(&candidate)).iter().all(|c| c.tf > 0.0) {
            holding.push(candidate.id);
        }
        Ok(())
    })?;
    holding.sort_unstable_by(|a, b| b.cmp(a));
    holding.truncate(POOL);
    Ok(holding)
}

/// Adds `table`'s nominations to `nominated`, each with the weight of the
/// terms that nominated it: the newest rows holding every term, and the
/// rows holding each term's own form and any of its synonyms. `scope`:
/// where in the table to look (`Store::scope`).
fn nominate(
    store: &Store,
    table: Table,
    live: &[LiveTerm<'_>],
    filters: &Filters,
    scope: &Scope,
    counter: &rank::Counter,
    nominated: &mut FxHashMap<(Table, i64), f64>,
) -> Result<()> {
    let every_term: f64 = live.iter().map(|t| t.idf).sum();
    let cap = postings_cap(live.len());
    let any_form = |t: &LiveTerm<'_>| -> String {
        let forms: Vec<&str> = t.own.iter().chain(&t.synonyms).map(String::as_str).collect();
        format!("({})", forms.join(" OR "))
    };
    // The LIKE mode has no expression for "any form of the term": its
    // nominations per form are all it has.
    let like = store.index_mode() == IndexMode::Like;
    if live.len() > 1 && !like {
        let every = match shortest_whole_postings(live) {
            Some(postings) if table == Table::Observations => holding_every_term(store, counter, postings)?,
            _ => store.matching(table, &live.iter().map(any_form).collect::<Vec<_>>(), filters, scope, POOL)?,
        };
        for id in every {
            nominated.insert((table, id), every_term);
        }
    }
    for term in live {
        let mut add = |ids: &[i64], weight: f64| {
            for &id in ids {
                let nominee = nominated.entry((table, id)).or_insert(0.0);
                if *nominee < every_term {
                    *nominee += term.idf * weight;
                }
            }
        };
        match (&term.own, term.postings.as_deref()) {
            (Some(_), Some(postings)) if table == Table::Observations => add(postings, 1.0),
            (Some(own), _) => add(&store.matching(table, std::slice::from_ref(own), filters, scope, cap)?, 1.0),
            (None, _) => {}
        }
        if let Some(synonyms) = &term.synonyms {
            let forms: Vec<String> = if like {
                term.term.needles[1..].iter().filter_map(|n| store.expression(&n.text, false)).collect()
            } else {
                vec![synonyms.clone()]
            };
            for form in forms {
                add(&store.matching(table, std::slice::from_ref(&form), filters, scope, cap)?, query::SYNONYM_WEIGHT);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_frequency_is_counted_below_the_cap_and_reckoned_past_it() {
        assert_eq!(document_frequency(&[9, 5, 2], 100, 1000), 3.0);
        // The newest 100 rows all hold the form: so, likely, do all 1,000.
        let dense: Vec<i64> = (901..=1000).rev().collect();
        assert_eq!(document_frequency(&dense, 100, 1000), 1000.0);
        // One row in ten, back to the first: about 100.
        let sparse: Vec<i64> = (1..=100).rev().map(|i| i * 10).collect();
        assert!((document_frequency(&sparse, 100, 1000) - 100.0).abs() < 1.0);
    }
}
