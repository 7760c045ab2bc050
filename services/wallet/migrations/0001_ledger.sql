-- The coin ledger: accounts with maintained balances, transfers keyed by idempotency key,
-- and append-only entries (one per account per transfer). Invariants:
--   * entries and transfers are never updated or deleted (triggers below);
--   * every transfer's entries sum to zero, so the sum of all balances is always zero;
--   * only house shards may have a negative balance (CHECK).
CREATE SCHEMA IF NOT EXISTS wallet;

CREATE TABLE wallet.accounts (
  id         text PRIMARY KEY COLLATE "C",
  kind       text NOT NULL CHECK (kind IN ('player', 'house', 'pot')),
  balance    bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT non_house_not_negative CHECK (kind = 'house' OR balance >= 0)
);

CREATE TABLE wallet.transfers (
  id              bigserial PRIMARY KEY,
  idempotency_key text NOT NULL UNIQUE,
  fingerprint     text NOT NULL,  -- canonical form of the request, to refuse a reused key
  table_id        text NOT NULL DEFAULT '',
  round           bigint NOT NULL DEFAULT 0,
  reason          text NOT NULL DEFAULT '',
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE wallet.entries (
  id            bigserial PRIMARY KEY,
  transfer_id   bigint NOT NULL REFERENCES wallet.transfers (id),
  account_id    text NOT NULL COLLATE "C" REFERENCES wallet.accounts (id),
  amount        bigint NOT NULL CHECK (amount <> 0),
  balance_after bigint NOT NULL,
  UNIQUE (transfer_id, account_id)
);
CREATE INDEX entries_by_account ON wallet.entries (account_id, id);

-- Append-only: refuse UPDATE, DELETE and TRUNCATE of the ledger for every role, owner too.
CREATE FUNCTION wallet.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'wallet.% is append-only (% refused)', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'CP009';
END $$;
CREATE TRIGGER entries_append_only BEFORE UPDATE OR DELETE ON wallet.entries
  FOR EACH ROW EXECUTE FUNCTION wallet.refuse_change();
CREATE TRIGGER entries_no_truncate BEFORE TRUNCATE ON wallet.entries
  FOR EACH STATEMENT EXECUTE FUNCTION wallet.refuse_change();
CREATE TRIGGER transfers_append_only BEFORE UPDATE OR DELETE ON wallet.transfers
  FOR EACH ROW EXECUTE FUNCTION wallet.refuse_change();
CREATE TRIGGER transfers_no_truncate BEFORE TRUNCATE ON wallet.transfers
  FOR EACH STATEMENT EXECUTE FUNCTION wallet.refuse_change();

-- Applies one transfer, in one round trip; the caller's transaction makes it atomic.
--   p_accounts/p_amounts: the postings (stored account ids, signed amounts, sum zero);
--   p_create: credited accounts (pots, a new player) to create if missing.
-- Returns rows (outcome, transfer_id, replayed, created_at, account_id, balance_after):
--   'ok'           one row per posting, sorted by account (replayed: the key was applied
--                  before; then the stored result comes back and nothing moves);
--   'overdraft'    one row: account_id would go below zero;
--   'unknown'      one row: account_id does not exist;
--   'key_conflict' one row: the key was used before for a different request.
-- After any outcome but 'ok' the caller MUST roll back: earlier postings may have been
-- written. (Expected outcomes are rows, not exceptions, so their codes stay exact.)
-- Locks: account rows are locked by their UPDATE (or upsert) one by one in "C" order of
-- id, so two transfers always lock in the same global order and cannot deadlock. The only
-- lock taken before them is the key's unique-index entry, which only a transfer with the
-- same key waits for, and that one holds no row lock yet.
CREATE FUNCTION wallet.apply_transfer(
    p_key text, p_fingerprint text, p_table_id text, p_round bigint, p_reason text,
    p_accounts text[], p_amounts bigint[], p_create text[])
RETURNS TABLE (outcome text, transfer_id bigint, replayed boolean, created_at timestamptz,
               account_id text, balance_after bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_id bigint;
  v_fingerprint text;
  v_created timestamptz;
  v_account text;
  v_amount bigint;
  v_balance bigint;
  v_accounts text[] := '{}';
  v_amounts bigint[] := '{}';
  v_balances bigint[] := '{}';
BEGIN
  IF (SELECT coalesce(sum(a), 0) FROM unnest(p_amounts) AS a) <> 0 THEN
    RAISE EXCEPTION 'postings do not sum to zero';
  END IF;
  INSERT INTO wallet.transfers AS t (idempotency_key, fingerprint, table_id, round, reason)
    VALUES (p_key, p_fingerprint, p_table_id, p_round, p_reason)
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING t.id, t.created_at INTO v_id, v_created;
  IF v_id IS NULL THEN
    SELECT t.id, t.fingerprint, t.created_at INTO v_id, v_fingerprint, v_created
      FROM wallet.transfers t WHERE t.idempotency_key = p_key;
    IF v_fingerprint <> p_fingerprint THEN
      RETURN QUERY SELECT 'key_conflict'::text, v_id, true, v_created, NULL::text, NULL::bigint;
      RETURN;
    END IF;
    RETURN QUERY SELECT 'ok'::text, v_id, true, v_created, e.account_id::text, e.balance_after
      FROM wallet.entries e WHERE e.transfer_id = v_id ORDER BY e.account_id;
    RETURN;
  END IF;
  FOR v_account, v_amount IN
    SELECT p.acc, p.amt FROM unnest(p_accounts, p_amounts) AS p(acc, amt)
    ORDER BY p.acc COLLATE "C"
  LOOP
    IF v_account = ANY (p_create) THEN
      INSERT INTO wallet.accounts AS a (id, kind, balance)
        VALUES (v_account, split_part(v_account, ':', 1), v_amount)
        ON CONFLICT (id) DO UPDATE SET balance = a.balance + EXCLUDED.balance
        RETURNING a.balance INTO v_balance;
    ELSE
      UPDATE wallet.accounts a SET balance = a.balance + v_amount
        WHERE a.id = v_account AND (a.kind = 'house' OR a.balance + v_amount >= 0)
        RETURNING a.balance INTO v_balance;
      IF NOT FOUND THEN
        RETURN QUERY SELECT
          CASE WHEN EXISTS (SELECT 1 FROM wallet.accounts a WHERE a.id = v_account)
               THEN 'overdraft' ELSE 'unknown' END,
          v_id, false, v_created, v_account, NULL::bigint;
        RETURN;
      END IF;
    END IF;
    v_accounts := v_accounts || v_account;
    v_amounts := v_amounts || v_amount;
    v_balances := v_balances || v_balance;
  END LOOP;
  INSERT INTO wallet.entries (transfer_id, account_id, amount, balance_after)
    SELECT v_id, x.acc, x.amt, x.bal FROM unnest(v_accounts, v_amounts, v_balances) AS x(acc, amt, bal);
  RETURN QUERY SELECT 'ok'::text, v_id, false, v_created, x.acc, x.bal
    FROM unnest(v_accounts, v_balances) AS x(acc, bal);
END $$;
