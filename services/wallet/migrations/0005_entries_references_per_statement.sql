-- The references of wallet.entries, checked once per statement instead of once per row.
--
-- The two foreign keys of 0001 (entries -> transfers, entries -> accounts) ran two checks
-- per entry row, each a query that also takes a KEY SHARE lock (and writes a WAL record)
-- on the row it finds: a batch of 8 stakes appends about 25 entries, and those 50 checks
-- were about a fifth of what wallet.apply_transfers cost Postgres (measured with
-- pg_stat_statements at 16 bench clients; docs/wallet.md, "References checked per
-- statement"). The same guarantees, kept by the triggers below:
--   * Every entry names an existing account and an existing transfer: checked for all rows
--     of an INSERT at once, at the end of the statement (the transition table new_entries);
--     a missing one fails the statement with foreign_key_violation (23503), as before.
--   * A referenced row cannot go away: transfers were already append-only (0001: UPDATE,
--     DELETE and TRUNCATE refused); an account with entries cannot be deleted (checked
--     per DELETE statement, 23503), its id cannot change, and accounts cannot be truncated.
-- Concurrency: the only writer of entries is wallet.apply_transfers, which holds every
-- account it posts to (FOR NO KEY UPDATE, phase 2) until it commits, so no concurrent DELETE
-- of such an account can run before the entries are visible; the DELETE check then runs
-- with a fresh snapshot and sees them. The transfers an INSERT names are its own,
-- inserted in the same statement's transaction, and cannot be deleted.
ALTER TABLE wallet.entries DROP CONSTRAINT entries_transfer_id_fkey,
                           DROP CONSTRAINT entries_account_id_fkey;

CREATE FUNCTION wallet.entries_check_references() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Counts over semi-joins: each id is one index probe (ids are unique), whatever the
  -- sizes of the tables (an anti-join form was planned as a scan of transfers).
  IF (SELECT count(DISTINCT n.account_id) FROM new_entries n)
       <> (SELECT count(*) FROM wallet.accounts a
            WHERE a.id IN (SELECT n.account_id FROM new_entries n))
     OR (SELECT count(DISTINCT n.transfer_id) FROM new_entries n)
       <> (SELECT count(*) FROM wallet.transfers t
            WHERE t.id IN (SELECT n.transfer_id FROM new_entries n)) THEN
    RAISE EXCEPTION 'wallet.entries: an entry names a missing account or transfer'
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
ALTER FUNCTION wallet.entries_check_references() SET enable_seqscan = off;
CREATE TRIGGER entries_references AFTER INSERT ON wallet.entries
  REFERENCING NEW TABLE AS new_entries
  FOR EACH STATEMENT EXECUTE FUNCTION wallet.entries_check_references();

CREATE FUNCTION wallet.accounts_check_unreferenced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM wallet.entries e
              WHERE e.account_id IN (SELECT o.id FROM deleted_accounts o)) THEN
    RAISE EXCEPTION 'wallet.accounts: an account with entries cannot be deleted'
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
ALTER FUNCTION wallet.accounts_check_unreferenced() SET enable_seqscan = off;
CREATE TRIGGER accounts_referenced_not_deleted AFTER DELETE ON wallet.accounts
  REFERENCING OLD TABLE AS deleted_accounts
  FOR EACH STATEMENT EXECUTE FUNCTION wallet.accounts_check_unreferenced();

CREATE FUNCTION wallet.accounts_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'wallet.accounts: % refused (an account''s id never changes and the table is never truncated)',
    TG_OP USING ERRCODE = 'CP009';
END $$;
-- "UPDATE OF id": fires only for an UPDATE that sets id, never for a balance update.
CREATE TRIGGER accounts_id_fixed BEFORE UPDATE OF id ON wallet.accounts
  FOR EACH ROW EXECUTE FUNCTION wallet.accounts_refuse_change();
CREATE TRIGGER accounts_no_truncate BEFORE TRUNCATE ON wallet.accounts
  FOR EACH STATEMENT EXECUTE FUNCTION wallet.accounts_refuse_change();
