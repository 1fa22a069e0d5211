import { x25519 } from "@noble/curves/ed25519.js";
import { hsalsa, xsalsa20poly1305 } from "@noble/ciphers/salsa.js";
import { blake2b } from "@noble/hashes/blake2.js";
import { randomBytes } from "@noble/hashes/utils.js";

/**
 * libsodium's sealed box (`crypto_box_seal` / `crypto_box_seal_open`), so that whatever a
 * customer seals with libsodium or PyNaCl's `SealedBox` opens here, and back
 * (https://doc.libsodium.org/public-key_cryptography/sealed_boxes):
 *
 *   box   = ephemeral_pk (32) ‖ Poly1305 tag (16) ‖ XSalsa20 ciphertext (message length)
 *   nonce = BLAKE2b with a 24-byte output over ephemeral_pk ‖ recipient_pk (never sent)
 *   key   = HSalsa20(X25519(ephemeral_sk, recipient_pk), 16 zero bytes), which is
 *           libsodium's `crypto_box_beforenm`
 *
 * The sender throws its ephemeral secret away, so only the recipient's secret key opens it.
 */

export const SEALED_BOX_OVERHEAD = 48;
const KEY_BYTES = 32;

/** "expand 32-byte k" as little-endian words: the Salsa20 constant HSalsa20 mixes in. */
const SIGMA = new Uint32Array([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]);

/** A box that does not open: wrong key, altered or cut short. Carries no detail of why. */
export class SealedBoxError extends Error {
  constructor(message = "sealed box does not open with this key") {
    super(message);
    this.name = "SealedBoxError";
  }
}

export interface X25519KeyPair {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
}

export function generateKeyPair(): X25519KeyPair {
  const secretKey = x25519.utils.randomSecretKey();
  return { publicKey: x25519.getPublicKey(secretKey), secretKey };
}

export function publicKeyOf(secretKey: Uint8Array): Uint8Array {
  return x25519.getPublicKey(secretKey);
}

function littleEndianWords(bytes: Uint8Array): Uint32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const words = new Uint32Array(bytes.length / 4);
  for (let i = 0; i < words.length; i++) words[i] = view.getUint32(i * 4, true);
  return words;
}

/** `crypto_box_beforenm`: the X25519 shared secret hashed by HSalsa20 with a zero input. */
function boxKey(theirPublic: Uint8Array, ourSecret: Uint8Array): Uint8Array {
  const shared = x25519.getSharedSecret(ourSecret, theirPublic);
  const out = new Uint32Array(8);
  hsalsa(SIGMA, littleEndianWords(shared), new Uint32Array(4), out);
  shared.fill(0);
  const key = new Uint8Array(KEY_BYTES);
  const view = new DataView(key.buffer);
  for (let i = 0; i < 8; i++) view.setUint32(i * 4, out[i]!, true);
  out.fill(0);
  return key;
}

function sealNonce(ephemeralPublic: Uint8Array, recipientPublic: Uint8Array): Uint8Array {
  const input = new Uint8Array(KEY_BYTES * 2);
  input.set(ephemeralPublic, 0);
  input.set(recipientPublic, KEY_BYTES);
  return blake2b(input, { dkLen: 24 });
}

export function sealedBoxSeal(message: Uint8Array, recipientPublic: Uint8Array): Uint8Array {
  if (recipientPublic.length !== KEY_BYTES) throw new SealedBoxError("recipient public key must be 32 bytes");
  const ephemeralSecret = randomBytes(KEY_BYTES);
  const ephemeralPublic = x25519.getPublicKey(ephemeralSecret);
  const key = boxKey(recipientPublic, ephemeralSecret);
  ephemeralSecret.fill(0);
  const sealed = xsalsa20poly1305(key, sealNonce(ephemeralPublic, recipientPublic)).encrypt(message);
  key.fill(0);
  const box = new Uint8Array(KEY_BYTES + sealed.length);
  box.set(ephemeralPublic, 0);
  box.set(sealed, KEY_BYTES);
  return box;
}

/** Opens a sealed box or throws SealedBoxError; never any other error type. */
export function sealedBoxOpen(box: Uint8Array, recipientPublic: Uint8Array, recipientSecret: Uint8Array): Uint8Array {
  if (box.length < SEALED_BOX_OVERHEAD) throw new SealedBoxError("sealed box is shorter than its 48-byte overhead");
  if (recipientPublic.length !== KEY_BYTES || recipientSecret.length !== KEY_BYTES) throw new SealedBoxError("recipient keys must be 32 bytes");
  const ephemeralPublic = box.subarray(0, KEY_BYTES);
  let key: Uint8Array | undefined;
  try {
    key = boxKey(ephemeralPublic, recipientSecret);
    return xsalsa20poly1305(key, sealNonce(ephemeralPublic, recipientPublic)).decrypt(box.subarray(KEY_BYTES));
  } catch {
    // A bad tag, or an ephemeral key X25519 refuses (a low-order point gives an all-zero secret).
    throw new SealedBoxError();
  } finally {
    key?.fill(0);
  }
}
