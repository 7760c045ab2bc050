-- apply_transfer undoes a refused transfer itself, so the wallet runs it in autocommit: one
-- round trip per transfer instead of three (BEGIN, SELECT, COMMIT). Same signature, same
-- rows, same lock order as 0001; only "the caller MUST roll back" is gone.
--
-- Applies one transfer in one statement; the statement's own atomicity makes it all or
-- nothing, so the caller may run it in autocommit.
--   p_accounts/p_amounts: the postings (stored account ids, signed amounts, sum zero);
--   p_create: credited accounts (pots, a new player) to create if missing.
-- Returns rows (outcome, transfer_id, replayed, created_at, account_id, balance_after):
--   'ok'           one row per posting, sorted by account (replayed: the key was applied
--                  before; then the stored result comes back and nothing moves);
--   'overdraft'    one row: account_id would go below zero;
--   'unknown'      one row: account_id does not exist;
--   'key_conflict' one row: the key was used before for a different request.
-- Any outcome but 'ok' has written nothing: the work runs in a block with an exception
-- handler (a subtransaction), and a refusal raises CP010 inside it, which undoes the
-- transfers row, the pots created and the balances already moved; the outcome then comes
-- back as a row (expected outcomes are rows, not errors, so their codes stay exact).
-- Locks: as before, account rows are locked by their UPDATE (or upsert) one by one in "C"
-- order of id, so two transfers always lock in the same global order and cannot deadlock;
-- the only lock taken before them is the key's unique-index entry, which only a transfer
-- with the same key waits for, and that one holds no row lock yet. A refused transfer
-- releases its row locks when its subtransaction rolls back.
CREATE OR REPLACE FUNCTION wallet.apply_transfer(
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
  v_refusal text;           -- 'overdraft' or 'unknown' once refused
  v_refused_account text;
BEGIN
  IF (SELECT coalesce(sum(a), 0) FROM unnest(p_amounts) AS a) <> 0 THEN
    RAISE EXCEPTION 'postings do not sum to zero';
  END IF;
  BEGIN
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
          v_refused_account := v_account;
          v_refusal := CASE WHEN EXISTS (SELECT 1 FROM wallet.accounts a WHERE a.id = v_account)
                            THEN 'overdraft' ELSE 'unknown' END;
          RAISE EXCEPTION USING ERRCODE = 'CP010', MESSAGE = 'transfer refused: ' || v_refusal;
        END IF;
      END IF;
      v_accounts := v_accounts || v_account;
      v_amounts := v_amounts || v_amount;
      v_balances := v_balances || v_balance;
    END LOOP;
    INSERT INTO wallet.entries (transfer_id, account_id, amount, balance_after)
      SELECT v_id, x.acc, x.amt, x.bal
        FROM unnest(v_accounts, v_amounts, v_balances) AS x(acc, amt, bal);
  EXCEPTION WHEN SQLSTATE 'CP010' THEN
    -- Everything the block wrote is undone; the variables keep their values.
    RETURN QUERY SELECT v_refusal, v_id, false, v_created, v_refused_account, NULL::bigint;
    RETURN;
  END;
  RETURN QUERY SELECT 'ok'::text, v_id, false, v_created, x.acc, x.bal
    FROM unnest(v_accounts, v_balances) AS x(acc, bal);
END $$;
