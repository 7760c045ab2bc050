-- apply_transfers (0003) reaches every row by its key (accounts by id, transfers by
-- idempotency key, entries by account or transfer), but PL/pgSQL plans each statement once
-- per connection and keeps a generic plan. Planned while the ledger is small (a fresh
-- deployment, a test database), that plan scans whole tables, and keeps scanning them as
-- they grow, until an ANALYZE happens to replan it: measured on a fresh database at 16
-- clients, two sequential scans of accounts and one of transfers per batch. Sequential
-- scans are never the right plan inside this function, so they are switched off for it.
ALTER FUNCTION wallet.apply_transfers(text[], text[], text[], bigint[], text[], int[], text[],
                                      bigint[], boolean[])
  SET enable_seqscan = off;
