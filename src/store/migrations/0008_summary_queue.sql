-- Summaries by a language model (a summarizer plugin granted HTTP
-- endpoints) are written off the hooks' path: SessionEnd, or the catch-up
-- of a session that never ended, queues the session here, and a background
-- `trae-mem summarize --pending` asks the model. The built-in summaries
-- stand until then. A session's entry goes with the session.
CREATE TABLE summary_queue (
    session_id  TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    queued_at   INTEGER NOT NULL,
    -- The summarizer's [[plugins]] declaration and the [summarize]
    -- settings the session was queued under, as JSON: the worker runs it as
    -- the hook would have, whichever directory it starts in.
    plugin      TEXT NOT NULL,
    settings    TEXT NOT NULL,
    -- Failed tries so far; the next is not before `next_try_at`.
    tries       INTEGER NOT NULL DEFAULT 0,
    next_try_at INTEGER NOT NULL,
    -- 'pending', 'done', or 'given_up' after too many failures.
    state       TEXT NOT NULL DEFAULT 'pending',
    last_error  TEXT,
    -- Why a pending entry waits, when not for a retry ('budget').
    waiting     TEXT
);
CREATE INDEX summary_queue_due ON summary_queue(state, next_try_at);

-- Tokens spent on summaries per UTC day, for `[summarize] max_tokens_per_day`.
CREATE TABLE summary_spend (
    day    TEXT PRIMARY KEY,
    tokens INTEGER NOT NULL
) WITHOUT ROWID;
