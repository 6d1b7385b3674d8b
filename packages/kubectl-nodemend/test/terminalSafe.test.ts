import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { renderTable } from "../src/table.ts"
import { hasInvisible, normalizeName, terminalSafe, terminalSafeLines } from "../src/terminalSafe.ts"

// What must never be printed: controls, bidi controls, and characters that print as nothing (format characters
// and the other default-ignorable code points).
const CONTROL = /[\p{Cc}\p{Bidi_Control}\p{Cf}\p{Default_Ignorable_Code_Point}]/u
const OSC_TITLE = "\u001b]0;owned\u0007"
const CSI_CLEAR = "\u001b[2J\u001b[H"

// Arbitrary text with escape sequences, C1 controls, bidi controls and breaks mixed into any code points.
const hostile = fc.string({
  unit: fc.oneof(
    fc.constantFrom(
      "\u001b",
      "\u009b",
      "\u009d",
      "\u009c",
      "\u0007",
      "[",
      "]",
      "\\",
      ";",
      "2J",
      "\n",
      "\r",
      "\t",
      "\u0085",
      "\u202e",
      "\u2066",
      "\u2028",
      "\u200b",
      "\u200d",
      "\ufeff",
      "\u00ad",
      "\u2060",
      "\u3164",
      "\u{E0041}"
    ),
    fc.string({ unit: "binary", minLength: 1, maxLength: 1 })
  ),
  maxLength: 60
})

describe("terminalSafe", () => {
  it("removes OSC title changes and CSI clear-screen sequences whole, keeping the text", () => {
    expect(terminalSafe(`${OSC_TITLE}GPU fell off the bus${CSI_CLEAR}`)).toBe("GPU fell off the bus")
    expect(terminalSafe("\u009d0;owned\u009cok\u009b2Jdone")).toBe("okdone")
    expect(terminalSafe("a\u001b]2;title\u001b\\b")).toBe("ab")
    expect(terminalSafe("reset\u001bc here")).toBe("reset here")
  })

  it("turns breaks into one space, so a value stays on its line", () => {
    expect(terminalSafe("line one\r\nline two\tthree")).toBe("line one line two three")
  })

  it("removes bidi overrides and isolates", () => {
    expect(terminalSafe("abc\u202edcb\u202c \u2067x\u2069")).toBe("abcdcb x")
  })

  it("removes zero-width and other format characters, so two names that print alike are alike", () => {
    expect(terminalSafe("nodemend.io/repair-controller\u200b")).toBe("nodemend.io/repair-controller")
    expect(terminalSafe("a\u200cb\u200dc\u2060d\ufeffe\u00adf\u{E0041}g\u3164h\ufe0fi")).toBe("abcdefghi")
    expect(terminalSafe("\u200e\u200f\u061c\u2066x\u2069")).toBe("x")
  })

  it("normalizes names for comparison: invisible characters, compatibility forms, dashes, blanks", () => {
    const controller = "nodemend.io/repair-controller"
    for (const look of [
      "nodemend.io/repair-controller\u200b",
      "\u200bnodemend.io/repair-controller",
      "nodemend.io/repair\u2011controller",
      "\uff4e\uff4f\uff44\uff45mend.io/repair-controller",
      " nodemend.io/repair-controller\u202e ",
      "nodemend.io/\u{E0072}repair-controller"
    ])
      expect(normalizeName(look)).toBe(controller)
    expect(normalizeName(controller)).toBe(controller)
    // A Cyrillic o is another letter, not a compatibility form: it stays (and prints as what it is).
    expect(normalizeName("n\u043edemend.io/repair-controller")).not.toBe(controller)
    expect(hasInvisible("a\u200bb")).toBe(true)
    expect(hasInvisible("a\u202eb")).toBe(true)
    expect(hasInvisible("a-b")).toBe(false)
  })

  it("never lets a control character through, whatever the input", () => {
    fc.assert(
      fc.property(fc.oneof(hostile, fc.string({ unit: "binary" })), (s) => {
        expect(terminalSafe(s)).not.toMatch(CONTROL)
        expect(terminalSafe(s)).not.toMatch(/[\u2028\u2029]/u)
        for (const line of terminalSafeLines(s).split("\n")) expect(line).not.toMatch(CONTROL)
      }),
      { numRuns: 2000 }
    )
  })

  it("leaves text without controls as it is, and is idempotent", () => {
    const printable = fc.string({
      unit: fc
        .string({ unit: "binary", minLength: 1, maxLength: 1 })
        .filter((c) => !CONTROL.test(c) && !/[\u2028\u2029]/u.test(c))
    })
    fc.assert(
      fc.property(printable, (s) => {
        expect(terminalSafe(s)).toBe(s)
      })
    )
    fc.assert(
      fc.property(hostile, (s) => {
        expect(terminalSafe(terminalSafe(s))).toBe(terminalSafe(s))
      })
    )
  })

  it("keeps the plugin's own line breaks in laid-out text", () => {
    expect(terminalSafeLines(`A\n${CSI_CLEAR}b\u001b[31m\nc`)).toBe("A\nb\nc")
  })

  it("tables: a cell cannot add a row or hide the others", () => {
    const t = renderTable(["NODE", "WHAT"], [["n1", `${OSC_TITLE}x\nn2   forged row${CSI_CLEAR}`]])
    expect(t.split("\n")).toEqual(["NODE   WHAT", "n1     x n2   forged row"])
  })
})
