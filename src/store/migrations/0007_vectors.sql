-- Meaning: one vector for each public row that states something (an
-- answer, a note, a decision, an error) and each brief summary, from the
-- embedding model `store_meta.vector_model` names. Computed off the hook's
-- path (`trae-mem embed`, and its background run after a turn), rebuilt
-- locally after a pull, never synced. A vector goes with its row, and with
-- any change to the row's text.
CREATE TABLE vectors (
    -- 0: an observation, 1: a summary.
    source    INTEGER NOT NULL,
    row_id    INTEGER NOT NULL,
    -- The scale (f32, little-endian), then one signed byte per dimension.
    embedding BLOB NOT NULL,
    PRIMARY KEY (source, row_id)
) WITHOUT ROWID;

CREATE TRIGGER vectors_observation_deleted AFTER DELETE ON observations BEGIN
    DELETE FROM vectors WHERE source = 0 AND row_id = old.id;
END;
CREATE TRIGGER vectors_observation_changed AFTER UPDATE OF content, private, kind ON observations BEGIN
    DELETE FROM vectors WHERE source = 0 AND row_id = old.id;
END;
CREATE TRIGGER vectors_summary_deleted AFTER DELETE ON summaries BEGIN
    DELETE FROM vectors WHERE source = 1 AND row_id = old.id;
END;
CREATE TRIGGER vectors_summary_changed AFTER UPDATE OF content ON summaries BEGIN
    DELETE FROM vectors WHERE source = 1 AND row_id = old.id;
END;
