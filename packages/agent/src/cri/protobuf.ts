/**
 * Just enough of the protobuf wire format (https://protobuf.dev/programming-guides/encoding/) for the
 * CRI messages the agent exchanges: varints, length-delimited fields, and skipping of every field it
 * does not read (fixed32/fixed64 and deprecated groups included), so a runtime that sends newer fields still
 * decodes.
 * Proto3 scalars at their default value are not written, as protoc-generated encoders do.
 */
import { Data } from "effect"

export class ProtobufDecodeError extends Data.TaggedError("ProtobufDecodeError")<{
  readonly detail: string
}> {
  override get message(): string {
    return `protobuf: ${this.detail}`
  }
}

export const WIRE_VARINT = 0
export const WIRE_FIXED64 = 1
export const WIRE_LEN = 2
export const WIRE_START_GROUP = 3
export const WIRE_END_GROUP = 4
export const WIRE_FIXED32 = 5
/** Field numbers are 1 .. 2^29 - 1. */
const MAX_FIELD_NUMBER = 2 ** 29 - 1
/** Deeper nesting is refused rather than recursed into (a hostile peer must not exhaust the stack). */
const MAX_GROUP_DEPTH = 64

/** Accumulates one message's bytes. */
export class ProtoWriter {
  private readonly parts: Uint8Array[] = []
  private size = 0

  private push(bytes: Uint8Array): this {
    this.parts.push(bytes)
    this.size += bytes.length
    return this
  }

  private varint(value: bigint): this {
    let v = BigInt.asUintN(64, value)
    const out: number[] = []
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80)
      v >>= 7n
    }
    out.push(Number(v))
    return this.push(Uint8Array.from(out))
  }

  private tag(field: number, wire: number): this {
    // BigInt arithmetic: `field << 3` on a JS number overflows 32 bits for field numbers above 2^28
    return this.varint((BigInt(field) << 3n) | BigInt(wire))
  }

  /** int32/enum/int64/uint32/bool: negative values take ten bytes (two's complement), as protobuf specifies. */
  int(field: number, value: number | bigint): this {
    const v = typeof value === "bigint" ? value : BigInt(value)
    return v === 0n ? this : this.tag(field, WIRE_VARINT).varint(v)
  }

  bool(field: number, value: boolean): this {
    return value ? this.int(field, 1) : this
  }

  string(field: number, value: string): this {
    return value === "" ? this : this.bytes(field, new TextEncoder().encode(value))
  }

  bytes(field: number, value: Uint8Array): this {
    return this.tag(field, WIRE_LEN).varint(BigInt(value.length)).push(value)
  }

  /** A sub-message is written even when empty: message fields have presence in proto3. */
  message(field: number, value: Uint8Array): this {
    return this.bytes(field, value)
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.size)
    let at = 0
    for (const p of this.parts) {
      out.set(p, at)
      at += p.length
    }
    return out
  }
}

export type ProtoField =
  | { readonly field: number; readonly wire: typeof WIRE_VARINT; readonly value: bigint }
  | { readonly field: number; readonly wire: typeof WIRE_LEN; readonly value: Uint8Array }
  | { readonly field: number; readonly wire: typeof WIRE_FIXED64 | typeof WIRE_FIXED32 }

/** Splits a message into its fields, in wire order. Throws ProtobufDecodeError on malformed input. */
export const readFields = (buf: Uint8Array): ProtoField[] => {
  const out: ProtoField[] = []
  let at = 0
  const varint = (): bigint => {
    let result = 0n
    for (let i = 0; i < 10; i++) {
      if (at >= buf.length) throw new ProtobufDecodeError({ detail: "truncated varint" })
      const b = buf[at++]!
      // the tenth byte holds bit 63 only: anything more does not fit 64 bits (protowire: overflow)
      if (i === 9 && b > 1) throw new ProtobufDecodeError({ detail: "varint overflows 64 bits" })
      result |= BigInt(b & 0x7f) << BigInt(7 * i)
      if ((b & 0x80) === 0) return result
    }
    throw new ProtobufDecodeError({ detail: "varint longer than 10 bytes" })
  }
  const key = (): { readonly field: number; readonly wire: number } => {
    const k = varint()
    const field = k >> 3n
    if (field === 0n || field > BigInt(MAX_FIELD_NUMBER))
      throw new ProtobufDecodeError({ detail: `field number ${field}` })
    return { field: Number(field), wire: Number(k & 7n) }
  }
  const skip = (field: number, n: number) => {
    if (at + n > buf.length) throw new ProtobufDecodeError({ detail: `field ${field}: truncated` })
    at += n
  }
  const lengthDelimited = (field: number): Uint8Array => {
    const len = varint()
    if (len > BigInt(buf.length - at))
      throw new ProtobufDecodeError({ detail: `field ${field}: length ${len} past the end` })
    const value = buf.subarray(at, at + Number(len))
    at += Number(len)
    return value
  }
  /** Skips a (deprecated) group up to its matching end tag, nested groups included (to a bounded depth). */
  const skipGroup = (field: number, depth: number): void => {
    if (depth > MAX_GROUP_DEPTH)
      throw new ProtobufDecodeError({ detail: `groups nested over ${MAX_GROUP_DEPTH} deep` })
    while (true) {
      if (at >= buf.length) throw new ProtobufDecodeError({ detail: `group ${field}: no end tag` })
      const k = key()
      if (k.wire === WIRE_END_GROUP) {
        if (k.field !== field)
          throw new ProtobufDecodeError({ detail: `group ${field}: ended by field ${k.field}` })
        return
      }
      skipValue(k.field, k.wire, depth)
    }
  }
  const skipValue = (field: number, wire: number, depth = 0): void => {
    if (wire === WIRE_VARINT) varint()
    else if (wire === WIRE_FIXED64) skip(field, 8)
    else if (wire === WIRE_LEN) lengthDelimited(field)
    else if (wire === WIRE_START_GROUP) skipGroup(field, depth + 1)
    else if (wire === WIRE_FIXED32) skip(field, 4)
    else throw new ProtobufDecodeError({ detail: `field ${field}: unexpected wire type ${wire}` })
  }
  while (at < buf.length) {
    const { field, wire } = key()
    if (wire === WIRE_VARINT) out.push({ field, wire, value: varint() })
    else if (wire === WIRE_LEN) out.push({ field, wire, value: lengthDelimited(field) })
    else if (wire === WIRE_FIXED64 || wire === WIRE_FIXED32) {
      skipValue(field, wire)
      out.push({ field, wire })
    } else skipValue(field, wire) // groups: no CRI field is one, skipped whole; a stray end tag is an error
  }
  return out
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** The field's bytes as UTF-8 text; a varint where a string belongs is a decode error. */
export const asString = (f: ProtoField): string => {
  if (f.wire !== WIRE_LEN) throw new ProtobufDecodeError({ detail: `field ${f.field}: expected a string` })
  try {
    return utf8.decode(f.value)
  } catch {
    throw new ProtobufDecodeError({ detail: `field ${f.field}: invalid UTF-8` })
  }
}

export const asBytes = (f: ProtoField): Uint8Array => {
  if (f.wire !== WIRE_LEN) throw new ProtobufDecodeError({ detail: `field ${f.field}: expected a message` })
  return f.value
}

export const asVarint = (f: ProtoField): bigint => {
  if (f.wire !== WIRE_VARINT) throw new ProtobufDecodeError({ detail: `field ${f.field}: expected a varint` })
  return f.value
}
