/**
 * The longest literal substring that every match of a regular expression must contain, so that a user
 * rule can join the literal prefilter. Conservative: `undefined` when unsure (top-level alternation).
 */
const CLASS_ESCAPES = new Set("dDwWsSbBpPkcux0123456789nrtfv")

export const requiredLiteral = (source: string): string | undefined => {
  let best = ""
  let run = ""
  const flush = () => {
    if (run.length > best.length) best = run
    run = ""
  }
  let i = 0
  while (i < source.length) {
    const c = source[i]!
    if (c === "\\") {
      const e = source[i + 1]
      if (e === undefined) return undefined
      i += 2
      if (CLASS_ESCAPES.has(e)) {
        flush()
        i = skipQuantifier(source, i)
        continue
      }
      i = applyQuantifier(source, i, e)
      continue
    }
    if (c === "|") return undefined
    if (c === "(") {
      flush()
      const end = closingParen(source, i)
      if (end < 0) return undefined
      i = skipQuantifier(source, end + 1)
      continue
    }
    if (c === "[") {
      flush()
      const end = closingBracket(source, i)
      if (end < 0) return undefined
      i = skipQuantifier(source, end + 1)
      continue
    }
    if (c === "." || c === "^" || c === "$") {
      flush()
      i = skipQuantifier(source, i + 1)
      continue
    }
    i = applyQuantifier(source, i + 1, c)
  }
  flush()
  return best.length >= 2 ? best : undefined

  function applyQuantifier(s: string, next: number, ch: string): number {
    const q = s[next]
    if (q === "*" || q === "?" || (q === "{" && /^\{0[,}]/.test(s.slice(next)))) {
      flush()
      return skipQuantifier(s, next)
    }
    if (q === "+" || q === "{") {
      // at least one `ch`: the run so far ends with it, and a new run starts with the last repetition
      run += ch
      flush()
      run = ch
      return skipQuantifier(s, next)
    }
    run += ch
    return next
  }
}

const skipQuantifier = (s: string, i: number): number => {
  let j = i
  const q = s[j]
  if (q === "*" || q === "+" || q === "?") j++
  else if (q === "{") {
    const close = s.indexOf("}", j)
    if (close > 0 && /^\{\d+(,\d*)?\}$/.test(s.slice(j, close + 1))) j = close + 1
  }
  if (j > i && s[j] === "?") j++
  return j
}

const closingBracket = (s: string, open: number): number => {
  for (let i = open + 1; i < s.length; i++) {
    if (s[i] === "\\") i++
    else if (s[i] === "]" && i > open + 1) return i
  }
  return -1
}

const closingParen = (s: string, open: number): number => {
  let depth = 0
  for (let i = open; i < s.length; i++) {
    const c = s[i]
    if (c === "\\") i++
    else if (c === "[") {
      const end = closingBracket(s, i)
      if (end < 0) return -1
      i = end
    } else if (c === "(") depth++
    else if (c === ")" && --depth === 0) return i
  }
  return -1
}
