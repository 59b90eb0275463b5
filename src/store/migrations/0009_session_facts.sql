-- What each session did, as data that recall reads: what was asked and
-- concluded, what failed, the files touched, the tools run, and the counts
-- session start weighs sessions by. They are taken from the session's
-- public rows whenever its summaries are written, whoever wrote the prose,
-- so a plugin's or a model's summary is understood like the built-in's.
-- `facts` is JSON (`store::Facts`); a session's facts go with it.
CREATE TABLE session_facts (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    written_at INTEGER NOT NULL,
    facts      TEXT NOT NULL,
    -- It ran a tool or met an error. A session that did neither may have
    -- only asked memory, which prompt memory and search look for among a
    -- hundred sessions on a hook's path: the index answers for the rest
    -- without their facts being read.
    worked     INTEGER GENERATED ALWAYS AS
        (json_array_length(facts, '$.tools') + json_array_length(facts, '$.failed') > 0) VIRTUAL
);
CREATE INDEX session_facts_worked ON session_facts(session_id, worked);
