-- 0005: one memory per tool call. A PreToolUse note is kept here under its
-- tool call's id until the call's PostToolUse (or PostToolUseFailure)
-- arrives and takes its place; a call that never completes (denied,
-- interrupted) keeps its note. Forgetting the note forgets this row too.

CREATE TABLE pending_tools (
    session_id     TEXT NOT NULL,
    tool_use_id    TEXT NOT NULL,
    observation_id INTEGER NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
    PRIMARY KEY (session_id, tool_use_id)
) WITHOUT ROWID;

CREATE INDEX pending_tools_observation ON pending_tools(observation_id);
