-- herald-conduit fleet schema, version 1 (docs/conduit.md, "Fleet").
-- Applied once, in one transaction, by the first conduit that starts
-- against the database; versions are recorded in schema_migrations.

-- key -> value: 'log_key' = the Ed25519 public key every conduit of the
-- fleet signs with (receipts, refusals, tree heads); a conduit with
-- another key is refused at start.
CREATE TABLE meta (
    key   text PRIMARY KEY,
    value bytea NOT NULL
);

-- P10 replay cache: one row per claimed (from key, nonce). The primary key
-- is the exactness: INSERT ... ON CONFLICT decides fresh or replayed.
CREATE TABLE replay (
    signer       bytea  NOT NULL CHECK (octet_length(signer) = 32),
    nonce        bytea  NOT NULL CHECK (octet_length(nonce) = 16),
    retain_until bigint NOT NULL,
    PRIMARY KEY (signer, nonce)
);

-- P8 lifecycle: identity (10-byte key-hash prefix) -> its witnessed record
-- (herald-verify's P1 encoding); molts: molt envelope id -> identity.
CREATE TABLE lifecycle (
    identity bytea PRIMARY KEY CHECK (octet_length(identity) = 10),
    record   bytea NOT NULL
);
CREATE TABLE molts (
    id       bytea PRIMARY KEY CHECK (octet_length(id) = 32),
    identity bytea NOT NULL
);

-- The single-row arrival counter: the next arrival number (= leaf index).
-- Every accepting transaction locks it first (SELECT ... FOR UPDATE), so
-- accepting transactions of the whole fleet are serialised: arrival
-- numbers and leaf indices are dense, and lifecycle reads and writes never
-- interleave (P8: two molts racing on two conduits end disputed).
CREATE TABLE arrivals (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    next     bigint  NOT NULL CHECK (next >= 0)
);
INSERT INTO arrivals (next) VALUES (0);

-- Accepted envelopes as forwarded, by id; arrival = leaf index.
CREATE TABLE envelopes (
    id      bytea  PRIMARY KEY CHECK (octet_length(id) = 32),
    arrival bigint NOT NULL UNIQUE,
    trace   bytea  NOT NULL,
    bytes   bytea  NOT NULL
);
CREATE INDEX envelopes_by_trace ON envelopes (trace, arrival);

-- The audit log's leaves (P9 leaf bytes), appended in the accepting
-- transaction: seq is dense from 0 (the arrival number).
CREATE TABLE log_leaves (
    seq  bigint PRIMARY KEY CHECK (seq >= 0),
    id   bytea  NOT NULL UNIQUE,
    leaf bytea  NOT NULL
);

-- Inboxes: positions dense from 1 per recipient (10-byte key-hash prefix),
-- taken from inbox_len in the accepting transaction.
CREATE TABLE inbox_len (
    recipient bytea  PRIMARY KEY CHECK (octet_length(recipient) = 10),
    len       bigint NOT NULL
);
CREATE TABLE inbox (
    recipient bytea  NOT NULL,
    position  bigint NOT NULL CHECK (position >= 1),
    id        bytea  NOT NULL REFERENCES envelopes (id),
    PRIMARY KEY (recipient, position)
);

-- The 201 body first sent for an id (spec 11.3: a repeat gets it again).
CREATE TABLE answers (
    id   bytea PRIMARY KEY,
    body bytea NOT NULL
);

-- Signed tree heads, written only by the sequencer (the holder of the
-- log's advisory lock): one per tree size (re-signed with a later ts while
-- the log is idle). Every head is of a prefix of log_leaves.
CREATE TABLE tree_heads (
    size bigint PRIMARY KEY CHECK (size >= 1),
    root bytea  NOT NULL,
    sth  bytea  NOT NULL
);
