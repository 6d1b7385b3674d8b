import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type JournalFields, parseJournalFields, readJournalFields } from "../../src/sources/journal-json.ts"

/** The fields as JSON.parse of the whole line gives them (the reader's path for other lines), or "refused". */
const byJsonParse = (line: string): JournalFields | "refused" => parseJournalFields(line) ?? "refused"

/** A line as journalctl 252 prints one (the four fields and the rest). */
const journalLine = (message: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    __CURSOR:
      "s=ea8d22969c994c3486337c6f1892a9df;i=1;b=6a1f0c2e000040008000000000039b39;m=3e8;t=6454216075000",
    __REALTIME_TIMESTAMP: "1765000000000000",
    __MONOTONIC_TIMESTAMP: "1000",
    _BOOT_ID: "6a1f0c2e000040008000000000039b39",
    SYSLOG_IDENTIFIER: "kubelet",
    MESSAGE: message,
    ...extra
  })

const KEYS = [
  "__CURSOR",
  "SYSLOG_IDENTIFIER",
  "MESSAGE",
  "__REALTIME_TIMESTAMP",
  "_PID",
  "MESSAGE_ID",
  "_MESSAGE"
]
/** A key journalctl could print: nothing JSON escapes. */
const plainKey = fc.string().filter((k) => JSON.stringify(k) === `"${k}"`)
/** Records of string and null values, the reader's keys among others, in any order, duplicates by construction. */
const record = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...KEYS), plainKey),
      fc.oneof(
        fc.string({ unit: "binary" }),
        fc.string(),
        fc.constant(null),
        fc.constantFrom(...KEYS.map((k) => `"${k}":`))
      )
    ),
    { maxLength: 8 }
  )
  .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`)

/** The same with keys of any text (escaped keys are left to JSON.parse). */
const anyRecord = fc
  .array(
    fc.tuple(fc.oneof(fc.constantFrom(...KEYS), fc.string()), fc.oneof(fc.string(), fc.constant(null))),
    {
      maxLength: 8
    }
  )
  .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`)

/** A record with one edit where JSON breaks easily: a character deleted, or one of JSON's inserted. */
const edited = fc
  .tuple(
    fc.oneof(record, anyRecord),
    fc.nat(),
    fc.constantFrom("", '"', "\\", "{", "}", ":", ",", "[", "]", " ", "n", "u", "0", "\n", "\u0001")
  )
  .map(([line, at, insert]) => {
    const i = at % (line.length + 1)
    return insert === "" ? line.slice(0, i) + line.slice(i + 1) : line.slice(0, i) + insert + line.slice(i)
  })

describe("readJournalFields", () => {
  it("gives JSON.parse's fields for every record of string and null values", () => {
    fc.assert(
      fc.property(record, (line) => {
        expect(readJournalFields(line)).toEqual(byJsonParse(line))
      }),
      { numRuns: 2000 }
    )
  })

  it("never accepts a line JSON.parse refuses, nor reads one differently", () => {
    fc.assert(
      fc.property(edited, (line) => {
        const fields = readJournalFields(line)
        if (fields !== undefined) expect(fields).toEqual(byJsonParse(line))
      }),
      { numRuns: 5000 }
    )
  })

  it("reads journalctl's line: escapes decoded, the last of a repeated key, null kept", () => {
    const line = journalLine('E1101 "Error syncing pod" err="failed to \\"StartContainer\\"\tx\\u00e9"')
    expect(readJournalFields(line)).toEqual({
      cursor:
        "s=ea8d22969c994c3486337c6f1892a9df;i=1;b=6a1f0c2e000040008000000000039b39;m=3e8;t=6454216075000",
      identifier: "kubelet",
      message: 'E1101 "Error syncing pod" err="failed to \\"StartContainer\\"\tx\\u00e9"',
      realtime: "1765000000000000"
    })
    expect(readJournalFields('{"MESSAGE":"first","MESSAGE":"last"}')?.message).toBe("last")
    expect(readJournalFields('{"MESSAGE":null,"_PID":"1"}')).toEqual({
      cursor: undefined,
      identifier: undefined,
      message: null,
      realtime: undefined
    })
    expect(readJournalFields("{}")).toEqual({
      cursor: undefined,
      identifier: undefined,
      message: undefined,
      realtime: undefined
    })
  })

  it("leaves to JSON.parse what journalctl does not print as a flat record of strings", () => {
    for (const line of [
      journalLine("", { MESSAGE: [104, 105] }), // a field that is not UTF-8: bytes
      journalLine("x", { _PID: ["1", "2"] }), // a repeated field
      '{"MESS\\u0041GE":"a key with an escape"}',
      '{ "MESSAGE": "whitespace" }',
      '{"MESSAGE":1}',
      "[]",
      "null",
      `{"MESSAGE":"${"x".repeat(60_000)}`, // no closing quote: refused (in linear time)
      journalLine("x".repeat(70_000)) // over 64 KiB
    ])
      expect(readJournalFields(line)).toBeUndefined()
  })
})
