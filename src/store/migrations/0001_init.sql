-- 0001: the data model of DESIGN.md.
-- Times are unix milliseconds (UTC). Session ids are UUIDs so that an export
-- from one machine imports into another without collisions.

CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    started_at   INTEGER NOT NULL,
    ended_at     INTEGER,
    project_path TEXT NOT NULL,
    meta_json    TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX sessions_project_started ON sessions(project_path, started_at);

-- A client's own session id, mapped to ours. The primary key is what keeps
-- many hook processes racing on a new session down to one local session.
CREATE TABLE session_keys (
    client       TEXT NOT NULL,
    project_path TEXT NOT NULL,
    external_id  TEXT NOT NULL,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    PRIMARY KEY (client, project_path, external_id)
) WITHOUT ROWID;
CREATE INDEX session_keys_session ON session_keys(session_id);

CREATE TABLE observations (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    ts         INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    tool_name  TEXT,
    content    TEXT NOT NULL,
    private    INTEGER NOT NULL DEFAULT 0 CHECK (private IN (0, 1)),
    tags_json  TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX observations_session_ts ON observations(session_id, ts);
-- Browsing without a query ("what happened lately") walks this one.
CREATE INDEX observations_ts ON observations(ts);

-- One brief and one detailed summary per session; re-summarizing replaces them.
CREATE TABLE summaries (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    level      TEXT NOT NULL CHECK (level IN ('brief', 'detailed')),
    content    TEXT NOT NULL,
    UNIQUE (session_id, level)
);

-- Facts about the store itself, such as which full-text index it was built with.
CREATE TABLE store_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
