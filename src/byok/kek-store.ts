import { createHash } from "node:crypto";
import { xchacha20poly1305 } from "@noble/ciphers/chacha.js";
import { randomBytes } from "@noble/hashes/utils.js";
import type { Sql } from "../db/connect-database";
import { currentKek, findKek, insertFirstCurrentKek, lockKekRotation, replaceCurrentKek, type CurrentKekRow, type NewKek } from "../db/queries/byok-keks";
import { generateKeyPair, SealedBoxError, sealedBoxOpen, sealedBoxSeal } from "./sealed-box";

/** Any fixed 64-bit number; every instance uses it to serialise KEK rotations. */
const ROTATION_LOCK_KEY = 7_301_994_220_161n;
const NONCE_BYTES = 24;

export interface KekInfo {
  kek_id: string;
  public_key: string;
  created_at: string;
}

interface Kek {
  kekId: string;
  publicKey: Uint8Array;
  secretKey: Uint8Array;
}

/** An opaque fingerprint of the public key: the first 16 bytes of its SHA-256, in hex. */
function kekIdOf(publicKey: Uint8Array): string {
  return "kek_" + createHash("sha256").update(publicKey).digest("hex").slice(0, 32);
}

/** A KEK's private key unwrapped with `masterKey`, or undefined when that key did not wrap it. */
function unwrap(masterKey: Uint8Array, kekId: string, wrapped: Uint8Array): Uint8Array | undefined {
  try {
    return xchacha20poly1305(masterKey, wrapped.subarray(0, NONCE_BYTES), new TextEncoder().encode(kekId)).decrypt(wrapped.subarray(NONCE_BYTES));
  } catch {
    return undefined;
  }
}

const infoOf = (row: CurrentKekRow): KekInfo => ({
  kek_id: row.kek_id,
  public_key: Buffer.from(row.public_key).toString("base64"),
  created_at: row.created_at.toISOString(),
});

/**
 * The BYOK key-encryption keys, shared by every instance through the database. Exactly one
 * is current (customers seal to it); older ones keep opening what was sealed to them.
 * Private keys are unwrapped with the master key on first use and kept in memory by id
 * (a KEK never changes once made).
 */
export class KekStore {
  private readonly unwrapped = new Map<string, Kek>();
  private master: Uint8Array | undefined;

  /**
   * `masterKey` is called once, on first need: a server that never touches BYOK never
   * creates one. `previousMasterKey` (BYOK_MASTER_KEY_PREVIOUS, during a master-key
   * rotation) only unwraps: a KEK the current key does not open is tried with it, and
   * every new KEK is wrapped with the current key.
   */
  constructor(
    private readonly sql: Sql,
    private readonly masterKey: () => Uint8Array,
    private readonly previousMasterKey?: Uint8Array,
  ) {}

  private get masterKeyBytes(): Uint8Array {
    return (this.master ??= this.masterKey());
  }

  /** The current KEK's public half, created on first need (one winner across instances). */
  async current(): Promise<KekInfo> {
    const existing = await currentKek(this.sql);
    if (existing) return infoOf(existing);
    // A concurrent creator's row wins the partial unique index; ours is dropped.
    await insertFirstCurrentKek(this.sql, this.newKek());
    return infoOf((await currentKek(this.sql))!);
  }

  /** Makes a new current KEK; the previous one is kept (retired_at set) and still opens its boxes. */
  async rotate(): Promise<KekInfo> {
    return this.sql.begin(async (transaction) => {
      const tx = transaction as unknown as Sql;
      await lockKekRotation(tx, ROTATION_LOCK_KEY);
      await replaceCurrentKek(tx, this.newKek());
      return infoOf((await currentKek(tx))!);
    });
  }

  /** Opens a box sealed to the KEK `kekId`; SealedBoxError when it does not open or the KEK is unknown. */
  async open(kekId: string, box: Uint8Array): Promise<Uint8Array> {
    const kek = await this.load(kekId);
    if (!kek) throw new SealedBoxError(`unknown kek_id`);
    return sealedBoxOpen(box, kek.publicKey, kek.secretKey);
  }

  /** Seals `message` to the KEK `kekId` (re-sealing under the current KEK). */
  async seal(kekId: string, message: Uint8Array): Promise<Uint8Array> {
    const kek = await this.load(kekId);
    if (!kek) throw new SealedBoxError(`unknown kek_id`);
    return sealedBoxSeal(message, kek.publicKey);
  }

  /** A fresh key pair with its private half wrapped by the master key (the kek_id as associated data). */
  private newKek(): NewKek {
    const pair = generateKeyPair();
    const kekId = kekIdOf(pair.publicKey);
    const nonce = randomBytes(NONCE_BYTES);
    const sealed = xchacha20poly1305(this.masterKeyBytes, nonce, new TextEncoder().encode(kekId)).encrypt(pair.secretKey);
    pair.secretKey.fill(0);
    return { kekId, publicKey: Buffer.from(pair.publicKey), wrappedKey: Buffer.concat([nonce, sealed]) };
  }

  private async load(kekId: string): Promise<Kek | undefined> {
    const cached = this.unwrapped.get(kekId);
    if (cached) return cached;
    const row = await findKek(this.sql, kekId);
    if (!row) return undefined;
    const wrapped = new Uint8Array(row.wrapped_private_key);
    const secretKey = unwrap(this.masterKeyBytes, row.kek_id, wrapped) ?? (this.previousMasterKey && unwrap(this.previousMasterKey, row.kek_id, wrapped));
    // Not a customer's fault: neither configured master key is the one that wrapped the KEK.
    if (!secretKey) throw new Error(`KEK ${row.kek_id} does not unwrap with this BYOK_MASTER_KEY${this.previousMasterKey ? " nor BYOK_MASTER_KEY_PREVIOUS" : ""}`);
    const kek = { kekId: row.kek_id, publicKey: new Uint8Array(row.public_key), secretKey };
    this.unwrapped.set(kekId, kek);
    return kek;
  }
}
