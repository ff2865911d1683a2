-- herald-conduit fleet schema, version 4 (docs/conduit.md, "Retention
-- and erasure"; CONDUIT.md revision 3, spec 11.4). What remains of an
-- erased envelope besides its log leaf (log_leaves) and its replay claim
-- (replay): its tombstone, the refusal envelope (reason "erased") the
-- conduit signed when it erased it, and its recipient's 10 key-hash bytes
-- so that the recipient may read it too. An erasure deletes the id's
-- envelopes, inbox and answers rows and inserts this one, in one
-- transaction that holds the arrivals lock (as accepting transactions do),
-- so an accepting transaction sees an id either stored or erased.
CREATE TABLE erased (
    id        bytea  PRIMARY KEY CHECK (octet_length(id) = 32),
    recipient bytea  CHECK (recipient IS NULL OR octet_length(recipient) = 10),
    erased_at bigint NOT NULL,
    tombstone bytea  NOT NULL
);
