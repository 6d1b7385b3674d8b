/**
 * Secrets never leave the node: every collected text goes through `redactionTransform` before it reaches the
 * bundle. Line-oriented, so memory stays bounded by the longest line, and a line longer than `maxLineBytes`
 * is scanned and flushed in pieces without losing a secret that straddles a piece boundary (see LineScan).
 *
 * Every rule is a pattern whose quantifiers are all bounded: one match attempt never looks further than
 * MAX_ATTEMPT_SPAN characters from where it starts. That is what makes the piecewise scan exact: output is
 * held back by HOLDBACK_CHARS (> MAX_ATTEMPT_SPAN), so every attempt that decides a character's fate has
 * seen all the text it will ever look at. Rules mark the characters to hide (a mask) instead of rewriting
 * the text, so the rules are independent and their masks simply add up; each maximal masked run becomes one
 * `[REDACTED]`.
 */
import { Transform, type TransformCallback } from "node:stream"

export const REDACTED = "[REDACTED]"

/**
 * Longest secret value a rule matches in one piece. A value cut by this bound is masked on to its natural
 * end (the rule's `overflowStop`), however long.
 */
export const MAX_SECRET_CHARS = 16_384
/** Upper bound on how far one attempt of any rule looks from its start (a unit test checks every pattern). */
export const MAX_ATTEMPT_SPAN = MAX_SECRET_CHARS + 1_024
/** Output held back while a line is scanned in pieces; must exceed MAX_ATTEMPT_SPAN. */
export const HOLDBACK_CHARS = 65_536
/** A long line is scanned once this much unscanned text has piled up past the holdback (bounds rescans). */
const SCAN_STEP_CHARS = 196_608
/** Characters kept before a scan position for lookbehinds (`(?<!...)` and `\b` look one back). */
export const LOOKBEHIND_CHARS = 64

const V = MAX_SECRET_CHARS

interface Rule {
  readonly name: string
  /** Flags `g` and `d` (indices) always; every quantifier bounded. */
  readonly pattern: RegExp
  /**
   * Found in every match (a global RegExp, or a test from a position): where it does not occur, the rule is
   * not tried (fast path). A property test checks that skipping on it never changes the output.
   */
  readonly trigger: RegExp | ((text: string, from: number) => boolean)
  /** Named groups holding the secret; the first that took part wins. Absent: the whole match. */
  readonly secret?: ReadonlyArray<string>
  /** A last word on a candidate (checks a regex cannot say cheaply). */
  readonly accept?: (candidate: string, match: RegExpExecArray) => boolean
  /** When the secret reaches MAX_SECRET_CHARS, the mask runs on until this matches (or the line ends). */
  readonly overflowStop?: RegExp
  /** The mask runs from the end of the match until this matches, across lines (PEM bodies). */
  readonly until?: RegExp
}

/** Characters of a key, env var or flag name. */
const NC = "[A-Za-z0-9_.-]"
/** Names that are secret wherever they appear inside a name (PGPASSWORD, aws_secret_access_key...). */
const SECRET_WORD =
  "PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API[_-]?KEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|CLIENT[_-]?KEY[_-]?DATA|CREDENTIAL"
/** Names that are secret when they end a name (DB_PASS, MYSQL_PWD, _auth, rd.luks.key, AccountKey...). */
const SECRET_SUFFIX =
  "[_.-](?:PASS|PWD|AUTH)|ACCOUNT[_-]?KEY|AUTH[_-]?KEY|ENCRYPTION[_-]?KEY|SIGNING[_-]?KEY|MASTER[_-]?KEY|LUKS[_.-]?KEY|CRYPTKEY|SESSION[_-]?(?:ID|KEY)"
/** Whole names that are secret (containerd's and Docker's registry `auth`, cookies). */
const SECRET_EXACT = "AUTH|SET-COOKIE|COOKIE"
/** A secret name always contains one of these (the rules' trigger). */
const NAME_WORDS = "pass|pwd|secret|token|key|credential|auth|cookie|session"
const SECRET_NAME = `(?:${NC}{0,128}(?:${SECRET_WORD})${NC}{0,128}|${NC}{0,128}(?:${SECRET_SUFFIX})|(?:${SECRET_EXACT}))`

/** HTTP headers whose value is a credential. */
const SECRET_HEADER =
  "Authorization|Proxy-Authorization|Cookie|Set-Cookie|X-Auth-Token|X-Api-Key|X-Amz-Security-Token|X-Vault-Token|Private-Token|X-Registry-Auth|X-Goog-Api-Key"
const AUTH_SCHEME = "Bearer|Basic|Digest|Negotiate|NTLM|Token|AWS4-HMAC-SHA256|AWS|Splunk|SharedKey"

/** Query parameters (and connection-string keys) that carry a signature or a key wherever they appear. */
const SIGNED_PARAM =
  "X-Amz-Signature|X-Amz-Security-Token|X-Amz-Credential|X-Goog-Signature|X-Goog-Credential|SharedAccessSignature|SharedAccessKey|AccountKey"
/** Query parameters that are secret after `?`, `&` or `;` (SigV2 Signature, Azure SAS sig, OAuth...). */
const QUERY_PARAM =
  "Signature|sig|access_token|id_token|refresh_token|client_secret|code|api_key|apikey|key|token|password|auth"

/** A bounded, complete value: "quoted", 'quoted' or bare up to a delimiter. */
const VALUE = `(?:"(?<dq>[^"\\n]{0,${V}})"|'(?<sq>[^'\\n]{0,${V}})'|(?<bare>[^\\s,;}&\\]]{1,${V}}))`
const VALUE_GROUPS = ["dq", "sq", "bare"]

/** Token shapes with a fixed prefix (vendors document them so that scanners can find them). */
const TOKEN_SHAPES = [
  "gh[pousr]_[A-Za-z0-9]{36,251}", // GitHub classic, OAuth, user-to-server, server-to-server, refresh
  "github_pat_[A-Za-z0-9_]{22,251}", // GitHub fine-grained
  "gl(?:pat|ptt|dt|rt|cbt|ft|soat|oas|agent)-[A-Za-z0-9_-]{20,251}", // GitLab
  "xox[abposer]-[A-Za-z0-9-]{10,251}", // Slack bot/user/app tokens
  "xapp-[0-9]-[A-Za-z0-9-]{10,251}", // Slack app-level
  "AIza[0-9A-Za-z_-]{35}", // Google API key
  "ya29\\.[0-9A-Za-z_-]{20,2048}", // Google OAuth access token
  "GOCSPX-[A-Za-z0-9_-]{20,64}", // Google OAuth client secret
  "(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,251}", // Stripe
  "sk-(?:proj|ant|svcacct|admin)-[A-Za-z0-9_-]{20,251}", // OpenAI, Anthropic
  "npm_[A-Za-z0-9]{36}", // npm
  "pypi-AgE[A-Za-z0-9_-]{50,1024}", // PyPI
  "hf_[A-Za-z0-9]{34,64}", // Hugging Face
  "dckr_pat_[A-Za-z0-9_-]{20,64}", // Docker Hub
  "hv[sb]\\.[A-Za-z0-9_-]{24,512}", // HashiCorp Vault service/batch tokens
  "SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}", // SendGrid
  "dop_v1_[a-f0-9]{64}" // DigitalOcean
]

/** What every TOKEN_SHAPES entry starts with. */
const TOKEN_PREFIXES =
  "gh[pousr]_|github_pat_|gl(?:pat|ptt|dt|rt|cbt|ft|soat|oas|agent)-|xox[abposer]-|xapp-|AIza|ya29\\.|GOCSPX-|[sr]k_(?:live|test)_|sk-(?:proj|ant|svcacct|admin)-|npm_|pypi-AgE|hf_|dckr_pat_|hv[sb]\\.|SG\\.|dop_v1_"

/** The delimiters around a URL's host, for lookaheads that must see where the authority ends. */
const HOST_AHEAD = `(?=\\[?[A-Za-z0-9.:_-]{1,255}\\]?(?::[0-9]{1,5})?(?:[/?#\\s"'<>),;]|$))`

const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]{0,64}PRIVATE KEY(?: BLOCK)?-----/dg
const PEM_END = /-----END [A-Z0-9 ]{0,64}PRIVATE KEY(?: BLOCK)?-----/g
/** Longest text PEM_END can match, re-searched after each piece so a marker split across pieces is found. */
const PEM_END_MAX = 100

/** A 40-character AWS secret access key: mixed case, digits or / +, many distinct characters (not a path or a hash). */
const looksLikeAwsSecret = (s: string): boolean =>
  /[A-Z]/.test(s) && /[a-z]/.test(s) && /[0-9/+]/.test(s) && new Set(s).size >= 20

/**
 * Whether a secret-named setting's value may be secret: not when the name says it holds a location
 * (`--tls-private-key-file=/var/lib/kubelet/pki/kubelet.key`, `PASSWORD_FILE=/run/secrets/db`) or the value is
 * a boolean (`--authentication-token-webhook=true`), which the kubelet logs at every start.
 */
const mayBeSecretValue = (value: string, m: RegExpExecArray): boolean =>
  !/[_.-](?:file|path|dir)$/i.test(m.groups?.name ?? "") && !/^(?:true|false)$/i.test(value)

const RULES: ReadonlyArray<Rule> = [
  {
    name: "credential header",
    trigger:
      /authoriz|cookie|x-auth-token|x-api-key|security-token|vault-token|private-token|registry-auth|goog-api-key/gi,
    // Also Go's map[Authorization:[Basic ...]] and JSON {"Authorization":["Basic ..."]}.
    pattern: new RegExp(
      `(?<![A-Za-z0-9_])(?:${SECRET_HEADER})["']?\\s{0,16}[:=]\\s{0,16}\\[?\\s{0,16}["']?(?:(?:${AUTH_SCHEME})\\s{1,16})?(?<s>[^\\s"',\\]][^"'\\n\\]]{0,${V - 1}})`,
      "dgi"
    ),
    secret: ["s"],
    overflowStop: /["'\n\]]/g
  },
  {
    name: "bearer token",
    trigger: /bearer/gi,
    pattern: new RegExp(`\\bBearer\\s{1,16}(?<s>[A-Za-z0-9\\-._~+/]{1,${V}}={0,4})`, "dgi"),
    secret: ["s"],
    overflowStop: /[^A-Za-z0-9\-._~+/=]/g
  },
  {
    name: "JWT or base64 JSON (service-account tokens, .dockerconfigjson)",
    trigger: /eyJ/g,
    pattern: new RegExp(`(?<![A-Za-z0-9+/_=-])eyJ[A-Za-z0-9+/_=.-]{12,${V}}`, "dg"),
    overflowStop: /[^A-Za-z0-9+/_=.-]/g
  },
  {
    name: "base64 PEM private key (kubeconfig client-key-data, Secret data)",
    trigger: /LS0tLS1CRUdJTi/g,
    pattern: new RegExp(
      `(?<![A-Za-z0-9+/=])LS0tLS1CRUdJTi(?!BDRVJUSUZJQ0FUR|BQVUJMSUMgS0VZ|BYNTA5IENSTC)[A-Za-z0-9+/=]{16,${V}}`,
      "dg"
    ),
    overflowStop: /[^A-Za-z0-9+/=]/g
  },
  {
    name: "AWS access key id",
    trigger: /A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA|BIA|CCA)/g,
    pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[A-Z0-9]{16}\b/dg
  },
  {
    name: "AWS secret access key (bare)",
    trigger: (text, from) => hasKeyRun40(text, from),
    pattern: /(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])/dg,
    accept: looksLikeAwsSecret
  },
  {
    name: "signed URL parameter or connection-string key",
    trigger: /x-amz-|x-goog-|sharedaccess|accountkey/gi,
    pattern: new RegExp(`(?<![A-Za-z0-9_-])(?:${SIGNED_PARAM})=(?<s>[^&\\s"'#<>;]{1,${V}})`, "dgi"),
    secret: ["s"]
  },
  {
    name: "secret query parameter",
    trigger: new RegExp(`[?&;](?:${QUERY_PARAM})=`, "gi"),
    pattern: new RegExp(`[?&;](?:${QUERY_PARAM})=(?<s>[^&\\s"'#<>]{1,${V}})`, "dgi"),
    secret: ["s"]
  },
  {
    name: "secret-named key, env var or setting",
    trigger: new RegExp(`(?:${NAME_WORDS})${NC}{0,128}["']?\\s{0,16}(?::=|=>|[:=])`, "gi"),
    // key=value, key: value, "key": "value", KEY='value', key := value, "key" => "value", "key":["value"]
    pattern: new RegExp(
      `(?<!${NC})(?<q>["']?)(?<name>${SECRET_NAME})\\k<q>\\s{0,16}(?::=|=>|[:=])\\s{0,16}\\[?\\s{0,16}${VALUE}`,
      "dgi"
    ),
    secret: VALUE_GROUPS,
    accept: mayBeSecretValue,
    overflowStop: /[\s,;}&\]]/g
  },
  {
    name: "secret-named command-line flag",
    trigger: new RegExp(`--${NC}{0,128}(?:${NAME_WORDS})`, "gi"),
    pattern: new RegExp(
      `(?<![A-Za-z0-9_-])--(?<name>${SECRET_NAME})(?:\\s{1,16}|=)(?!-)(?:"(?<dq>[^"\\n]{0,${V}})"|'(?<sq>[^'\\n]{0,${V}})'|(?<bare>\\S{1,${V}}))`,
      "dgi"
    ),
    secret: VALUE_GROUPS,
    accept: mayBeSecretValue,
    overflowStop: /\s/g
  },
  {
    name: "URL userinfo with a password (which may hold / @ :)",
    trigger: /:\/\/[^\s/?#@"'<>]{0,256}:/g,
    pattern: new RegExp(
      `(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://(?<s>[^\\s/?#@"'<>]{0,256}:[^\\s"'<>]{1,${V}})@${HOST_AHEAD}`,
      "dg"
    ),
    secret: ["s"]
  },
  {
    name: "URL userinfo that is a token",
    trigger: /:\/\/[A-Za-z0-9_-]{20,256}@/g,
    pattern: new RegExp(
      `(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://(?<s>[A-Za-z0-9_-]{20,256})@${HOST_AHEAD}`,
      "dg"
    ),
    secret: ["s"]
  },
  {
    name: "vendor token",
    trigger: new RegExp(TOKEN_PREFIXES, "g"),
    pattern: new RegExp(`(?<![A-Za-z0-9_-])(?:${TOKEN_SHAPES.join("|")})`, "dg")
  },
  {
    name: "webhook URL secret (Slack, Discord)",
    trigger: /hooks\.slack\.com\/services\/|discord(?:app)?\.com\/api\/webhooks\//g,
    pattern:
      /(?:hooks\.slack\.com\/services\/|discord(?:app)?\.com\/api\/webhooks\/[0-9]{5,30}\/)(?<s>[A-Za-z0-9/_-]{20,256})/dg,
    secret: ["s"]
  },
  { name: "PEM private key body", trigger: /-----BEGIN /g, pattern: PEM_BEGIN, until: PEM_END }
]

/**
 * Every rule's trigger contains a match of one of these (the bare AWS secret's: a run of exactly 40 key
 * characters), so a line without any (most log lines) skips the rules. Shaped for V8's regex engine
 * (measured): one case-insensitive alternation of everything, or words that start with "-" or hold a ".",
 * run at half the speed. Keep in step with the triggers; a property test checks that the pre-filter never
 * skips a line a rule would change.
 */
const SECRET_WORDS = new RegExp(
  `${NAME_WORDS}|sig[a-z]{0,32}=|code=|bearer|eyj|ls0tls1crudjti|slack|webhooks|begin|a(?:kia|sia|gpa|ida|roa|npa|nva|ipa|bia|cca)`,
  "i"
)
const TOKEN_PREFIX = new RegExp(TOKEN_PREFIXES)
const URL_USERINFO = /:\/\/[^\s/?#@"'<>]*:\S*@|:\/\/[A-Za-z0-9_-]{20,}@/

/** 1 for the characters of an AWS secret access key (base64: A-Z a-z 0-9 / +), indexed by UTF-16 code unit. */
const KEY_CHAR = new Uint8Array(65_536)
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+")
  KEY_CHAR[c.charCodeAt(0)] = 1

/**
 * Whether the line has a run of exactly 40 key characters. Looks at every 40th character and measures the
 * run around it only when it is a key character (a run of 40 must cover one of them): several times faster
 * than the equivalent regex.
 */
const hasKeyRun40 = (line: string, start = 0): boolean => {
  const n = line.length
  let i = start + 39
  while (i < n) {
    if (KEY_CHAR[line.charCodeAt(i)] !== 1) {
      i += 40
      continue
    }
    let from = i
    while (from > start && KEY_CHAR[line.charCodeAt(from - 1)] === 1) from--
    let to = i + 1
    while (to < n && KEY_CHAR[line.charCodeAt(to)] === 1) to++
    if (to - from === 40) return true
    i = to + 40
  }
  return false
}

/** Whether a line could hold something a rule masks (cheap; most log lines answer no). */
export const mightHoldSecret = (line: string): boolean =>
  SECRET_WORDS.test(line) ||
  TOKEN_PREFIX.test(line) ||
  (line.includes("://") && URL_USERINFO.test(line)) ||
  hasKeyRun40(line)

/** Whether rule `r`'s trigger occurs in `text` at or after `from`. */
const triggered = (r: number, text: string, from: number): boolean => {
  const trigger = RULES[r]!.trigger
  if (typeof trigger === "function") return trigger(text, from)
  trigger.lastIndex = from
  return trigger.test(text)
}

/** The rules' patterns, for the test that checks every quantifier is bounded. */
export const RULE_PATTERNS: ReadonlyArray<RegExp> = [
  ...RULES.map((r) => r.pattern),
  ...RULES.flatMap((r) => (r.trigger instanceof RegExp ? [r.trigger] : [])),
  PEM_END,
  ...RULES.flatMap((r) => (r.overflowStop ? [r.overflowStop] : []))
]

type Range = readonly [start: number, end: number]

interface OpenMask {
  /** Absolute position the mask starts at. */
  readonly start: number
  /** Absolute position the stop is searched from next. */
  searchFrom: number
  readonly stop: RegExp
  /** How far back from the end to search again next time (a stop split between two pieces). */
  readonly stopMax: number
  readonly pem: boolean
}

/**
 * One line, scanned whole (`push` then `drain(true)`) or in pieces (`push`, `drain(false)` as text arrives,
 * `drain(true)` at the newline). Positions are absolute within the line; `text` holds the line from `base`.
 * Rule r has tried every start before `next[r]`, so a character before min(next) has all its masks known
 * and can be written out; a start at or past `end - HOLDBACK_CHARS` is (re)tried once more text is in.
 */
export class LineScan {
  private text = ""
  private base = 0
  private emitted = 0
  private readonly next: number[] = RULES.map(() => 0)
  private masks: Range[] = []
  private open: OpenMask[] = []
  private lastWasMasked = false
  /** After `drain(true)`: the line ended inside a PEM private key block. */
  pemOpen = false

  /**
   * `inPem`: the line starts inside a PEM private key block. `exhaustive`: try every rule at every position,
   * ignoring the pre-filter and the triggers (the reference the fast path is tested against). `active`: see
   * the field.
   */
  private readonly exhaustive: boolean
  /** For a whole line whose triggers the caller tried: 1 for the rules to run, the others are skipped. */
  private readonly active: Uint8Array | undefined

  constructor(inPem: boolean, exhaustive = false, active?: Uint8Array) {
    this.exhaustive = exhaustive
    this.active = active
    if (inPem) this.open.push({ start: 0, searchFrom: 0, stop: PEM_END, stopMax: PEM_END_MAX, pem: true })
  }

  get end(): number {
    return this.base + this.text.length
  }

  /** Characters received but not yet written out. */
  get unwritten(): number {
    return this.end - this.emitted
  }

  push(s: string): void {
    this.text += s
  }

  /** `checked`: the caller already found the pre-filter true for all of the text. */
  drain(final: boolean, checked = false): string {
    const end = this.end
    const limit = final ? end : end - HOLDBACK_CHARS
    for (const o of [...this.open]) this.advance(o)
    // The pre-filter over everything not yet scanned spares the per-rule triggers most of the time.
    const scanFrom = Math.min(...this.next)
    if (final || scanFrom < limit) {
      // A whole line was checked by the caller; a long line's pieces are checked here.
      if (
        this.exhaustive ||
        checked ||
        mightHoldSecret(this.text.slice(Math.max(0, scanFrom - this.base - 1)))
      )
        for (let r = 0; r < RULES.length; r++) this.scan(r, limit, final)
      else for (let r = 0; r < RULES.length; r++) this.next[r] = final ? end : Math.max(this.next[r]!, limit)
    }
    const upTo = final ? end : Math.max(this.emitted, Math.min(limit, ...this.next))
    const out = this.render(upTo)
    if (final) this.pemOpen = this.open.some((o) => o.pem)
    else this.compact()
    return out
  }

  /** Looks for an open mask's stop; found: the mask closes there. */
  private advance(o: OpenMask): void {
    o.stop.lastIndex = Math.max(0, o.searchFrom - this.base)
    const m = o.stop.exec(this.text)
    if (m) {
      this.masks.push([o.start, this.base + m.index])
      this.open.splice(this.open.indexOf(o), 1)
    } else o.searchFrom = Math.max(o.start, this.end - o.stopMax)
  }

  private scan(r: number, limit: number, final: boolean): void {
    const rule = RULES[r]!
    const re = rule.pattern
    let pos = this.next[r]!
    if (!final && pos >= limit) return
    // One character early: a trigger may look one back. A whole line's triggers were tried by the caller.
    const skip = this.active
      ? this.active[r] !== 1
      : !this.exhaustive && !triggered(r, this.text, Math.max(0, pos - this.base - 1))
    if (skip) {
      this.next[r] = final ? this.end : Math.max(pos, limit)
      return
    }
    for (;;) {
      re.lastIndex = pos - this.base
      const m = re.exec(this.text)
      if (!m) {
        this.next[r] = final ? this.end : Math.max(pos, limit)
        return
      }
      const start = this.base + m.index
      if (!final && start >= limit) {
        this.next[r] = start
        return
      }
      // The scan goes on from where the secret starts, not from the end of the match: the match may have
      // paired the wrong quotes (`x_secret = "  auth = "QUJD"` masks `  auth = ` and must still find `QUJD`),
      // and a candidate the rule turns down hides nothing (`--key-file="DB_PASS=x"`).
      pos = Math.max(start + 1, this.onMatch(rule, m))
      this.next[r] = pos
    }
  }

  /** Records a match's mask; returns where its secret starts (the match's start when turned down). */
  private onMatch(rule: Rule, m: RegExpExecArray): number {
    let span: readonly [number, number] | undefined
    if (rule.secret) {
      for (const g of rule.secret) {
        span = m.indices?.groups?.[g]
        if (span) break
      }
    } else span = m.indices?.[0]
    if (!span) return this.base + m.index
    const from = this.base + span[0]
    const to = this.base + span[1]
    if (rule.accept && !rule.accept(m.input.slice(span[0], span[1]), m)) return this.base + m.index
    if (rule.until) {
      const o: OpenMask = { start: to, searchFrom: to, stop: rule.until, stopMax: PEM_END_MAX, pem: true }
      this.open.push(o)
      this.advance(o)
    } else if (rule.overflowStop && to - from >= MAX_SECRET_CHARS) {
      const o: OpenMask = { start: from, searchFrom: to, stop: rule.overflowStop, stopMax: 0, pem: false }
      this.open.push(o)
      this.advance(o)
    } else if (to > from) this.masks.push([from, to])
    return from
  }

  /** Writes out [emitted, upTo), each maximal masked run as one REDACTED. */
  private render(upTo: number): string {
    if (upTo <= this.emitted) return ""
    const ranges = [...this.masks, ...this.open.map((o): Range => [o.start, this.end])]
      .filter(([a, b]) => b > this.emitted && a < upTo && b > a)
      .sort((x, y) => x[0] - y[0])
    let out = ""
    let p = this.emitted
    let continuing = this.lastWasMasked
    for (const [a0, b0] of ranges) {
      const a = Math.max(a0, p)
      const b = Math.min(b0, upTo)
      if (b <= a) continue
      if (a > p) {
        out += this.text.slice(p - this.base, a - this.base)
        continuing = false
      }
      if (!continuing) out += REDACTED
      continuing = true
      p = b
    }
    if (upTo > p) {
      out += this.text.slice(p - this.base, upTo - this.base)
      continuing = false
    }
    this.lastWasMasked = continuing
    this.emitted = upTo
    return out
  }

  /** Drops what no later scan or render needs. */
  private compact(): void {
    this.masks = this.masks.filter(([, b]) => b > this.emitted)
    const keepFrom =
      Math.min(this.emitted, ...this.next, ...this.open.map((o) => o.searchFrom)) - LOOKBEHIND_CHARS
    if (keepFrom > this.base) {
      this.text = this.text.slice(keepFrom - this.base)
      this.base = keepFrom
    }
  }
}

/** Redacts a whole line that passed the pre-filter; `pemOpen`: it ends inside a PEM private key block. */
const scanWholeLine = (line: string, inPem: boolean): { out: string; pemOpen: boolean } => {
  let active: Uint8Array | undefined
  if (!inPem) {
    // Most lines the pre-filter lets through hold a trigger word but no secret: try the triggers first and
    // build no scanner when none fires.
    let any = false
    for (let r = 0; r < RULES.length; r++) {
      if (triggered(r, line, 0)) {
        active ??= new Uint8Array(RULES.length)
        active[r] = 1
        any = true
      }
    }
    if (!any) return { out: line, pemOpen: false }
  }
  const scan = new LineScan(inPem, false, active)
  scan.push(line)
  const out = scan.drain(true, !inPem)
  return { out, pemOpen: scan.pemOpen }
}

const scanLine = (line: string, exhaustive: boolean): string => {
  if (!exhaustive) return scanWholeLine(line, false).out
  const scan = new LineScan(false, true)
  scan.push(line)
  return scan.drain(true, true)
}

/**
 * Every rule at every position, without the pre-filter and the triggers (exported for the test that checks
 * the fast path loses nothing).
 */
export const applyRules = (line: string): string => scanLine(line, true)

/** Redacts one line (no newline inside). Pure. */
export const redactLine = (line: string): string => (mightHoldSecret(line) ? scanLine(line, false) : line)

/**
 * Stateful line redactor: also masks the body of PEM private-key blocks, which span lines.
 * Call `line()` for each complete line, or `longLine()` ... `endLongLine()` for one fed in pieces.
 */
export class LineRedactor {
  private inPem = false

  line(text: string): string {
    if (!this.inPem && !mightHoldSecret(text)) return text
    const { out, pemOpen } = scanWholeLine(text, this.inPem)
    this.inPem = pemOpen
    return out
  }

  /** Starts a line that arrives in pieces: `push`, `drain(false)` while it grows, `drain(true)` at its end. */
  longLine(): LineScan {
    return new LineScan(this.inPem)
  }

  /** After the long line's `drain(true)`. */
  endLongLine(scan: LineScan): void {
    this.inPem = scan.pemOpen
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
  /** A line longer than this (in UTF-16 code units) is scanned and flushed in pieces. Default 256 KiB. */
  readonly maxLineBytes?: number
}

/** A streaming Transform (bytes in, UTF-8 bytes out) that redacts every line. */
export const redactionTransform = (options: RedactionOptions = {}): Transform => {
  const maxLine = options.maxLineBytes ?? 256 * 1024
  const redactor = new LineRedactor()
  const decoder = new TextDecoder("utf-8")
  /** The current line's start while it is short enough to keep whole. */
  let pending = ""
  /** The current line once it outgrew maxLine. */
  let long: LineScan | undefined

  const take = (s: string, out: string[]) => {
    let i = 0
    for (;;) {
      const nl = s.indexOf("\n", i)
      if (nl < 0) break
      const part = s.slice(i, nl)
      if (long) {
        long.push(part)
        out.push(long.drain(true), "\n")
        redactor.endLongLine(long)
        long = undefined
      } else {
        out.push(redactor.line(pending + part), "\n")
        pending = ""
      }
      i = nl + 1
    }
    const rest = i === 0 ? s : s.slice(i)
    if (rest === "") return
    if (!long) {
      pending += rest
      if (pending.length <= maxLine) return
      long = redactor.longLine()
      long.push(pending)
      pending = ""
    } else long.push(rest)
    if (long.unwritten > HOLDBACK_CHARS + SCAN_STEP_CHARS) out.push(long.drain(false))
  }

  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) {
      const out: string[] = []
      take(decoder.decode(chunk, { stream: true }), out)
      const text = out.join("")
      cb(null, text.length > 0 ? Buffer.from(text, "utf8") : undefined)
    },
    flush(cb: TransformCallback) {
      const out: string[] = []
      take(decoder.decode(), out)
      if (long) {
        out.push(long.drain(true))
        redactor.endLongLine(long)
        long = undefined
      } else if (pending.length > 0) {
        out.push(redactor.line(pending))
        pending = ""
      }
      const text = out.join("")
      cb(null, text.length > 0 ? Buffer.from(text, "utf8") : undefined)
    }
  })
}
