//! `trae-mem gc --rescan`: today's privacy rules applied to what is already
//! stored. Rows kept before a secret rule existed (or before the user added
//! a `secret_patterns` entry) are redacted in place, the summaries of their
//! sessions are written again from the redacted rows, and the old text's
//! bytes leave the file as a forget's do.

use std::collections::BTreeSet;

use anyhow::Result;
use serde::Serialize;

use crate::config::Loaded;
use crate::privacy::Privacy;
use crate::store::{Store, StoredText, now_ms};
use crate::summarize;

/// Rows read at a time.
const BATCH: usize = 1000;

/// What a rescan found and rewrote.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Rescanned {
    pub observations_scanned: u64,
    pub observations_redacted: u64,
    /// Sessions whose summaries were written again from their redacted rows.
    pub sessions_resummarized: u64,
    /// Summaries that still quoted a secret (a summarizer plugin's own
    /// words, say), redacted in place.
    pub summaries_redacted: u64,
}

/// Applies `privacy` to every public observation and summary in `store`.
/// `progress` hears how many observations were scanned so far.
pub fn rescan(
    store: &mut Store,
    loaded: &Loaded,
    privacy: &Privacy,
    progress: &mut dyn FnMut(u64),
) -> Result<Rescanned> {
    let mut report = Rescanned::default();
    let mut touched = BTreeSet::new();
    let mut after = 0;
    while let Some(batch) = Some(store.observation_texts_after(after, BATCH)?).filter(|b| !b.is_empty()) {
        after = batch.last().expect("not empty").id;
        report.observations_scanned += batch.len() as u64;
        let redacted = redact(privacy, batch);
        if !redacted.is_empty() {
            touched.extend(redacted.iter().map(|row| row.session_id.clone()));
            report.observations_redacted += redacted.len() as u64;
            store.rewrite_observations(&redacted)?;
        }
        progress(report.observations_scanned);
    }
    let now = now_ms();
    for session in &touched {
        summarize::after_removal(store, loaded, session, now)?;
    }
    report.sessions_resummarized = touched.len() as u64;
    let mut after = 0;
    while let Some(batch) = Some(store.summary_texts_after(after, BATCH)?).filter(|b| !b.is_empty()) {
        after = batch.last().expect("not empty").id;
        let redacted = redact(privacy, batch);
        if !redacted.is_empty() {
            report.summaries_redacted += redacted.len() as u64;
            store.rewrite_summaries(&redacted)?;
        }
    }
    if report.observations_redacted + report.summaries_redacted > 0 {
        store.reclaim(None)?;
    }
    Ok(report)
}

/// The texts that `privacy` changes, as they read after it.
fn redact(privacy: &Privacy, texts: Vec<StoredText>) -> Vec<StoredText> {
    texts
        .into_iter()
        .filter_map(|text| {
            let (clean, _) = privacy.scrub(&text.content);
            (clean != text.content).then_some(StoredText { content: clean, ..text })
        })
        .collect()
}
