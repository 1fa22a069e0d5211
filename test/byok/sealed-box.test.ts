import { beforeAll, describe, expect, test } from "bun:test";
import sodium from "libsodium-wrappers";
import { generateKeyPair, publicKeyOf, SealedBoxError, sealedBoxOpen, sealedBoxSeal } from "../../src/byok/sealed-box";

// libsodium itself is the reference: boxes cross in both directions.
beforeAll(async () => {
  await sodium.ready;
});

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const bytes = (value: string) => new TextEncoder().encode(value);

function expectRefused(open: () => Uint8Array) {
  let caught: unknown;
  try {
    open();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(SealedBoxError);
}

describe("sealed box", () => {
  test("opens what libsodium's crypto_box_seal sealed, for several message lengths", () => {
    const recipient = sodium.crypto_box_keypair();
    for (const message of ["", "k", "sk-proj-" + "x".repeat(200), "ключ-🔑"]) {
      const box = sodium.crypto_box_seal(bytes(message), recipient.publicKey);
      expect(box.length).toBe(bytes(message).length + 48);
      expect(text(sealedBoxOpen(box, recipient.publicKey, recipient.privateKey))).toBe(message);
    }
  });

  test("libsodium's crypto_box_seal_open opens what we sealed", () => {
    const recipient = generateKeyPair();
    const box = sealedBoxSeal(bytes("sk-ant-api03-secret"), recipient.publicKey);
    expect(box.length).toBe(bytes("sk-ant-api03-secret").length + 48);
    expect(text(sodium.crypto_box_seal_open(box, recipient.publicKey, recipient.secretKey))).toBe("sk-ant-api03-secret");
    // Each seal uses a fresh ephemeral key: the same message never seals to the same box.
    expect(sodium.to_hex(sealedBoxSeal(bytes("same"), recipient.publicKey))).not.toBe(sodium.to_hex(sealedBoxSeal(bytes("same"), recipient.publicKey)));
  });

  test("a fixed vector produced once by libsodium-wrappers 0.8.4 opens", () => {
    // Made with: sk = from_hex(below); pk = crypto_scalarmult_base(sk);
    // crypto_box_seal(from_string("sk-ant-known-vector-0123456789"), pk), base64 ORIGINAL.
    const secretKey = sodium.from_hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
    const publicKey = publicKeyOf(secretKey);
    expect(sodium.to_hex(publicKey)).toBe("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
    const box = Uint8Array.from(
      Buffer.from("PQZBE8XbuqXEsDYa1hHUMbBXv+7RXg+uRb96qt83/lDNJ8RbwOZoeMzHYYeCJ980er9vtacyaenby5tawLTEWg3kV72Xby+rhPHQFiFR", "base64"),
    );
    expect(text(sealedBoxOpen(box, publicKey, secretKey))).toBe("sk-ant-known-vector-0123456789");
  });

  test("a box with any single byte flipped is refused with SealedBoxError", () => {
    const recipient = generateKeyPair();
    const box = sealedBoxSeal(bytes("sk-secret-key"), recipient.publicKey);
    for (const index of [0, 31, 32, 47, 48, box.length - 1]) {
      const tampered = box.slice();
      tampered[index]! ^= 0x01;
      expectRefused(() => sealedBoxOpen(tampered, recipient.publicKey, recipient.secretKey));
    }
  });

  test("truncated boxes are refused with SealedBoxError", () => {
    const recipient = generateKeyPair();
    const box = sealedBoxSeal(bytes("sk-secret-key"), recipient.publicKey);
    for (const length of [0, 1, 32, 47, 48, box.length - 1]) {
      expectRefused(() => sealedBoxOpen(box.subarray(0, length), recipient.publicKey, recipient.secretKey));
    }
  });

  test("a box sealed to another key is refused with SealedBoxError", () => {
    const recipient = generateKeyPair();
    const other = sodium.crypto_box_keypair();
    const box = sodium.crypto_box_seal(bytes("sk-secret-key"), other.publicKey);
    expectRefused(() => sealedBoxOpen(box, recipient.publicKey, recipient.secretKey));
    // A low-order ephemeral point (all zeros) makes X25519 refuse; still only SealedBoxError.
    const lowOrder = new Uint8Array(box.length);
    expectRefused(() => sealedBoxOpen(lowOrder, recipient.publicKey, recipient.secretKey));
  });
});
