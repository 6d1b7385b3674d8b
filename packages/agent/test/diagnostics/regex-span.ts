// How far a regular expression can look from where an attempt starts, from its source: the most characters
// one match attempt can examine ahead (lookahead contents counted as if consumed, alternatives at their
// longest) and behind (lookbehinds, \b). Quantifiers without an upper bound (* + {n,}) are listed instead.
// For the redaction rules, whose piecewise scan of over-long lines is exact only when every attempt's reach
// is bounded (src/diagnostics/Redaction.ts).

export interface RegexReach {
  readonly ahead: number
  readonly behind: number
  /** Where an unbounded quantifier occurs (source offsets). */
  readonly unbounded: ReadonlyArray<number>
}

export const regexReach = (source: string): RegexReach => {
  let i = 0
  let behind = 0
  const unbounded: number[] = []

  const alternation = (): number => {
    let best = sequence()
    while (source[i] === "|") {
      i++
      best = Math.max(best, sequence())
    }
    return best
  }

  const sequence = (): number => {
    let total = 0
    while (i < source.length && source[i] !== "|" && source[i] !== ")") total += quantified()
    return total
  }

  const quantified = (): number => {
    const at = i
    const len = atom()
    const c = source[i]
    let times = 1
    if (c === "?") i++
    else if (c === "*" || c === "+") {
      unbounded.push(at)
      i++
    } else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i))
      if (m) {
        i += m[0].length
        if (m[2] === undefined) times = Number(m[1])
        else if (m[3] === "") unbounded.push(at)
        else times = Number(m[3])
      }
    }
    if (source[i] === "?") i++ // lazy
    return len * times
  }

  const atom = (): number => {
    const c = source[i]
    if (c === "(") {
      i++
      let kind: "group" | "ahead" | "behind" = "group"
      if (source.startsWith("?:", i)) i += 2
      else if (source.startsWith("?=", i) || source.startsWith("?!", i)) {
        i += 2
        kind = "ahead"
      } else if (source.startsWith("?<=", i) || source.startsWith("?<!", i)) {
        i += 3
        kind = "behind"
      } else if (source.startsWith("?<", i)) i = source.indexOf(">", i) + 1
      const inner = alternation()
      i++ // ")"
      if (kind === "behind") {
        behind = Math.max(behind, inner)
        return 0
      }
      return inner
    }
    if (c === "[") {
      i++
      if (source[i] === "^") i++
      if (source[i] === "]") i++
      while (source[i] !== "]") i += source[i] === "\\" ? 2 : 1
      i++
      return 1
    }
    if (c === "\\") {
      const e = source[i + 1]
      if (e === "b" || e === "B") {
        behind = Math.max(behind, 1)
        i += 2
        return 0
      }
      if (e === "k") {
        i = source.indexOf(">", i) + 1
        return 1 // the only back-reference is to an optional quote
      }
      if (e === "u") i += 6
      else if (e === "x") i += 4
      else i += 2
      return 1
    }
    if (c === "^" || c === "$") {
      i++
      return 0
    }
    i++
    return 1
  }

  const ahead = alternation()
  return { ahead, behind, unbounded }
}
