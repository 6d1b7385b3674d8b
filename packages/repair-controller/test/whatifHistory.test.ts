import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import {
  type HistoryLine,
  historyJsonSchema,
  historyLine,
  isoTime,
  parseHistory,
  parseHistoryLine,
  SCHEDULED_EVENT_CODES
} from "../src/whatif/history.ts"

const T0 = Date.parse("2026-11-23T00:00:00Z")
const time = fc.integer({ min: 0, max: 7 * 24 * 3600 }).map((s) => isoTime(T0 + s * 1000))
const name = fc.string({ minLength: 1, maxLength: 12 })
const opt = <A>(a: fc.Arbitrary<A>) => fc.option(a, { nil: undefined })
const defined = <A extends object>(o: A): A =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as A

const line: fc.Arbitrary<HistoryLine> = fc.oneof(
  fc
    .record({
      at: time,
      node: name,
      pool: opt(fc.string()),
      zone: opt(fc.string()),
      doNotRepair: opt(fc.boolean())
    })
    .map((r) => defined({ v: 1 as const, kind: "node" as const, ...r })),
  fc
    .record({
      at: time,
      node: name,
      pool: opt(fc.string()),
      zone: opt(fc.string()),
      type: name,
      status: fc.constantFrom("True" as const, "False" as const, "Unknown" as const),
      reason: opt(fc.string()),
      message: opt(fc.string())
    })
    .map((r) => defined({ v: 1 as const, kind: "condition" as const, ...r })),
  fc.record({ at: time, node: name }).map((r) => ({ v: 1 as const, kind: "deleted" as const, ...r })),
  fc
    .record({
      at: time,
      pool: name,
      claims: fc.nat(),
      doNotRepair: opt(fc.boolean()),
      budgets: opt(
        fc.array(
          fc
            .record({ nodes: fc.string(), reasons: opt(fc.array(fc.string())), schedule: opt(fc.string()) })
            .map((b) => defined(b))
        )
      ),
      deleted: opt(fc.boolean())
    })
    .map((r) => defined({ v: 1 as const, kind: "nodepool" as const, ...r })),
  fc
    .record({ at: time, mark: fc.constantFrom("start" as const, "end" as const), note: opt(fc.string()) })
    .map((r) => defined({ v: 1 as const, kind: "mark" as const, ...r })),
  fc
    .record({
      at: time,
      node: name,
      pool: opt(fc.string()),
      id: name,
      code: fc.constantFrom(...SCHEDULED_EVENT_CODES),
      notBefore: fc.integer({ min: 0, max: 7 * 24 * 3600 }),
      span: opt(fc.integer({ min: 0, max: 7 * 24 * 3600 })),
      state: opt(fc.constantFrom("scheduled" as const, "completed" as const, "canceled" as const)),
      description: opt(fc.string())
    })
    .map(({ notBefore, span, ...r }) =>
      defined({
        v: 1 as const,
        kind: "scheduledEvent" as const,
        ...r,
        notBefore: isoTime(T0 + notBefore * 1000),
        notAfter: span === undefined ? undefined : isoTime(T0 + (notBefore + span) * 1000)
      })
    )
)

/** Lines that must be refused: not JSON, a wrong version, a missing field, a wrong status, an unknown kind. */
const badLine: fc.Arbitrary<string> = fc.oneof(
  fc.string().map((s) => `#${s.replace(/\n/g, " ")}`),
  line.map((l) => JSON.stringify({ ...l, v: 2 })),
  line.map((l) => {
    const { at: _at, ...rest } = l
    return JSON.stringify(rest)
  }),
  time.map((at) =>
    JSON.stringify({ v: 1, kind: "condition", at, node: "n", type: "Ready", status: "Maybe" })
  ),
  fc.string().map((kind) => JSON.stringify({ v: 1, kind: `x${kind}`, at: isoTime(T0), node: "n" })),
  fc.constant("[1,2,3]"),
  fc.constant(JSON.stringify({ v: 1, kind: "node", at: "yesterday", node: "n" }))
)

describe("history format", () => {
  it("round-trips every line a writer can produce", () => {
    fc.assert(
      fc.property(line, (l) => {
        const parsed = parseHistory(historyLine(l))
        expect(parsed.bad).toEqual([])
        const { atMs, line: n, ...back } = parsed.events[0]!
        expect(back).toEqual(l)
        expect(atMs).toBe(Date.parse(l.at))
        expect(n).toBe(1)
      })
    )
  })

  it("reports every bad line with its number and loses no good line", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            line.map((l) => ({ ok: l })),
            badLine.map((b) => ({ bad: b }))
          )
        ),
        (mixed) => {
          const text = mixed.map((m) => ("ok" in m ? historyLine(m.ok) : m.bad)).join("\n")
          const parsed = parseHistory(mixed.length === 0 ? "" : `${text}\n`)
          const badNumbers = mixed.flatMap((m, i) => ("bad" in m ? [i + 1] : []))
          expect(parsed.bad.map((b) => b.line)).toEqual(badNumbers)
          for (const b of parsed.bad) expect(b.error).not.toBe("")
          const good = mixed.flatMap((m, i) => ("ok" in m ? [{ line: i + 1, l: m.ok }] : []))
          expect(parsed.events.map((e) => e.line).sort((a, b) => a - b)).toEqual(good.map((g) => g.line))
          // In time order, the file's order among equal times.
          for (let i = 1; i < parsed.events.length; i++) {
            const [a, b] = [parsed.events[i - 1]!, parsed.events[i]!]
            expect(a.atMs < b.atMs || (a.atMs === b.atMs && a.line < b.line)).toBe(true)
          }
          expect(parsed.lines).toBe(mixed.length)
        }
      )
    )
  })

  it("says what is wrong, by field", () => {
    expect(
      parseHistoryLine('{"v":1,"kind":"condition","at":"2026-11-23T00:00:00Z","node":"n","type":"Ready"}', 7)
    ).toEqual({
      line: 7,
      error: "status: Missing key"
    })
    expect(parseHistoryLine('{"v":3,"kind":"node"}', 2)).toEqual({
      line: 2,
      error: "format version 3 is not supported (this replay reads v1)"
    })
    expect(parseHistoryLine('{"v":1,"kind":"pod"}', 3)).toMatchObject({
      error: expect.stringMatching(/^kind: expected one of node, condition, deleted, nodepool, mark/)
    })
    expect(parseHistoryLine("   ", 4)).toBeUndefined()
  })

  it("is published as a JSON Schema", () => {
    const doc = historyJsonSchema() as { schema: { anyOf: ReadonlyArray<{ properties: { kind: unknown } }> } }
    expect(doc.schema.anyOf.map((s) => s.properties.kind)).toEqual([
      { type: "string", enum: ["node"] },
      { type: "string", enum: ["condition"] },
      { type: "string", enum: ["deleted"] },
      { type: "string", enum: ["nodepool"] },
      { type: "string", enum: ["mark"] },
      { type: "string", enum: ["scheduledEvent"] }
    ])
  })
})
