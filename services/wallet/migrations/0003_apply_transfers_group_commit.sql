-- Group commit: wallet.apply_transfers applies a batch of transfers in ONE statement (the
-- wallet runs it in autocommit: one round trip and one WAL flush for the whole batch).
-- Every transfer keeps its own outcome, exactly as apply_transfer (0002) gives it: an
-- overdraft, an unknown account or a reused key of one item refuses that item only.
--
-- Arguments (items are numbered 1..n by their position in p_keys):
--   p_keys, p_fingerprints, p_table_ids, p_rounds, p_reasons: one element per item;
--   p_post_items, p_accounts, p_amounts, p_creates: one element per posting: its item, its
--     stored account id, its signed amount (each item's amounts sum to zero), and whether
--     the account is created when missing (a credited pot, the new player of OpenAccount).
-- Returns rows (item, outcome, transfer_id, replayed, created_at, account_id, balance_after),
-- for each item the rows apply_transfer (0002) returns for it:
--   'ok'           one row per posting, sorted by account (replayed: the key was applied
--                  before, possibly by an earlier item of the same batch; nothing moves);
--   'overdraft' / 'unknown'   one row naming the account;
--   'key_conflict' one row: the key was used before for a different request.
--
-- How, and why it cannot deadlock. The batch runs in four phases, and every lock a batch
-- may wait for is taken in one global order: accounts (ascending id, "C") strictly before
-- idempotency keys (ascending key, "C").
--   1. Create: the missing creatable accounts of the whole batch are inserted at balance 0
--      in ascending id order (one INSERT ... ORDER BY ... ON CONFLICT DO NOTHING). A waiter
--      here waits only for another batch's uncommitted insert of the same id, and holds
--      nothing but its own inserts of smaller ids.
--   2. Lock: every account of the batch is locked in ascending id order (one SELECT ...
--      ORDER BY ... FOR NO KEY UPDATE, the lock an UPDATE of the balance takes).
--   3. Items, in ascending key order (items with one key in arrival order), each in its
--      own subtransaction (a block with an exception handler, as 0002): insert the
--      transfers row ON CONFLICT DO NOTHING (an earlier item with the same key, or a
--      concurrent batch holding the key, is waited for), then move the balances. Only key
--      inserts can wait in this phase; the account rows are already held.
--   4. Accounts created in phase 1 that no applied item credited (every item touching them
--      was refused) are deleted again: a refused transfer leaves no pot behind.
-- A refused item raises CP010 inside its block, which undoes its transfers row and its
-- balance moves; its locks on account rows stay (they belong to the batch) until commit.
-- An account created in phase 1 but not yet credited by an applied item is "unknown" to
-- an item that debits it, as it would be without batching.
CREATE OR REPLACE FUNCTION wallet.apply_transfers(
    p_keys text[], p_fingerprints text[], p_table_ids text[], p_rounds bigint[],
    p_reasons text[], p_post_items int[], p_accounts text[], p_amounts bigint[],
    p_creates boolean[])
RETURNS TABLE (item int, outcome text, transfer_id bigint, replayed boolean,
               created_at timestamptz, account_id text, balance_after bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_n int := coalesce(cardinality(p_keys), 0);
  v_postings int := coalesce(cardinality(p_accounts), 0);
  v_created_accounts text[];
  v_item int;
  v_outcome text;
  v_id bigint;
  v_fingerprint text;
  v_created timestamptz;
  v_account text;
  v_amount bigint;
  v_create boolean;
  v_balance bigint;
  v_accounts text[];
  v_amounts bigint[];
  v_balances bigint[];
  v_refused_account text;
BEGIN
  IF coalesce(cardinality(p_fingerprints), 0) <> v_n OR coalesce(cardinality(p_table_ids), 0) <> v_n
     OR coalesce(cardinality(p_rounds), 0) <> v_n OR coalesce(cardinality(p_reasons), 0) <> v_n
     OR coalesce(cardinality(p_post_items), 0) <> v_postings
     OR coalesce(cardinality(p_amounts), 0) <> v_postings
     OR coalesce(cardinality(p_creates), 0) <> v_postings THEN
    RAISE EXCEPTION 'apply_transfers: array lengths differ';
  END IF;
  IF EXISTS (SELECT 1 FROM unnest(p_post_items, p_amounts) AS p(it, amt)
               GROUP BY p.it HAVING sum(p.amt) <> 0)
     OR EXISTS (SELECT 1 FROM generate_series(1, v_n) AS g(it)
                  WHERE g.it <> ALL (p_post_items)) THEN
    RAISE EXCEPTION 'postings do not sum to zero';
  END IF;

  -- 1. Create missing creatable accounts, ascending id.
  WITH inserted AS (
    INSERT INTO wallet.accounts AS a (id, kind, balance)
      SELECT c.acc, split_part(c.acc, ':', 1), 0
        FROM (SELECT DISTINCT p.acc FROM unnest(p_accounts, p_creates) AS p(acc, cr)
               WHERE p.cr) AS c
       ORDER BY c.acc COLLATE "C"
      ON CONFLICT (id) DO NOTHING
      RETURNING a.id)
  SELECT coalesce(array_agg(inserted.id), '{}') INTO v_created_accounts FROM inserted;

  -- 2. Lock every account of the batch, ascending id.
  PERFORM 1 FROM wallet.accounts a WHERE a.id = ANY (p_accounts)
    ORDER BY a.id COLLATE "C" FOR NO KEY UPDATE;

  -- 3. Items, ascending key.
  FOR v_item IN
    SELECT k.i FROM unnest(p_keys) WITH ORDINALITY AS k(key, i) ORDER BY k.key COLLATE "C", k.i
  LOOP
    v_outcome := 'ok';
    v_id := NULL;
    v_created := NULL;
    v_refused_account := NULL;
    v_accounts := '{}';
    v_amounts := '{}';
    v_balances := '{}';
    BEGIN
      INSERT INTO wallet.transfers AS t (idempotency_key, fingerprint, table_id, round, reason)
        VALUES (p_keys[v_item], p_fingerprints[v_item], p_table_ids[v_item], p_rounds[v_item],
                p_reasons[v_item])
        ON CONFLICT (idempotency_key) DO NOTHING
        RETURNING t.id, t.created_at INTO v_id, v_created;
      IF v_id IS NULL THEN
        SELECT t.id, t.fingerprint, t.created_at INTO v_id, v_fingerprint, v_created
          FROM wallet.transfers t WHERE t.idempotency_key = p_keys[v_item];
        v_outcome := CASE WHEN v_fingerprint = p_fingerprints[v_item] THEN 'replay'
                          ELSE 'key_conflict' END;
      ELSE
        FOR v_account, v_amount, v_create IN
          SELECT p.acc, p.amt, p.cr
            FROM unnest(p_post_items, p_accounts, p_amounts, p_creates) AS p(it, acc, amt, cr)
           WHERE p.it = v_item ORDER BY p.acc COLLATE "C"
        LOOP
          IF v_create THEN
            -- Exists since phase 1 (created there or before); a credit needs no check.
            UPDATE wallet.accounts a SET balance = a.balance + v_amount
              WHERE a.id = v_account RETURNING a.balance INTO v_balance;
            IF NOT FOUND THEN
              RAISE EXCEPTION 'apply_transfers: creatable account % missing', v_account;
            END IF;
          ELSE
            UPDATE wallet.accounts a SET balance = a.balance + v_amount
              WHERE a.id = v_account AND (a.kind = 'house' OR a.balance + v_amount >= 0)
              RETURNING a.balance INTO v_balance;
            IF NOT FOUND THEN
              v_refused_account := v_account;
              v_outcome := CASE
                WHEN NOT EXISTS (SELECT 1 FROM wallet.accounts a WHERE a.id = v_account) THEN 'unknown'
                WHEN v_account = ANY (v_created_accounts) AND NOT EXISTS (
                       SELECT 1 FROM wallet.entries e WHERE e.account_id = v_account) THEN 'unknown'
                ELSE 'overdraft' END;
              RAISE EXCEPTION USING ERRCODE = 'CP010', MESSAGE = 'transfer refused: ' || v_outcome;
            END IF;
          END IF;
          v_accounts := v_accounts || v_account;
          v_amounts := v_amounts || v_amount;
          v_balances := v_balances || v_balance;
        END LOOP;
        INSERT INTO wallet.entries (transfer_id, account_id, amount, balance_after)
          SELECT v_id, x.acc, x.amt, x.bal
            FROM unnest(v_accounts, v_amounts, v_balances) AS x(acc, amt, bal);
      END IF;
    EXCEPTION WHEN SQLSTATE 'CP010' THEN
      NULL;  -- everything the block wrote is undone; v_outcome names the refusal
    END;
    -- Rows are emitted only here, after the block: rows returned inside a block that is
    -- then rolled back would stay in the result.
    IF v_outcome = 'ok' THEN
      RETURN QUERY SELECT v_item, 'ok'::text, v_id, false, v_created, x.acc, x.bal
        FROM unnest(v_accounts, v_balances) AS x(acc, bal);
    ELSIF v_outcome = 'replay' THEN
      RETURN QUERY SELECT v_item, 'ok'::text, v_id, true, v_created, e.account_id::text,
                          e.balance_after
        FROM wallet.entries e WHERE e.transfer_id = v_id ORDER BY e.account_id;
    ELSIF v_outcome = 'key_conflict' THEN
      RETURN QUERY SELECT v_item, v_outcome, v_id, true, v_created, NULL::text, NULL::bigint;
    ELSE
      RETURN QUERY SELECT v_item, v_outcome, NULL::bigint, false, NULL::timestamptz,
                          v_refused_account, NULL::bigint;
    END IF;
  END LOOP;

  -- 4. No refused transfer leaves an account behind.
  IF cardinality(v_created_accounts) > 0 THEN
    DELETE FROM wallet.accounts a WHERE a.id = ANY (v_created_accounts)
      AND NOT EXISTS (SELECT 1 FROM wallet.entries e WHERE e.account_id = a.id);
  END IF;
END $$;

-- apply_transfer (0001/0002) becomes a batch of one, so that every writer takes its locks
-- in the same order (accounts, then keys) and the no-deadlock argument above covers it too
-- (0002 took the key first). Same signature, same rows.
CREATE OR REPLACE FUNCTION wallet.apply_transfer(
    p_key text, p_fingerprint text, p_table_id text, p_round bigint, p_reason text,
    p_accounts text[], p_amounts bigint[], p_create text[])
RETURNS TABLE (outcome text, transfer_id bigint, replayed boolean, created_at timestamptz,
               account_id text, balance_after bigint)
LANGUAGE sql AS $$
  SELECT r.outcome, r.transfer_id, r.replayed, r.created_at, r.account_id, r.balance_after
    FROM wallet.apply_transfers(
           ARRAY[p_key], ARRAY[p_fingerprint], ARRAY[p_table_id], ARRAY[p_round],
           ARRAY[p_reason], array_fill(1, ARRAY[coalesce(cardinality(p_accounts), 0)]),
           p_accounts, p_amounts,
           ARRAY(SELECT a.acc = ANY (p_create)
                   FROM unnest(p_accounts) WITH ORDINALITY AS a(acc, i) ORDER BY a.i)) AS r
$$;
