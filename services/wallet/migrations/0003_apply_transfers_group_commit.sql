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
--   3. Items, in ascending key order (items with one key in arrival order). Check, then
--      write: look the key up (found: replay or key_conflict, nothing written); check every
--      posting against the balances, which nobody else can change now (refused: overdraft
--      or unknown, nothing written); only then insert the transfers row ON CONFLICT DO
--      NOTHING (a concurrent batch that inserted the same key meanwhile is waited for, and
--      then replayed) and move all balances and append all entries in one statement. Only
--      key inserts can wait in this phase; the account rows are already held.
--   4. Accounts created in phase 1 that no applied item credited (every item touching them
--      was refused) are deleted again: a refused transfer leaves no pot behind.
-- A refused item writes nothing (no subtransaction is needed: nothing to undo). An account
-- created in phase 1 but not yet credited by an applied item is "unknown" to an item that
-- debits it, as it would be without batching. Any error (not an outcome) fails the whole
-- statement, so the batch is all or nothing as a statement.
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
  v_refused_account text;
  v_locked text[];
  v_fast boolean := false;
  v_all_ok boolean;
  v_ids bigint[];
  v_f_items int[];
  v_f_accounts text[];
  v_f_amounts bigint[];
  v_f_balances bigint[];
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

  -- 2. Lock every account of the batch, ascending id. Only these rows are used below: an
  -- account another batch creates and commits after this point (invisible here) is
  -- unknown to this batch, as if this batch ran first, and is never written unlocked.
  SELECT coalesce(array_agg(l.id), '{}') INTO v_locked
    FROM (SELECT a.id FROM wallet.accounts a WHERE a.id = ANY (p_accounts)
           ORDER BY a.id COLLATE "C" FOR NO KEY UPDATE) AS l;

  -- 3a. Fast path, the common case: distinct keys none of which was used before, every
  -- account there (no account created by this batch is debited) and no non-house balance
  -- below zero after any item, in key order. Then every item is applied, exactly as the
  -- item loop below would apply them, with three statements for the whole batch; the
  -- balance after each posting is the running sum over the batch in key order.
  IF v_n = (SELECT count(DISTINCT k.key) FROM unnest(p_keys) AS k(key))
     AND NOT EXISTS (SELECT 1 FROM wallet.transfers t WHERE t.idempotency_key = ANY (p_keys)) THEN
    WITH ranked AS (
      SELECT u.i, row_number() OVER (ORDER BY u.key COLLATE "C", u.i) AS rank
        FROM unnest(p_keys) WITH ORDINALITY AS u(key, i)),
    post AS (
      SELECT p.it, p.acc, p.amt, r.rank,
             coalesce(a.id = ANY (v_locked)
                      AND (p.cr OR NOT (p.acc = ANY (v_created_accounts)))
                      AND (a.kind = 'house'
                           OR a.balance + sum(p.amt) OVER (PARTITION BY p.acc ORDER BY r.rank
                                                           ROWS UNBOUNDED PRECEDING) >= 0),
                      false) AS ok,
             a.balance + sum(p.amt) OVER (PARTITION BY p.acc ORDER BY r.rank
                                          ROWS UNBOUNDED PRECEDING) AS bal
        FROM unnest(p_post_items, p_accounts, p_amounts, p_creates) AS p(it, acc, amt, cr)
        JOIN ranked r ON r.i = p.it
        LEFT JOIN wallet.accounts a ON a.id = p.acc)
    SELECT bool_and(post.ok),
           array_agg(post.it ORDER BY post.rank, post.acc COLLATE "C"),
           array_agg(post.acc ORDER BY post.rank, post.acc COLLATE "C"),
           array_agg(post.amt ORDER BY post.rank, post.acc COLLATE "C"),
           array_agg(post.bal ORDER BY post.rank, post.acc COLLATE "C")
      INTO v_all_ok, v_f_items, v_f_accounts, v_f_amounts, v_f_balances
      FROM post;
    IF v_all_ok THEN
      BEGIN
        -- Keys inserted in ascending order (the global lock order); a concurrent batch
        -- that inserted one of them meanwhile makes this a unique violation: then this
        -- block is undone and the item loop sorts the batch out (replaying that key).
        WITH ins AS (
          INSERT INTO wallet.transfers AS t (idempotency_key, fingerprint, table_id, round, reason)
            SELECT p_keys[u.i], p_fingerprints[u.i], p_table_ids[u.i], p_rounds[u.i],
                   p_reasons[u.i]
              FROM unnest(p_keys) WITH ORDINALITY AS u(key, i)
             ORDER BY u.key COLLATE "C", u.i
            RETURNING t.id, t.idempotency_key, t.created_at)
        SELECT array_agg(ins.id ORDER BY u.i), min(ins.created_at) INTO v_ids, v_created
          FROM ins JOIN unnest(p_keys) WITH ORDINALITY AS u(key, i)
            ON u.key = ins.idempotency_key;
        UPDATE wallet.accounts a SET balance = a.balance + d.delta
          FROM (SELECT p.acc, sum(p.amt) AS delta
                  FROM unnest(p_accounts, p_amounts) AS p(acc, amt) GROUP BY p.acc) AS d
         WHERE a.id = d.acc;
        INSERT INTO wallet.entries (transfer_id, account_id, amount, balance_after)
          SELECT v_ids[f.it], f.acc, f.amt, f.bal
            FROM unnest(v_f_items, v_f_accounts, v_f_amounts, v_f_balances)
                 WITH ORDINALITY AS f(it, acc, amt, bal, n)
           ORDER BY f.n;
        v_fast := true;
      EXCEPTION WHEN unique_violation THEN
        v_fast := false;
      END;
    END IF;
    IF v_fast THEN
      RETURN QUERY SELECT f.it, 'ok'::text, v_ids[f.it], false, v_created, f.acc, f.bal
        FROM unnest(v_f_items, v_f_accounts, v_f_balances) AS f(it, acc, bal);
    END IF;
  END IF;

  -- 3b. Otherwise items one by one, ascending key. Check, then write: a refused item writes nothing, so no
  -- subtransaction is needed (every account row is held since phase 2, so the balances
  -- read by the check cannot change before the write).
  FOR v_item IN
    SELECT k.i FROM unnest(p_keys) WITH ORDINALITY AS k(key, i)
     WHERE NOT v_fast ORDER BY k.key COLLATE "C", k.i
  LOOP
    v_id := NULL;
    -- The key applied before (by an earlier item of this batch, too): replay or conflict.
    SELECT t.id, t.fingerprint, t.created_at INTO v_id, v_fingerprint, v_created
      FROM wallet.transfers t WHERE t.idempotency_key = p_keys[v_item];
    IF v_id IS NULL THEN
      -- The first refusing posting in account order, as 0002 applied them one by one.
      SELECT r.acc, r.refusal INTO v_refused_account, v_outcome
        FROM (SELECT p.acc,
                     CASE WHEN a.id IS NULL OR a.id <> ALL (v_locked) THEN 'unknown'
                          WHEN NOT p.cr AND a.id = ANY (v_created_accounts) AND NOT EXISTS (
                                 SELECT 1 FROM wallet.entries e WHERE e.account_id = a.id)
                            THEN 'unknown'  -- created by this batch, not yet credited
                          WHEN a.kind <> 'house' AND a.balance + p.amt < 0 THEN 'overdraft'
                     END AS refusal
                FROM unnest(p_post_items, p_accounts, p_amounts, p_creates) AS p(it, acc, amt, cr)
                LEFT JOIN wallet.accounts a ON a.id = p.acc
               WHERE p.it = v_item) AS r
       WHERE r.refusal IS NOT NULL
       ORDER BY r.acc COLLATE "C" LIMIT 1;
      IF FOUND THEN
        RETURN QUERY SELECT v_item, v_outcome, NULL::bigint, false, NULL::timestamptz,
                            v_refused_account, NULL::bigint;
        CONTINUE;
      END IF;
      INSERT INTO wallet.transfers AS t (idempotency_key, fingerprint, table_id, round, reason)
        VALUES (p_keys[v_item], p_fingerprints[v_item], p_table_ids[v_item], p_rounds[v_item],
                p_reasons[v_item])
        ON CONFLICT (idempotency_key) DO NOTHING
        RETURNING t.id, t.created_at INTO v_id, v_created;
      IF v_id IS NOT NULL THEN
        -- All balances and entries of the item in one statement.
        RETURN QUERY
          WITH moved AS (
            UPDATE wallet.accounts a SET balance = a.balance + p.amt
              FROM unnest(p_post_items, p_accounts, p_amounts) AS p(it, acc, amt)
             WHERE p.it = v_item AND a.id = p.acc
            RETURNING a.id AS acc, p.amt, a.balance AS bal),
          appended AS (
            INSERT INTO wallet.entries (transfer_id, account_id, amount, balance_after)
              SELECT v_id, m.acc, m.amt, m.bal FROM moved m
            RETURNING 1)
          SELECT v_item, 'ok'::text, v_id, false, v_created, m.acc::text, m.bal
            FROM moved m ORDER BY m.acc COLLATE "C";
        CONTINUE;
      END IF;
      -- A concurrent batch committed the key after the lookup above (the insert waited for
      -- it): replay or conflict, as below.
      SELECT t.id, t.fingerprint, t.created_at INTO v_id, v_fingerprint, v_created
        FROM wallet.transfers t WHERE t.idempotency_key = p_keys[v_item];
    END IF;
    IF v_fingerprint = p_fingerprints[v_item] THEN
      RETURN QUERY SELECT v_item, 'ok'::text, v_id, true, v_created, e.account_id::text,
                          e.balance_after
        FROM wallet.entries e WHERE e.transfer_id = v_id ORDER BY e.account_id;
    ELSE
      RETURN QUERY SELECT v_item, 'key_conflict'::text, v_id, true, v_created, NULL::text,
                          NULL::bigint;
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
