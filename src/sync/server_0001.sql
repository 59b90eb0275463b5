-- trae-mem's shared log. The server sees a hash of each project's key,
-- record ids, kinds, sequence numbers and sizes; the bodies are sealed.
CREATE SEQUENCE trae_mem_seq AS bigint;

CREATE TABLE trae_mem_records (
    project bytea    NOT NULL,  -- sha256 of the project's portable key
    seq     bigint   NOT NULL DEFAULT nextval('trae_mem_seq'),
    id      uuid     NOT NULL,  -- the record's global id
    kind    smallint NOT NULL,  -- 1 session, 2 observation, 3 summary, 4 tombstone
    nonce   bytea    NOT NULL,  -- 24 bytes; empty for a plaintext record
    body    bytea    NOT NULL,
    PRIMARY KEY (project, seq), -- the pull: one index range scan
    UNIQUE (project, id)        -- pushing twice inserts nothing twice
) PARTITION BY HASH (project);

-- Dropping the table drops its sequence.
ALTER SEQUENCE trae_mem_seq OWNED BY trae_mem_records.seq;

DO $$
BEGIN
    FOR i IN 0..15 LOOP
        EXECUTE format(
            'CREATE TABLE trae_mem_records_%s PARTITION OF trae_mem_records FOR VALUES WITH (MODULUS 16, REMAINDER %s)',
            i, i);
    END LOOP;
END $$;
