// How far a regular expression can look from where an attempt starts, from its source: the most characters
// one match attempt can examine ahead (alternatives at their longest; a lookahead peeks from where it stands,
// so a quantified group that ends in one looks at most one peek past what its repetitions consumed) and
// behind (lookbehinds, \b). Quantifiers without an upper bound (* + {n,}) are listed instead.
// For the redaction rules, whose piecewise scan of over-long lines is exact only when every attempt's reach
// is bounded (src/diagnostics/Redaction.ts).

export interface RegexReach {
  readonly ahead: number
  readonly behind: number
  /** Where an unbounded quantifier occurs (source offsets). */
  readonly unbounded: ReadonlyArray<number>
}

/** What a piece of a pattern can consume at most, and how far from its start it can look at most (>= len). */
interface Reach {
  readonly len: number
  readonly peek: number
}

const char: Reach = { len: 1, peek: 1 }
const nothing: Reach = { len: 0, peek: 0 }

export const regexReach = (source: string): RegexReach => {
  let i = 0
  let behind = 0
  const unbounded: number[] = []

  const alternation = (): Reach => {
    let best = sequence()
    while (source[i] === "|") {
      i++
      const next = sequence()
      best = { len: Math.max(best.len, next.len), peek: Math.max(best.peek, next.peek) }
    }
    return best
  }

  const sequence = (): Reach => {
    let len = 0
    let peek = 0
    while (i < source.length && source[i] !== "|" && source[i] !== ")") {
      const r = quantified()
      peek = Math.max(peek, len + r.peek)
      len += r.len
    }
    return { len, peek: Math.max(peek, len) }
  }

  const quantified = (): Reach => {
    const at = i
    const r = atom()
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
    return times === 0 ? nothing : { len: r.len * times, peek: r.len * (times - 1) + r.peek }
  }

  const atom = (): Reach => {
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
        behind = Math.max(behind, inner.peek)
        return nothing
      }
      if (kind === "ahead") return { len: 0, peek: inner.peek }
      return inner
    }
    if (c === "[") {
      i++
      if (source[i] === "^") i++
      if (source[i] === "]") i++
      while (source[i] !== "]") i += source[i] === "\\" ? 2 : 1
      i++
      return char
    }
    if (c === "\\") {
      const e = source[i + 1]
      if (e === "b" || e === "B") {
        behind = Math.max(behind, 1)
        i += 2
        return nothing
      }
      if (e === "k") {
        i = source.indexOf(">", i) + 1
        // The only back-reference is to an optional, possibly escaped quote (up to 3 backslashes and a quote).
        return { len: 4, peek: 4 }
      }
      if (e === "u") i += 6
      else if (e === "x") i += 4
      else i += 2
      return char
    }
    if (c === "^" || c === "$") {
      i++
      return nothing
    }
    i++
    return char
  }

  const ahead = alternation().peek
  return { ahead, behind, unbounded }
}
