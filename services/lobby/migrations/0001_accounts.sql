-- Accounts: players, the devices that sign them in, refresh tokens, and the audit of admin
-- grants (docs/lobby.md "Accounts and tokens"). Secrets are never stored: devices and
-- refresh tokens are keyed by a 32-byte BLAKE2b hash of the secret (auth::SecretHash).
CREATE SCHEMA IF NOT EXISTS lobby;

CREATE TABLE lobby.players (
  id            text PRIMARY KEY COLLATE "C" CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  display_name  text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 64),
  avatar_id     integer NOT NULL DEFAULT 1 CHECK (avatar_id >= 1),
  role          text NOT NULL DEFAULT 'player' CHECK (role IN ('player', 'admin')),
  -- The wallet's OpenAccount succeeded (the starting grant was paid); until then every
  -- GuestLogin of the device calls it again (it is idempotent in the wallet).
  wallet_opened boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL
);
CREATE INDEX players_admins ON lobby.players (id) WHERE role = 'admin';

-- A device secret signs in one player. The foreign key is checked at commit, so sign-in
-- inserts the device first (ON CONFLICT decides the race between two logins of one device)
-- and then its player, in one transaction.
CREATE TABLE lobby.devices (
  secret_hash   bytea PRIMARY KEY CHECK (length(secret_hash) = 32),
  player_id     text NOT NULL COLLATE "C"
                REFERENCES lobby.players (id) DEFERRABLE INITIALLY DEFERRED,
  created_at    timestamptz NOT NULL,
  last_login_at timestamptz NOT NULL
);
CREATE INDEX devices_player ON lobby.devices (player_id);

-- Single use: a refresh marks its token used (and stores the next one) in one transaction.
CREATE TABLE lobby.refresh_tokens (
  token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
  player_id  text NOT NULL COLLATE "C" REFERENCES lobby.players (id),
  issued_at  timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);
CREATE INDEX refresh_tokens_player ON lobby.refresh_tokens (player_id, expires_at);

-- Every grant and revoke by courtpiece-admin: who (operator), when, what, why. Append-only.
CREATE TABLE lobby.admin_grants (
  id        bigserial PRIMARY KEY,
  player_id text NOT NULL COLLATE "C" REFERENCES lobby.players (id),
  action    text NOT NULL CHECK (action IN ('grant', 'revoke')),
  operator  text NOT NULL CHECK (char_length(operator) BETWEEN 1 AND 128),
  reason    text NOT NULL CHECK (char_length(reason) BETWEEN 1 AND 500),
  at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX admin_grants_player ON lobby.admin_grants (player_id, id);

CREATE FUNCTION lobby.admin_grants_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'lobby.admin_grants is append-only';
END $$;
CREATE TRIGGER admin_grants_append_only BEFORE UPDATE OR DELETE ON lobby.admin_grants
  FOR EACH ROW EXECUTE FUNCTION lobby.admin_grants_append_only();
