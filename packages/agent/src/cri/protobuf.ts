/**
 * Just enough of the protobuf wire format (https://protobuf.dev/programming-guides/encoding/) for the
 * CRI messages the agent exchanges: varints, length-delimited fields, and skipping of every field it
 * does not read (fixed32/fixed64 included), so a runtime that sends newer fields still decodes.
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
export const WIRE_FIXED32 = 5

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
    return this.varint(BigInt((field << 3) | wire))
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
    let shift = 0n
    for (let i = 0; i < 10; i++) {
      if (at >= buf.length) throw new ProtobufDecodeError({ detail: "truncated varint" })
      const b = buf[at++]!
      result |= BigInt(b & 0x7f) << shift
      if ((b & 0x80) === 0) return BigInt.asUintN(64, result)
      shift += 7n
    }
    throw new ProtobufDecodeError({ detail: "varint longer than 10 bytes" })
  }
  while (at < buf.length) {
    const key = varint()
    const field = Number(key >> 3n)
    const wire = Number(key & 7n)
    if (field === 0) throw new ProtobufDecodeError({ detail: "field number 0" })
    switch (wire) {
      case WIRE_VARINT:
        out.push({ field, wire, value: varint() })
        break
      case WIRE_LEN: {
        const len = varint()
        if (len > BigInt(buf.length - at))
          throw new ProtobufDecodeError({ detail: `field ${field}: length ${len} past the end` })
        out.push({ field, wire, value: buf.subarray(at, at + Number(len)) })
        at += Number(len)
        break
      }
      case WIRE_FIXED64:
      case WIRE_FIXED32: {
        const n = wire === WIRE_FIXED64 ? 8 : 4
        if (at + n > buf.length) throw new ProtobufDecodeError({ detail: `field ${field}: truncated fixed` })
        at += n
        out.push({ field, wire })
        break
      }
      default:
        throw new ProtobufDecodeError({ detail: `field ${field}: unsupported wire type ${wire}` })
    }
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
