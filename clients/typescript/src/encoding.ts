/**
 * The text forms of an integer ID, byte for byte those of flurry's Go library
 * (`flurry.Encoding`), of `flurry gen --format` and of the server's
 * `?encoding=`: decimal, hex, base62, crockford32 (Crockford's Base32), and
 * bwmarrin/snowflake's base2, base32, base36, base58 and base64.
 *
 * No form carries a marker and one string is often an ID in several ("10" is
 * one in every form but base64, a different ID in each), so parsing always
 * takes the form to read.
 *
 * @example
 * ```ts
 * import { formatID, parseID } from "@flurry/client";
 * formatID(1541815603606036480n, "base62");   // "1ptWyK4WgZU"
 * parseID("1asd13xh1f8oo", "crockford32");    // 1541815603606036480n
 * ```
 */

import { OptionsError } from "./errors.js";
import { toID } from "./layout.js";

/** The name of a text form of an ID, as flurry's CLI and server name it. */
export type Encoding =
  | "decimal"
  | "hex"
  | "base2"
  | "base32"
  | "base36"
  | "base58"
  | "base64"
  | "base62"
  | "crockford32";

/** Every encoding, in the order of the Go library's constants. */
export const encodings: readonly Encoding[] = Object.freeze([
  "decimal",
  "hex",
  "base2",
  "base32",
  "base36",
  "base58",
  "base64",
  "base62",
  "crockford32",
]);

const maxID = (1n << 63n) - 1n;

/**
 * A form written as a number in a base: its alphabet (the digit of each value)
 * and its reading (the value of each character code below 128, -1 outside).
 */
interface Digits {
  base: bigint;
  alphabet: string;
  values: Int8Array;
}

function digits(alphabet: string, extra: Record<string, number> = {}): Digits {
  const values = new Int8Array(128).fill(-1);
  for (let i = 0; i < alphabet.length; i++) {
    values[alphabet.charCodeAt(i)] = i;
  }
  for (const [c, v] of Object.entries(extra)) {
    values[c.charCodeAt(0)] = v;
  }
  return { base: BigInt(alphabet.length), alphabet, values };
}

/** Each upper-case letter of alphabet read as its lower case too, and the reverse. */
function eitherCase(alphabet: string, more: Record<string, number> = {}): Record<string, number> {
  const extra: Record<string, number> = {};
  for (let i = 0; i < alphabet.length; i++) {
    const c = alphabet[i]!;
    extra[c.toLowerCase()] = i;
    extra[c.toUpperCase()] = i;
  }
  return { ...extra, ...more };
}

const alphabet36 = "0123456789abcdefghijklmnopqrstuvwxyz";
const alphabetCF = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

const digitForms: Partial<Record<Encoding, Digits>> = {
  hex: digits("0123456789abcdef", eitherCase("0123456789abcdef")),
  base2: digits("01"),
  base32: digits("ybndrfg8ejkmcpqxot1uwisza345h769"),
  base36: digits(alphabet36, eitherCase(alphabet36)),
  base58: digits("123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ"),
  base62: digits("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
  // Crockford's rules for people who retype an ID: either case, and the
  // letters mistaken for digits read as those digits.
  crockford32: digits(alphabetCF, eitherCase(alphabetCF, { I: 1, i: 1, L: 1, l: 1, O: 0, o: 0 })),
};

const alphabet64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const values64 = digits(alphabet64).values;

/**
 * Writes id in the encoding: the same text as flurry's Go library, its CLI
 * (`flurry gen --format`) and its server (`?encoding=`). The ID is a bigint
 * (or a decimal string) from 0 to 2^63 − 1.
 *
 * @throws {@link OptionsError} for an unknown encoding or an ID outside that range.
 */
export function formatID(id: bigint | string, encoding: Encoding): string {
  const v = toID(id);
  if (v < 0n || v > maxID) {
    throw invalid(`ID ${String(id)} is outside 0 to 2^63 − 1, the range of flurry's IDs`);
  }
  if (encoding === "decimal") {
    return v.toString();
  }
  if (encoding === "base64") {
    return base64(v.toString());
  }
  const d = form(encoding);
  if (d.base === 16n || d.base === 2n || d.base === 36n) {
    return v.toString(Number(d.base)); // the same digits, lowercase
  }
  let s = "";
  let rest = v;
  do {
    s = d.alphabet[Number(rest % d.base)]! + s;
    rest /= d.base;
  } while (rest > 0n);
  return s;
}

/**
 * Reads an ID written in the encoding, as flurry's Go library does
 * (`Encoding.Parse`): it refuses an empty string, a character outside the
 * form's alphabet (hex and base36 take either case; crockford32 takes either
 * case and reads I and L as 1, O as 0), a sign, and a value above 2^63 − 1.
 *
 * @throws {@link OptionsError} saying why `text` is not an ID in the encoding.
 */
export function parseID(text: string, encoding: Encoding): bigint {
  if (typeof text !== "string") {
    throw invalid(`parseID takes a string, not ${typeof text}`);
  }
  if (text === "") {
    throw invalid(`an empty string is not an ID in ${encoding}`);
  }
  if (encoding === "decimal") {
    return parseDecimal(text, text, encoding);
  }
  if (encoding === "base64") {
    return parseBase64(text);
  }
  const d = form(encoding);
  let v = 0n;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const digit = c < 128 ? d.values[c]! : -1;
    if (digit < 0) {
      if (i === 0 && text[0] === "-") {
        throw invalid(`${quote(text)}: IDs are never negative`);
      }
      throw invalid(`${quote(text)} is not ${encoding}: ${JSON.stringify(text[i])} at position ${i} is not one of its digits`);
    }
    v = v * d.base + BigInt(digit);
    if (v > maxID) {
      throw invalid(`${quote(text)} is ${encoding} above 2^63 − 1, the range of flurry's IDs`);
    }
  }
  return v;
}

function form(encoding: Encoding): Digits {
  const d = Object.hasOwn(digitForms, encoding) ? digitForms[encoding] : undefined;
  if (d === undefined) {
    throw invalid(`unknown ID encoding ${JSON.stringify(String(encoding))}: use one of ${encodings.join(", ")}`);
  }
  return d;
}

/** The decimal text s (what text, in encoding, holds) as an ID. */
function parseDecimal(s: string, text: string, encoding: Encoding): bigint {
  if (!/^[0-9]+$/.test(s)) {
    if (encoding === "decimal" && /^-[0-9]+$/.test(s)) {
      throw invalid(`${quote(text)}: IDs are never negative`);
    }
    throw invalid(encoding === "decimal" ? `${quote(text)} is not a decimal number` : `${quote(text)} is base64 but does not hold a decimal ID`);
  }
  const v = BigInt(s);
  if (v > maxID) {
    throw invalid(encoding === "decimal" ? `${quote(text)} is above 2^63 − 1, the range of flurry's IDs` : `${quote(text)} is base64 but does not hold a decimal ID`);
  }
  return v;
}

/** Standard padded base64 (RFC 4648 section 4) of an ASCII string. */
function base64(ascii: string): string {
  let out = "";
  for (let i = 0; i < ascii.length; i += 3) {
    const n = ascii.length - i;
    const w = (ascii.charCodeAt(i) << 16) | ((n > 1 ? ascii.charCodeAt(i + 1) : 0) << 8) | (n > 2 ? ascii.charCodeAt(i + 2) : 0);
    out += alphabet64[(w >> 18) & 63]! + alphabet64[(w >> 12) & 63]!;
    out += n > 1 ? alphabet64[(w >> 6) & 63]! : "=";
    out += n > 2 ? alphabet64[w & 63]! : "=";
  }
  return out;
}

/**
 * Reads bwmarrin/snowflake's base64 as the Go library does: strict padded
 * standard base64 (no line breaks, the bits under the padding zero), at most
 * 32 bytes, holding a decimal ID.
 */
function parseBase64(text: string): bigint {
  if (Math.floor(text.length / 4) * 3 > 32 || /[\r\n]/.test(text)) {
    throw invalid(`${quote(text)} is not the base64 of an ID: too long or split in lines`);
  }
  const bad = (): OptionsError => invalid(`${quote(text)} is not base64 (standard alphabet, padded)`);
  if (text.length % 4 !== 0) {
    throw bad();
  }
  const pad = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const body = text.slice(0, text.length - pad);
  const vals: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    const v = c < 128 ? values64[c]! : -1;
    if (v < 0) {
      throw bad();
    }
    vals.push(v);
  }
  // Strict: the bits a padded quantum leaves unused must be zero.
  if ((pad === 2 && (vals[vals.length - 1]! & 15) !== 0) || (pad === 1 && (vals[vals.length - 1]! & 3) !== 0)) {
    throw bad();
  }
  let s = "";
  for (let i = 0; i < vals.length; i += 4) {
    const w = (vals[i]! << 18) | (vals[i + 1]! << 12) | ((vals[i + 2] ?? 0) << 6) | (vals[i + 3] ?? 0);
    s += String.fromCharCode((w >> 16) & 255);
    if (i + 2 < vals.length) s += String.fromCharCode((w >> 8) & 255);
    if (i + 3 < vals.length) s += String.fromCharCode(w & 255);
  }
  return parseDecimal(s, text, "base64");
}

function quote(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}

function invalid(message: string): OptionsError {
  return new OptionsError(`encoding: ${message}`);
}
