//! Bulk writes: the one way in for records that come many at a time, an
//! export file (`trae-mem import`) or a sync pull. Records may carry
//! tombstones, and what those name is forgotten whole (`forget`), never
//! merely left out; and the sessions whose summaries came in get their
//! facts from their rows: so both paths end the same way, here.

use anyhow::Result;

use crate::config::Loaded;
use crate::forget::{self, Forgotten, Plan};
use crate::store::{ImportReport, Records, Store};
use crate::summarize;

/// Takes `records` into the store, gives facts to the sessions whose
/// summaries came in, then forgets the rows already stored that their
/// tombstones name.
pub fn take_in(store: &mut Store, loaded: &Loaded, records: Records<'_>) -> Result<(ImportReport, Forgotten)> {
    let mut report = store.take_in(records)?;
    if report.summaries > 0 {
        summarize::fill_facts(store, None)?;
    }
    let (observations, sessions) = std::mem::take(&mut report.to_forget);
    if observations.is_empty() && sessions.is_empty() {
        return Ok((report, Forgotten::default()));
    }
    let plan = Plan { observations, sessions, project: None };
    let forgotten = forget::carry_out(store, loaded, &plan, &mut |_| {})?;
    Ok((report, forgotten))
}
