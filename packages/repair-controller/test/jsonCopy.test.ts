// The replay's API server copies request bodies as JSON without the text (whatif/jsonCopy.ts): for any value the
// controller could send, the copy is what JSON.parse(JSON.stringify(value)) gives.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { jsonCopy } from "../src/whatif/jsonCopy.ts"

const viaText = (v: unknown) => {
  const text = JSON.stringify(v)
  return text === undefined ? undefined : JSON.parse(text)
}

/** JSON values, with what is not JSON mixed in: undefined, Dates, NaN and infinities, functions, sparse arrays. */
const sendable = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(undefined, Number.NaN, Number.POSITIVE_INFINITY, -0, () => 1, Symbol("s")),
    fc.date({ noInvalidDate: true }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.sparseArray(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string(), fc.constant("__proto__")), tie("value"), { maxKeys: 4 })
  )
})).value

describe("jsonCopy", () => {
  it("is JSON.parse(JSON.stringify(v)) for values with and without JSON's losses", () => {
    fc.assert(
      fc.property(sendable, (v) => {
        expect(jsonCopy(v)).toStrictEqual(viaText(v))
      }),
      { numRuns: 2000 }
    )
  })

  it("drops a merge patch's undefined key and shares no object with its input", () => {
    const labels = { a: "1" }
    const body = { metadata: { labels: undefined, annotations: labels }, data: { records: '{"x":"y\\n"}' } }
    const out = jsonCopy(body) as { metadata: Record<string, unknown> }
    expect(Object.keys(out.metadata)).toEqual(["annotations"])
    expect(out.metadata.annotations).not.toBe(labels)
    expect(out).toEqual({ metadata: { annotations: { a: "1" } }, data: { records: '{"x":"y\\n"}' } })
  })

  it("throws on a bigint, as JSON.stringify does", () => {
    expect(() => jsonCopy({ n: 1n })).toThrow(TypeError)
  })
})
