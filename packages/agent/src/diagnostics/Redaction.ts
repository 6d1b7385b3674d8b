/**
 * Secrets never leave the node: every collected text goes through `redactionTransform` before it reaches the
 * bundle. Line-oriented, so memory stays bounded by the longest line (capped: an over-long line is redacted
 * and flushed in pieces, with an overlap so a secret that straddles a cut is still seen whole).
 */
import { Transform, type TransformCallback } from "node:stream"

export const REDACTED = "[REDACTED]"

/** Names whose values are secret in env dumps, YAML/JSON, INI and command lines. */
const SECRET_NAME =
  "[A-Za-z0-9_.-]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API[_-]?KEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|CREDENTIAL|CLIENT[_-]?KEY[_-]?DATA)[A-Za-z0-9_.-]*"

interface Rule {
  readonly pattern: RegExp
  readonly replace: (match: string, ...groups: string[]) => string
}

const RULES: ReadonlyArray<Rule> = [
  // HTTP auth headers and the bare "Bearer <token>" form.
  {
    pattern:
      /\b(Authorization|Proxy-Authorization)(["']?\s*[:=]\s*["']?)(?:(Bearer|Basic|AWS4-HMAC-SHA256|Token)\s+)?[^\s"',]+(?:[^"'\n]*)/gi,
    replace: (_m, name: string, sep: string, scheme?: string) =>
      `${name}${sep}${scheme ? `${scheme} ` : ""}${REDACTED}`
  },
  { pattern: /\b(Bearer)\s+[A-Za-z0-9\-._~+/]+=*/gi, replace: (_m, b: string) => `${b} ${REDACTED}` },
  // JWTs (service-account tokens) wherever they appear.
  { pattern: /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, replace: () => REDACTED },
  // AWS access key ids.
  {
    pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[A-Z0-9]{16}\b/g,
    replace: () => REDACTED
  },
  // Presigned-URL signatures and session tokens in query strings.
  {
    pattern: /\b(X-Amz-(?:Signature|Security-Token|Credential))=[^&\s"']+/gi,
    replace: (_m, k: string) => `${k}=${REDACTED}`
  },
  // key = value, key: value, "key": "value", KEY='value' for secret-looking names.
  {
    pattern: new RegExp(String.raw`(["']?)(${SECRET_NAME})\1(\s*[:=]\s*)("[^"]*"|'[^']*'|[^\s,;}&]+)`, "gi"),
    replace: (_m, q: string, name: string, sep: string, value: string) => {
      const quote = value.startsWith('"') ? '"' : value.startsWith("'") ? "'" : ""
      return `${q}${name}${q}${sep}${quote}${REDACTED}${quote}`
    }
  },
  // Command-line flags: --password foo, --token=foo
  {
    pattern: new RegExp(String.raw`(--${SECRET_NAME})(\s+|=)(?!-)("[^"]*"|'[^']*'|\S+)`, "gi"),
    replace: (_m, flag: string, sep: string) => `${flag}${sep}${REDACTED}`
  },
  // URL userinfo: scheme://user:pass@host
  {
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi,
    replace: (_m, s: string) => `${s}${REDACTED}@`
  }
]

/**
 * Every rule needs one of these substrings to match, so a line without any of them (most log lines) skips
 * the rules entirely. Keep in step with RULES.
 */
const MIGHT_HOLD_SECRET =
  /authoriz|bearer|eyj|a(?:kia|sia|gpa|ida|roa|npa|nva|ipa|bia|cca)|x-amz-|passw|secret|token|key|credential|:\/\/[^\s/]*@/i

/** Redacts one line (no newline inside). Pure. */
export const redactLine = (line: string): string => {
  return MIGHT_HOLD_SECRET.test(line) ? applyRules(line) : line
}

/** Every rule, without the pre-filter (exported for the test that checks the pre-filter loses nothing). */
export const applyRules = (line: string): string => {
  let out = line
  for (const rule of RULES)
    out = out.replace(rule.pattern, rule.replace as (m: string, ...a: unknown[]) => string)
  return out
}

const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----/
const PEM_END = /-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----/

/**
 * Stateful line redactor: also drops the body of PEM private-key blocks, which span lines.
 * Call `line()` for each complete line.
 */
export class LineRedactor {
  private inPem = false
  line(text: string): string {
    if (this.inPem) {
      if (PEM_END.test(text)) {
        this.inPem = false
        return text.slice(text.search(PEM_END))
      }
      return REDACTED
    }
    const begin = text.search(PEM_BEGIN)
    if (begin >= 0) {
      const afterBegin = text.slice(begin)
      if (!PEM_END.test(afterBegin)) this.inPem = true
      const header = afterBegin.match(PEM_BEGIN)?.[0] ?? ""
      return `${redactLine(text.slice(0, begin))}${header}${this.inPem ? "" : REDACTED}`
    }
    return redactLine(text)
  }
}

/** Redacts a whole text at once (for small in-memory values such as agent state). */
export const redactText = (text: string): string => {
  const r = new LineRedactor()
  return text
    .split("\n")
    .map((l) => r.line(l))
    .join("\n")
}

export interface RedactionOptions {
  /** A line longer than this is redacted and flushed in pieces. */
  readonly maxLineBytes?: number
}

/** A streaming Transform (bytes in, UTF-8 bytes out) that redacts every line. */
export const redactionTransform = (options: RedactionOptions = {}): Transform => {
  const maxLine = options.maxLineBytes ?? 256 * 1024
  // Overlap kept from a forced cut so a secret across the cut is redacted with its context.
  const overlap = 4096
  const redactor = new LineRedactor()
  const decoder = new TextDecoder("utf-8")
  let pending = ""
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) {
      pending += decoder.decode(chunk, { stream: true })
      let nl = pending.indexOf("\n")
      const out: string[] = []
      while (nl >= 0) {
        out.push(`${redactor.line(pending.slice(0, nl))}\n`)
        pending = pending.slice(nl + 1)
        nl = pending.indexOf("\n")
      }
      if (pending.length > maxLine) {
        // Cut at a whitespace near the end when possible; keep the tail for the next round.
        const cutAt = Math.max(pending.lastIndexOf(" ", pending.length - overlap), maxLine / 2)
        out.push(redactor.line(pending.slice(0, cutAt)))
        pending = pending.slice(cutAt)
      }
      cb(null, out.length > 0 ? Buffer.from(out.join(""), "utf8") : undefined)
    },
    flush(cb: TransformCallback) {
      pending += decoder.decode()
      cb(null, pending.length > 0 ? Buffer.from(redactor.line(pending), "utf8") : undefined)
    }
  })
}
