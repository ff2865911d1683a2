-- herald-conduit fleet schema, version 2 (docs/conduit.md, "Fleet"):
-- the lifecycle index of GET /v1/keys/{sigil} (CONDUIT.md, PROFILE P15).
-- One row per accepted birth, molt and deprecation, written in the
-- accepting transaction with its envelope: the sender's identity (10-byte
-- key-hash prefix, as for inboxes), its arrival number, its kind (1 birth,
-- 2 molt, 3 deprecation) and its id. The rows of the envelopes stored
-- before this version are written by the conduit that applies it, in the
-- same transaction (herald-conduit fleet/schema.rs).
CREATE TABLE lifecycle_envelopes (
    identity bytea    NOT NULL CHECK (octet_length(identity) = 10),
    arrival  bigint   NOT NULL,
    kind     smallint NOT NULL CHECK (kind BETWEEN 1 AND 3),
    id       bytea    NOT NULL CHECK (octet_length(id) = 32),
    PRIMARY KEY (identity, arrival)
);
