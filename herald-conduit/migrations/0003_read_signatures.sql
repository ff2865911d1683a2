-- herald-conduit fleet schema, version 3 (docs/conduit.md, "Who may read
-- what"; CONDUIT.md revision 3: each signature of a signed read once).
-- The replay window of signed reads, the fleet's: a signature (its first
-- 16 bytes) accepted by any conduit of the fleet, kept until its created
-- + 300 s; the primary key decides fresh or replayed, as for `replay`.
CREATE TABLE read_signatures (
    signature    bytea  PRIMARY KEY CHECK (octet_length(signature) = 16),
    retain_until bigint NOT NULL
);
CREATE INDEX read_signatures_by_expiry ON read_signatures (retain_until);
