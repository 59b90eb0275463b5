//! `trae_mem`, the index's FTS5 tokenizer: SQLite's `trigram` tokenizer
//! with two changes.
//!
//! - **Short terms are tokens too.** The trigram tokenizer can match nothing
//!   shorter than three characters, yet `缓存`, `db` and `id` are words. So a
//!   document also yields the first one and two characters of each of its
//!   trigrams, and a query of one or two characters is a single token. Every
//!   character of an indexed text begins a trigram (the index appends two
//!   spaces), so these are all of the text's one- and two-character pieces,
//!   and a short term is one lookup like any trigram.
//! - **A document yields each token once.** The index keeps no positions
//!   (`detail=none`), so a token's second occurrence in a row adds nothing,
//!   yet FTS5 would look every occurrence up in its table of pending terms.
//!   On the benchmark corpus a row holds each of its trigrams 3.2 times; a
//!   small set per row is cheaper than those lookups. That is also why this
//!   tokenizer is only correct with `detail=none`.
//!
//! - **JSON keys are not words.** Created with the argument
//!   `skip_json_keys` (as new indexes are), it blanks the keys of JSON
//!   objects in a document (`text::blank_json_keys`) before taking its
//!   trigrams: a tool's input and output are stored as JSON, and a search
//!   for "start" must not find every edit by its `oldStart`. An index made
//!   before keeps indexing keys, so that what it removes matches what it
//!   added; search's ranking drops a row that holds a term only as a key.
//! - **A row is filed under its project.** Created with the argument
//!   `project_marks` (as new indexes are), a document that begins with a
//!   project mark (`PROJECT_MARK`, the project's path, `PROJECT_MARK`, as
//!   the index's source view writes it) yields that whole mark as one token,
//!   and a query of a mark is that token. A search of one project then asks
//!   FTS5 for rows holding its terms *and* the project's token, and FTS5
//!   skips through both lists, rather than search reading every row of the
//!   project first to check each match against.
//!
//! It lives in this process, not in the file: every connection that writes
//! or queries the index registers it first (`register`). Tools such as the
//! `sqlite3` shell can still read every table, but not `MATCH`.

use std::ffi::{c_char, c_int, c_void};
use std::ptr::null_mut;

use anyhow::{Result, bail};
use rusqlite::{Connection, ffi};
use rustc_hash::FxHashSet;

/// What this SQLite's full-text search offers, which decides the index
/// modes a store can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// No FTS5: only a `LIKE` scan.
    NoFts5,
    /// FTS5 without its trigram tokenizer: word tokens only.
    Words,
    /// FTS5 with trigrams, and the `trae_mem` tokenizer registered.
    Trigram,
}

/// Registers the tokenizer on `conn`, where this SQLite can run it, and
/// says what full-text search it offers.
pub fn register(conn: &Connection) -> Result<Support> {
    // SAFETY: the handle stays valid while `conn` is borrowed, and this
    // module is the only code that touches FTS5's C interface.
    unsafe {
        let db = conn.handle();
        let Some(api) = fts5_api(db) else { return Ok(Support::NoFts5) };
        if !has_trigram(api) {
            return Ok(Support::Words);
        }
        let Some(create) = (*api).xCreateTokenizer else { bail!("FTS5 offers no way to add a tokenizer") };
        let mut methods =
            ffi::fts5_tokenizer { xCreate: Some(create_wrapper), xDelete: Some(delete), xTokenize: Some(tokenize) };
        // FTS5 copies `methods`; the API pointer, passed back to `create_wrapper`, lives as long as `db`.
        let rc = create(api, c"trae_mem".as_ptr(), api.cast(), &mut methods, None);
        if rc != ffi::SQLITE_OK {
            bail!("cannot register the trae_mem tokenizer (SQLite error {rc})");
        }
    }
    Ok(Support::Trigram)
}

/// Whether FTS5 has its built-in trigram tokenizer, which `trae_mem` wraps.
///
/// # Safety
/// `api` must be the live FTS5 API of an open connection, as `fts5_api`
/// returns it.
unsafe fn has_trigram(api: *mut ffi::fts5_api) -> bool {
    // SAFETY: `api` is FTS5's live API; looking a tokenizer up creates nothing.
    unsafe {
        let Some(find) = (*api).xFindTokenizer else { return false };
        let mut tokenizer = ffi::fts5_tokenizer { xCreate: None, xDelete: None, xTokenize: None };
        let mut user_data = null_mut();
        find(api, c"trigram".as_ptr(), &mut user_data, &mut tokenizer) == ffi::SQLITE_OK
    }
}

/// FTS5's API, asked for the documented way: `SELECT fts5(?1)` with a
/// pointer bound for it to fill in. `None` without FTS5.
///
/// # Safety
/// `db` must be an open connection, not used by another thread meanwhile.
unsafe fn fts5_api(db: *mut ffi::sqlite3) -> Option<*mut ffi::fts5_api> {
    let mut stmt = null_mut();
    // SAFETY: `db` is an open connection; the statement is finalized below.
    unsafe {
        if ffi::sqlite3_prepare_v2(db, c"SELECT fts5(?1)".as_ptr(), -1, &mut stmt, null_mut()) != ffi::SQLITE_OK {
            return None;
        }
        let mut api: *mut ffi::fts5_api = null_mut();
        ffi::sqlite3_bind_pointer(stmt, 1, (&raw mut api).cast(), c"fts5_api_ptr".as_ptr(), None);
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
        (!api.is_null()).then_some(api)
    }
}

/// One instance, per index and connection.
struct Wrapper {
    inner: ffi::fts5_tokenizer,
    instance: *mut ffi::Fts5Tokenizer,
    /// The tokens of the document being tokenized, each packed into a
    /// `u128`. Kept between documents so its memory is reused.
    seen: FxHashSet<u128>,
    /// Whether JSON keys are blanked before a document is tokenized.
    skip_json_keys: bool,
    /// Whether a document's leading project mark is one token.
    project_marks: bool,
    /// The document with its keys blanked, reused between documents.
    blanked: Vec<u8>,
}

/// The argument that has the tokenizer leave JSON keys out.
pub const SKIP_JSON_KEYS: &str = "skip_json_keys";

/// The argument that has the tokenizer take a document's leading project
/// mark as one token.
pub const PROJECT_MARKS: &str = "project_marks";

/// What a project mark begins and ends with: U+FDD0, a Unicode
/// noncharacter, reserved for a program's internal use, so no text a
/// client sends is expected to begin with it.
pub const PROJECT_MARK: char = '\u{FDD0}';

/// The token that files a row under `project`, as the index's source view
/// writes it before the row's text.
pub fn project_mark(project: &str) -> String {
    format!("{PROJECT_MARK}{project}{PROJECT_MARK}")
}

/// What `forward_once` needs, passed through the trigram tokenizer.
struct Forward<'a> {
    seen: &'a mut FxHashSet<u128>,
    context: *mut c_void,
    token: TokenCallback,
}

type TokenCallback = unsafe extern "C" fn(*mut c_void, c_int, *const c_char, c_int, c_int, c_int) -> c_int;

/// `xCreate`: creates the trigram tokenizer it wraps, passing the arguments on.
///
/// # Safety
/// Only FTS5 calls it, as `register` set it up: `api` is the API pointer
/// given at registration, `args` holds `arg_count` C strings, and `out` is
/// writable.
unsafe extern "C" fn create_wrapper(
    api: *mut c_void,
    args: *mut *const c_char,
    arg_count: c_int,
    out: *mut *mut ffi::Fts5Tokenizer,
) -> c_int {
    let api: *mut ffi::fts5_api = api.cast();
    // SAFETY: FTS5 passes the API pointer given at registration,
    // `arg_count` argument strings and a writable `out`.
    unsafe {
        let Some(find) = (*api).xFindTokenizer else { return ffi::SQLITE_ERROR };
        let mut inner = ffi::fts5_tokenizer { xCreate: None, xDelete: None, xTokenize: None };
        let mut inner_data = null_mut();
        let rc = find(api, c"trigram".as_ptr(), &mut inner_data, &mut inner);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        let (Some(create), Some(_), Some(_)) = (inner.xCreate, inner.xDelete, inner.xTokenize) else {
            return ffi::SQLITE_ERROR;
        };
        // Our own arguments come first, and are not the trigram tokenizer's.
        let (mut args, mut arg_count) = (args, arg_count);
        let (mut skip_json_keys, mut project_marks) = (false, false);
        while arg_count > 0 && !(*args).is_null() {
            match std::ffi::CStr::from_ptr(*args).to_bytes() {
                ours if ours == SKIP_JSON_KEYS.as_bytes() => skip_json_keys = true,
                ours if ours == PROJECT_MARKS.as_bytes() => project_marks = true,
                _ => break,
            }
            (args, arg_count) = (args.add(1), arg_count - 1);
        }
        let mut instance = null_mut();
        let rc = create(inner_data, args, arg_count, &mut instance);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        let wrapper = Box::new(Wrapper {
            inner,
            instance,
            seen: FxHashSet::default(),
            skip_json_keys,
            project_marks,
            blanked: Vec::new(),
        });
        *out = Box::into_raw(wrapper).cast();
    }
    ffi::SQLITE_OK
}

/// `xDelete`.
///
/// # Safety
/// `tokenizer` must come from `create_wrapper` and not be used again.
unsafe extern "C" fn delete(tokenizer: *mut ffi::Fts5Tokenizer) {
    // SAFETY: `tokenizer` came from `create_wrapper`, and FTS5 deletes it once.
    unsafe {
        let wrapper = Box::from_raw(tokenizer.cast::<Wrapper>());
        if let Some(delete) = wrapper.inner.xDelete {
            delete(wrapper.instance);
        }
    }
}

/// `xTokenize`: a document's project mark as one token, then its trigrams
/// and their short prefixes, each once; a query of a project mark, or of
/// one or two characters, as one token; anything else as the trigram
/// tokenizer has it.
///
/// # Safety
/// Only FTS5 calls it: `tokenizer` comes from `create_wrapper` and is used
/// by one thread at a time, `text` points at `length` bytes, and `token`
/// and `context` are FTS5's callback and its argument.
unsafe extern "C" fn tokenize(
    tokenizer: *mut ffi::Fts5Tokenizer,
    context: *mut c_void,
    flags: c_int,
    text: *const c_char,
    length: c_int,
    token: Option<TokenCallback>,
) -> c_int {
    // SAFETY: `tokenizer` came from `create_wrapper`; FTS5 never uses one
    // instance from two threads at once, and `text` points at `length` bytes.
    unsafe {
        let wrapper = &mut *tokenizer.cast::<Wrapper>();
        let Some(inner_tokenize) = wrapper.inner.xTokenize else { return ffi::SQLITE_ERROR };
        let Some(token) = token else { return ffi::SQLITE_ERROR };
        let mark = match wrapper.project_marks {
            true => leading_mark(bytes(text, length)),
            false => 0,
        };
        if flags & ffi::FTS5_TOKENIZE_QUERY != 0 {
            if mark > 0 {
                return token(context, 0, text, mark as c_int, 0, mark as c_int);
            }
            if let Some(short) = short_query(bytes(text, length)) {
                return token(context, 0, short.as_ptr().cast(), short.len() as c_int, 0, length);
            }
        }
        if flags & ffi::FTS5_TOKENIZE_DOCUMENT == 0 {
            return inner_tokenize(wrapper.instance, context, flags, text, length, Some(token));
        }
        if mark > 0 {
            let rc = token(context, 0, text, mark as c_int, 0, mark as c_int);
            if rc != ffi::SQLITE_OK {
                return rc;
            }
        }
        let (text, length) = (text.add(mark), length - mark as c_int);
        // Only a document that may hold a key is copied to be blanked:
        // every write of the index (an import's every row) comes through here.
        let mut text = text;
        if wrapper.skip_json_keys && crate::text::may_hold_json_keys(bytes(text, length)) {
            wrapper.blanked.clear();
            wrapper.blanked.extend_from_slice(bytes(text, length));
            if crate::text::blank_json_keys(&mut wrapper.blanked) {
                text = wrapper.blanked.as_ptr().cast();
            }
        }
        wrapper.seen.clear();
        let mut forward = Forward { seen: &mut wrapper.seen, context, token };
        inner_tokenize(wrapper.instance, (&raw mut forward).cast(), flags, text, length, Some(forward_once))
    }
}

/// Passes a trigram on, with its first one and two characters, each the
/// first time the document yields it.
///
/// # Safety
/// Only the trigram tokenizer calls it, from within `tokenize`: `forward`
/// is the `Forward` passed down there, and `token` points at `length` bytes.
unsafe extern "C" fn forward_once(
    forward: *mut c_void,
    flags: c_int,
    token: *const c_char,
    length: c_int,
    start: c_int,
    end: c_int,
) -> c_int {
    // SAFETY: `forward` is the `Forward` that `tokenize` passed down, and
    // `token` points at `length` bytes.
    unsafe {
        let forward = &mut *forward.cast::<Forward>();
        let trigram = bytes(token, length);
        let mut pieces = [trigram, &[], &[]];
        if let Ok(text) = std::str::from_utf8(trigram) {
            let mut boundaries = text.char_indices().skip(1).map(|(at, _)| at);
            if let (Some(one), Some(two)) = (boundaries.next(), boundaries.next()) {
                pieces[1..].copy_from_slice(&[&trigram[..two], &trigram[..one]]);
            }
        }
        for piece in pieces.into_iter().filter(|p| !p.is_empty()) {
            // A piece seen before means its shorter prefixes were seen too.
            if pack(piece).is_some_and(|key| !forward.seen.insert(key)) {
                break;
            }
            let rc = (forward.token)(forward.context, flags, piece.as_ptr().cast(), piece.len() as c_int, start, end);
            if rc != ffi::SQLITE_OK {
                return rc;
            }
        }
        ffi::SQLITE_OK
    }
}

/// The `length` bytes at `text`, as FTS5 passes text; empty for none.
///
/// # Safety
/// A non-null `text` must point at `length` bytes that outlive the slice.
unsafe fn bytes<'a>(text: *const c_char, length: c_int) -> &'a [u8] {
    if text.is_null() || length <= 0 {
        return &[];
    }
    // SAFETY: promised by the caller.
    unsafe { std::slice::from_raw_parts(text.cast::<u8>(), length as usize) }
}

/// The length in bytes of the project mark `text` begins with, or 0.
fn leading_mark(text: &[u8]) -> usize {
    let mut mark = [0; 4];
    let mark = PROJECT_MARK.encode_utf8(&mut mark).as_bytes();
    let Some(rest) = text.strip_prefix(mark) else { return 0 };
    match rest.windows(mark.len()).position(|w| w == mark) {
        Some(end) => 2 * mark.len() + end,
        None => 0,
    }
}

/// A query text of one or two characters, folded to lower case as the
/// trigram tokenizer folds what it indexes.
fn short_query(text: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(text).ok()?;
    (1..=2).contains(&text.chars().count()).then(|| text.to_lowercase())
}

/// A token of up to 15 bytes (any trigram is at most 12) as one number, its
/// length in the top byte so that no two tokens share a key.
fn pack(bytes: &[u8]) -> Option<u128> {
    if bytes.len() > 15 {
        return None;
    }
    let mut key = [0u8; 16];
    key[..bytes.len()].copy_from_slice(bytes);
    key[15] = bytes.len() as u8;
    Some(u128::from_le_bytes(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An in-memory table `t` indexed with this tokenizer, holding `rows`.
    fn indexed(rows: &[&str]) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        assert_eq!(register(&conn).unwrap(), Support::Trigram);
        conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trae_mem', detail='none');").unwrap();
        for text in rows {
            conn.execute("INSERT INTO t(x) VALUES (?1)", [text]).unwrap();
        }
        conn
    }

    /// Each term of the index with the number of rows holding it.
    fn tokens_in_index(rows: &[&str]) -> Vec<(String, i64)> {
        let conn = indexed(rows);
        conn.execute_batch("CREATE VIRTUAL TABLE v USING fts5vocab(t, row);").unwrap();
        let mut stmt = conn.prepare("SELECT term, doc FROM v ORDER BY term").unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
    }

    #[test]
    fn each_piece_is_indexed_once_per_row_and_folded() {
        let tokens = |t: &str| t.split(' ').map(str::to_owned).collect::<Vec<_>>();
        let indexed = tokens_in_index(&["abcabc", "ABCd"]);
        let terms: Vec<String> = indexed.iter().map(|(term, _)| term.clone()).collect();
        // Without the two spaces the index appends, the last two characters begin no trigram.
        assert_eq!(terms, tokens("a ab abc b bc bca bcd c ca cab"));
        let in_both: Vec<&str> = indexed.iter().filter(|(_, docs)| *docs == 2).map(|(t, _)| t.as_str()).collect();
        assert_eq!(in_both, ["a", "ab", "abc", "b", "bc"]);
    }

    #[test]
    fn queries_match_as_with_the_plain_trigram_tokenizer() {
        let conn = indexed(&["缓存命中缓存", "cache miss"]);
        conn.execute_batch("INSERT INTO t(t) VALUES ('integrity-check');").unwrap();
        let count =
            |q: &str| -> i64 { conn.query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [q], |r| r.get(0)).unwrap() };
        assert_eq!(count("\"缓存命\""), 1);
        assert_eq!(count("\"MIS\" AND \"che\""), 1);
        assert_eq!(count("\"xyz\""), 0);
    }

    #[test]
    fn short_terms_are_single_tokens() {
        let conn = indexed(&["数据缓存  ", "DB lock  ", "数据  ", "nothing  "]);
        let rows = |q: &str| -> Vec<i64> {
            let mut stmt = conn.prepare("SELECT rowid FROM t WHERE t MATCH ?1 ORDER BY rowid").unwrap();
            stmt.query_map([q], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
        };
        assert_eq!(rows("\"缓存\""), vec![1]);
        assert_eq!(rows("\"存\""), vec![1]);
        assert_eq!(rows("\"数据\""), vec![1, 3]);
        assert_eq!(rows("\"db\""), vec![2]);
        assert_eq!(rows("\"k\""), vec![2]);
        assert_eq!(rows("\"zz\""), Vec::<i64>::new());
    }

    #[test]
    fn arguments_go_to_the_trigram_tokenizer() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        let err = conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trae_mem nosuch 1')").unwrap_err();
        assert!(err.to_string().contains("tokenize"), "{err}");
        conn.execute_batch(
            "CREATE VIRTUAL TABLE u USING fts5(x, tokenize='trae_mem case_sensitive 1', detail='none');
             INSERT INTO u(x) VALUES ('ABC');",
        )
        .unwrap();
        let found: i64 = conn.query_row("SELECT count(*) FROM u WHERE u MATCH '\"abc\"'", [], |r| r.get(0)).unwrap();
        assert_eq!(found, 0);
    }

    #[test]
    fn a_leading_project_mark_is_one_token_and_found_as_one() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trae_mem project_marks', detail='none');")
            .unwrap();
        let rows = [
            format!("{}cache miss", project_mark("/src/a")),
            format!("{}cache hit", project_mark("/src/a b")),
            // Only a leading mark files a row; an unclosed one is text.
            format!("cache {}", project_mark("/src/a")),
            format!("{PROJECT_MARK}/src/a cache"),
        ];
        for row in &rows {
            conn.execute("INSERT INTO t(x) VALUES (?1)", [row]).unwrap();
        }
        conn.execute_batch("INSERT INTO t(t) VALUES ('integrity-check');").unwrap();
        let found = |q: &str| -> Vec<i64> {
            let mut stmt = conn.prepare("SELECT rowid FROM t WHERE t MATCH ?1 ORDER BY rowid").unwrap();
            stmt.query_map([q], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
        };
        let mark = |project: &str| format!("\"{}\"", project_mark(project));
        assert_eq!(found(&format!("\"che\" AND {}", mark("/src/a"))), vec![1]);
        assert_eq!(found(&mark("/src/a b")), vec![2]);
        assert_eq!(found(&mark("/src")), Vec::<i64>::new());
        // The mark's path is not the row's text.
        assert_eq!(found("\"src\""), vec![3, 4]);
    }

    #[test]
    fn long_tokens_are_never_merged() {
        assert_ne!(pack(b"ab"), pack(b"ab\0"));
        assert_eq!(pack(&[b'x'; 16]), None);
    }
}
