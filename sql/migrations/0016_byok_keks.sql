-- Key-encryption keys for BYOK (README "BYOK"). Customers seal their provider keys to
-- the current KEK's X25519 public key; the private key is stored wrapped with
-- BYOK_MASTER_KEY (XChaCha20-Poly1305: 24-byte random nonce ‖ ciphertext ‖ tag, the
-- kek_id as associated data), so every instance sharing this database shares the KEKs.
--
-- Exactly one KEK is current (the partial unique index): the first one is created on
-- first need by `insert … on conflict do nothing`, so two instances racing create one.
-- A rotated-out KEK keeps its private key and still opens what was sealed to it;
-- retired_at records when it stopped being current.

create table byok_keks (
  kek_id              text collate "C" primary key,
  public_key          bytea not null check (octet_length(public_key) = 32),
  wrapped_private_key bytea not null,
  is_current          boolean not null default false,
  created_at          timestamptz not null default now(),
  retired_at          timestamptz,
  check (not (is_current and retired_at is not null))
);

create unique index byok_keks_one_current on byok_keks (is_current) where is_current;

-- Re-sealing finds the keys still under an old KEK.
create index byok_keys_kek on byok_keys (kek_id);
