-- Each vector names its row's session, and an index finds a session's
-- vectors. A search of one project, and prompt memory, then read that
-- project's vectors alone: before, they walked every row of the project
-- to probe for the few with a vector (50k probes, 19 ms, for a project of
-- twenty at a million rows, where a search of all projects read its
-- vectors in less). A row never changes session; the trigger below drops
-- its vector if it ever did. Filling takes about a second at a million
-- rows, once.
ALTER TABLE vectors ADD COLUMN session_id TEXT;
UPDATE vectors SET session_id = (SELECT o.session_id FROM observations o WHERE o.id = vectors.row_id)
 WHERE source = 0;
UPDATE vectors SET session_id = (SELECT sm.session_id FROM summaries sm WHERE sm.id = vectors.row_id)
 WHERE source = 1;
CREATE INDEX vectors_by_session ON vectors(session_id, source);

DROP TRIGGER vectors_observation_changed;
CREATE TRIGGER vectors_observation_changed AFTER UPDATE OF content, private, kind, session_id ON observations BEGIN
    DELETE FROM vectors WHERE source = 0 AND row_id = old.id;
END;
DROP TRIGGER vectors_summary_changed;
CREATE TRIGGER vectors_summary_changed AFTER UPDATE OF content, session_id ON summaries BEGIN
    DELETE FROM vectors WHERE source = 1 AND row_id = old.id;
END;
