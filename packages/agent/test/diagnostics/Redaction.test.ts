import { Readable } from "node:stream"
import { text } from "node:stream/consumers"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  applyRules,
  HOLDBACK_CHARS,
  LOOKBEHIND_CHARS,
  MAX_ATTEMPT_SPAN,
  MAX_SECRET_CHARS,
  mightHoldSecret,
  REDACTED,
  RULE_PATTERNS,
  redactionTransform,
  redactLine,
  redactText
} from "../../src/diagnostics/Redaction.ts"
import { regexReach } from "./regex-span.ts"
import {
  BENIGN_LINES,
  ISSUE_24_SAMPLES,
  K8S_ENV_JSON,
  K8S_ENV_YAML,
  PUTTY_KEY_FILE,
  SECRET,
  SECRET_SAMPLES,
  type SecretSample
} from "./secret-corpus.ts"

const leaked = (out: string, secrets: ReadonlyArray<string>) => secrets.filter((s) => out.includes(s))

/** The samples caught inside other text (all but the ones that are a line of their own). */
const INLINE_SAMPLES = SECRET_SAMPLES.filter((s) => !s.lineOnly)

const stream = async (chunks: ReadonlyArray<string>, maxLineBytes?: number) =>
  text(
    Readable.from(chunks.map((c) => Buffer.from(c))).pipe(
      redactionTransform(maxLineBytes === undefined ? {} : { maxLineBytes })
    )
  )

/** Cuts `s` at the given positions (any order, duplicates and out-of-range ones ignored). */
const cutAt = (s: string, positions: ReadonlyArray<number>): string[] => {
  const cuts = [...new Set(positions.filter((p) => p > 0 && p < s.length))].sort((a, b) => a - b)
  const parts: string[] = []
  let from = 0
  for (const c of cuts) {
    parts.push(s.slice(from, c))
    from = c
  }
  parts.push(s.slice(from))
  return parts
}

/** Ordinary log text, about `length` characters, without a newline. */
const benignFiller = (length: number, offset = 0): string => {
  const base = `${BENIGN_LINES.join(" | ")} | `
  const start = offset % base.length
  return base.repeat(Math.ceil((length + start) / base.length) + 1).slice(start, start + length)
}

describe("secret corpus (test/diagnostics/secret-corpus.ts)", () => {
  it.each(SECRET_SAMPLES.map((s) => [s.name, s] as const))(
    "%s: nothing of the secret is left, line by line or in a stream",
    async (_name, sample: SecretSample) => {
      const line = redactLine(sample.text)
      expect(leaked(line, sample.secrets), line).toEqual([])
      expect(line).toContain(REDACTED)
      expect(leaked(redactText(`before\n${sample.text}\nafter`), sample.secrets)).toEqual([])
      expect(leaked(await stream([`first\n${sample.text}\nlast\n`]), sample.secrets)).toEqual([])
    }
  )

  it("covers the shapes the first redaction let through (issue #13)", () => {
    expect(SECRET_SAMPLES.filter((s) => s.leakedBefore).length).toBeGreaterThanOrEqual(30)
  })

  it("covers every shape issue #24 listed, and more of each class", () => {
    expect(ISSUE_24_SAMPLES.length).toBeGreaterThanOrEqual(55)
    for (const s of ISSUE_24_SAMPLES) expect(SECRET_SAMPLES).toContain(s)
  })

  it("ends a value where its syntax ends, and keeps what follows (issue #24)", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["password=abc;S3cr3t next", `password=${REDACTED} next`],
      ["Host=db;Password=abc;S3cr3t;Database=app", `Host=db;Password=${REDACTED};Database=app`],
      ["Server=db;Uid=sa;Pwd={a;b}}c};Encrypt=yes", `Server=db;Uid=sa;Pwd={${REDACTED}};Encrypt=yes`],
      ["?user=app&password=a&b&next=1", `?user=app&password=${REDACTED}&next=1`],
      ['{"password":"a\\"b,c}","user":"bob"}', `{"password":"${REDACTED}","user":"bob"}`],
      ['x {\\"token\\":\\"a\\\\\\"b\\",\\"n\\":1}', `x {\\"token\\":\\"${REDACTED}\\",\\"n\\":1}`],
      [
        '{"env":[{"name":"LOG_LEVEL","value":"info"},{"name":"DB_PASSWORD","value":"x,y"}]}',
        `{"env":[{"name":"LOG_LEVEL","value":"info"},{"name":"DB_PASSWORD","value":"${REDACTED}"}]}`
      ],
      [
        '[{"value":"info","name":"LOG_LEVEL"},{"value":"p;w","name":"API_TOKEN"}]',
        `[{"value":"info","name":"LOG_LEVEL"},{"value":"${REDACTED}","name":"API_TOKEN"}]`
      ],
      ["mysql -u root -pS3cr3t app", `mysql -u root -p${REDACTED} app`],
      ["sshpass -p -dash ssh host", `sshpass -p ${REDACTED} ssh host`],
      ["curl -u admin:pw https://x", `curl -u admin:${REDACTED} https://x`],
      [
        "docker run -p 8080:80 nginx && docker login -p pw r.io",
        `docker run -p 8080:80 nginx && docker login -p ${REDACTED} r.io`
      ],
      ["machine h login u password pw", `machine h login u password ${REDACTED}`],
      ["requirepass pw", `requirepass ${REDACTED}`],
      ["<Password>p&amp;w</Password>", `<Password>${REDACTED}</Password>`]
    ]
    for (const [line, want] of cases) expect(redactLine(line), line).toBe(want)
  })

  it("a value with any punctuation is hidden whole, in every syntax of its class (property)", () => {
    // A value made of marked words joined by punctuation: no marked word may survive.
    const punct = fc.constantFrom(..."!#$%&()*+,-./;<>?@[]^_`{|}~")
    const anyPunct = fc.constantFrom(..."!#$%&()*+,-./:;<=>?@[]^_`{|}~\"'")
    const value = (p: fc.Arbitrary<string>) =>
      fc
        .array(p, { minLength: 1, maxLength: 6 })
        .map((ps) => ({ text: ps.map((c, i) => `Mk${i}q${c}`).join(""), words: ps.map((_, i) => `Mk${i}q`) }))
    const bare = (v: string) => [
      `password=${v} next=1`,
      `DB_PASSWORD: ${v}`,
      `--password ${v} --user x`,
      `mysql -p${v} db`,
      `curl -u user:${v} https://x`,
      `machine h login u password ${v}`
    ]
    const quoted = (v: string) => [
      JSON.stringify({ user: "u", password: v, port: 1 }),
      JSON.stringify({ MESSAGE: JSON.stringify({ password: v, n: 1 }) }),
      JSON.stringify({ env: [{ name: "DB_PASSWORD", value: v }] }),
      JSON.stringify([{ value: v, name: "API_TOKEN" }]),
      `Pwd={${v.replaceAll("}", "}}")}};Encrypt=yes`
    ]
    fc.assert(
      fc.property(value(punct), value(anyPunct), (b, q) => {
        for (const line of bare(b.text)) expect(leaked(redactLine(line), b.words), line).toEqual([])
        for (const line of quoted(q.text)) expect(leaked(redactLine(line), q.words), line).toEqual([])
      }),
      { numRuns: 500 }
    )
  })

  it("keeps what surrounds a secret", () => {
    expect(redactLine(`    auth = "${SECRET.containerdAuth}"`)).toBe(`    auth = "${REDACTED}"`)
    expect(redactLine(`DB_HOST=db DB_PASS=${SECRET.dbPass} DB_USER=app`)).toBe(
      `DB_HOST=db DB_PASS=${REDACTED} DB_USER=app`
    )
    expect(
      redactLine(`{"Authorization":["Basic ${SECRET.basicInMap}"],"User-Agent":["Go-http-client/1.1"]}`)
    ).toBe(`{"Authorization":["Basic ${REDACTED}"],"User-Agent":["Go-http-client/1.1"]}`)
    expect(redactLine(`map[Authorization:[Bearer ${SECRET.bearerInMap}] Content-Type:[text/plain]]`)).toBe(
      `map[Authorization:[Bearer ${REDACTED}] Content-Type:[text/plain]]`
    )
    expect(redactLine(`dsn=postgres://app:${SECRET.urlPasswordSlash}@db.internal:5432/app`)).toBe(
      `dsn=postgres://${REDACTED}@db.internal:5432/app`
    )
    expect(
      redactLine(
        `https://b.s3.amazonaws.com/k?AWSAccessKeyId=${SECRET.akid}&Expires=17&Signature=${SECRET.sigV2}`
      )
    ).toBe(`https://b.s3.amazonaws.com/k?AWSAccessKeyId=${REDACTED}&Expires=17&Signature=${REDACTED}`)
    expect(redactLine(`root=UUID=3f1e ro rd.luks.key=${SECRET.luksKey} console=ttyS0`)).toBe(
      `root=UUID=3f1e ro rd.luks.key=${REDACTED} console=ttyS0`
    )
    expect(redactLine(`> Cookie: session=${SECRET.cookieSession}`)).toBe(`> Cookie: ${REDACTED}`)
  })

  it("finds a secret inside a candidate turned down or a match that paired the wrong quotes", () => {
    expect(redactLine(`FLAG: --tls-private-key-file="DB_PASS=${SECRET.dbPass}"`)).toMatch(
      /^FLAG: --tls-private-key-file="DB_PASS=\[REDACTED\]"?$/
    )
    expect(redactLine(`hook_secret = "  auth = "${SECRET.containerdAuth}" `)).not.toContain(
      SECRET.containerdAuth
    )
  })

  it("secrets side by side, inside each other's quotes, among log text: none survives (property)", () => {
    const glue = [" ", ' "', '" ', " '", "' ", " [", "] ", ", ", ' = "', ' --x-file="', ' {"k":"', '"} ']
    const part = fc.oneof(
      fc.constantFrom(...BENIGN_LINES).map((text) => ({ text, secrets: [] as ReadonlyArray<string> })),
      fc.constantFrom(...INLINE_SAMPLES)
    )
    fc.assert(
      fc.property(
        fc.array(fc.tuple(part, fc.constantFrom(...glue)), { minLength: 1, maxLength: 6 }),
        (parts) => {
          const line = parts.map(([p, g]) => p.text + g).join("")
          expect(
            leaked(
              redactText(line),
              parts.flatMap(([p]) => p.secrets)
            )
          ).toEqual([])
        }
      ),
      { numRuns: 3000 }
    )
  })

  it("masks a value longer than MAX_SECRET_CHARS to its end", () => {
    const value = "v".repeat(3 * MAX_SECRET_CHARS)
    expect(redactLine(`password=${value} next`)).toBe(`password=${REDACTED} next`)
    expect(redactLine(`Authorization: Bearer ${value}" rest`)).toBe(`Authorization: Bearer ${REDACTED}" rest`)
  })

  it("drops PEM private key bodies across lines, and keeps what follows", () => {
    const pem = [
      "key:",
      "-----BEGIN RSA PRIVATE KEY-----",
      "MIIEpAIBAAKCAQEAplanted",
      "abc",
      "-----END RSA PRIVATE KEY-----",
      "after"
    ]
    const out = redactText(pem.join("\n"))
    expect(out).not.toContain("MIIEpAIBAAKCAQEAplanted")
    expect(out).not.toContain("abc")
    expect(out.split("\n")).toEqual([
      "key:",
      "-----BEGIN RSA PRIVATE KEY-----",
      REDACTED,
      REDACTED,
      "-----END RSA PRIVATE KEY-----",
      "after"
    ])
  })

  it("hides the value of a name/value pair written on two lines (pretty-printed Kubernetes env)", async () => {
    const yaml = `${K8S_ENV_YAML.join("\n")}\n`
    const yamlWant = yaml.replace("value: k8s-yaml-planted-2d3e", `value: ${REDACTED}`)
    expect(redactText(yaml)).toBe(yamlWant)
    const json = `${K8S_ENV_JSON.join("\n")}\n`
    const jsonWant = json.replace('"value": "k8s-json-planted;3e4f"', `"value": "${REDACTED}"`)
    expect(redactText(json)).toBe(jsonWant)
    for (let cut = 1; cut < yaml.length; cut += 5) {
      expect(await stream([yaml.slice(0, cut), yaml.slice(cut)])).toBe(yamlWant)
      expect(await stream([json.slice(0, cut), json.slice(cut)])).toBe(jsonWant)
    }
    // Only the line right after the name: a value further down, or a lone value line, is not the secret's.
    expect(redactText("- name: DB_PASSWORD\n  valueFrom: x\n  value: kept")).toBe(
      "- name: DB_PASSWORD\n  valueFrom: x\n  value: kept"
    )
    expect(redactText("value: kept")).toBe("value: kept")
    // The value line may be over the line cap.
    const long = `- name: DB_PASSWORD\n  value: ${"s".repeat(300_000)}\nnext\n`
    expect(await stream(cutAt(long, [70_000, 200_000]))).toBe(
      `- name: DB_PASSWORD\n  value: ${REDACTED}\nnext\n`
    )
  })

  it("drops PEM bodies whose markers are in lower case", () => {
    const out = redactText(
      ["-----begin private key-----", SECRET.pemLowerBody, "-----end private key-----", "x"].join("\n")
    )
    expect(out.split("\n")).toEqual([
      "-----begin private key-----",
      REDACTED,
      "-----end private key-----",
      "x"
    ])
  })

  it("drops the private lines of a PuTTY key file, whatever the chunking", async () => {
    const file = `${PUTTY_KEY_FILE.join("\n")}\nafter\n`
    const want = `${[...PUTTY_KEY_FILE.slice(0, 7), REDACTED, REDACTED, ...PUTTY_KEY_FILE.slice(9)].join("\n")}\nafter\n`
    expect(`${redactText(file)}`).toBe(want)
    for (let cut = 1; cut < file.length; cut += 7)
      expect(await stream([file.slice(0, cut), file.slice(cut)])).toBe(want)
  })

  it("drops a PEM body whose END marker is split between chunks", async () => {
    const input = `x\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIplantedECkey\n-----END EC PRIVATE KEY-----\ntail\n`
    for (let cut = 1; cut < input.length; cut++) {
      const out = await stream([input.slice(0, cut), input.slice(cut)])
      expect(out, `cut at ${cut}`).not.toContain("MHcCAQEEIplantedECkey")
      expect(out.endsWith("-----END EC PRIVATE KEY-----\ntail\n"), `cut at ${cut}: ${out}`).toBe(true)
    }
  })
})

describe("benign text stays intact", () => {
  it.each(BENIGN_LINES)("%s", (line) => {
    expect(mightHoldSecret(line) ? applyRules(line) : line).toBe(line)
    expect(redactLine(line)).toBe(line)
  })

  it("a whole benign log goes through the stream byte for byte, whatever the chunking (property)", async () => {
    const log = `${BENIGN_LINES.join("\n")}\n`
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: log.length - 1 }), { maxLength: 30 }),
        async (cuts) => {
          expect(await stream(cutAt(log, cuts))).toBe(log)
        }
      ),
      { numRuns: 50 }
    )
  })

  it("a benign line longer than the line cap comes out byte for byte", async () => {
    const line = benignFiller(900_000)
    expect(await stream(cutAt(line, [65_536, 300_000, 300_001, 777_777]))).toBe(line)
  })
})

describe("lines longer than the cap (scanned in pieces)", () => {
  const sample = fc.constantFrom(...INLINE_SAMPLES)

  it("a secret anywhere, across any chunk boundary or piece cut, never appears (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        sample,
        fc.integer({ min: 280_000, max: 600_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.array(fc.integer({ min: 0, max: 700_000 }), { maxLength: 6 }),
        fc.array(fc.integer({ min: -4, max: 120 }), { minLength: 1, maxLength: 3 }),
        async (s, length, where, offset, cuts, intoSecret) => {
          const filler = benignFiller(length, offset)
          const at = Math.floor(where * length)
          const line = `${filler.slice(0, at)} ${s.text} ${filler.slice(at)}`
          const p = at + 1
          // Chunk boundaries inside the secret, and ones that put a piece cut there (output is held back by
          // HOLDBACK_CHARS from the end of what has arrived).
          const inside = intoSecret.flatMap((d) => [p + d, p + d + HOLDBACK_CHARS])
          const out = await stream([...cutAt(line, [...cuts, ...inside]), "\n"])
          expect(leaked(out, s.secrets), `${s.name} at ${at} of ${length}`).toEqual([])
        }
      ),
      { numRuns: 60 }
    )
  })

  it("gives the same output as scanning the line whole (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 500_000 }), sample), { minLength: 1, maxLength: 5 }),
        fc.array(fc.integer({ min: 0, max: 520_000 }), { maxLength: 8 }),
        async (placed, cuts) => {
          let line = benignFiller(500_000, placed.length)
          for (const [at, s] of [...placed].sort((a, b) => b[0] - a[0]))
            line = `${line.slice(0, at)} ${s.text} ${line.slice(at)}`
          expect(await stream(cutAt(line, cuts))).toBe(applyRules(line))
        }
      ),
      { numRuns: 25 }
    )
  })

  it.each([
    ["Authorization: Bearer", SECRET.bearer],
    ["password:", SECRET.password],
    ["--token", SECRET.genericToken],
    ["Cookie:", `session=${SECRET.cookieSession}`]
  ])("masks a secret that straddles the old cut of an over-long line (%s)", async (name, secret) => {
    // The first redaction cut a line over 256 KiB at its last space at least 4 KiB before the end and
    // redacted each piece alone: the name ended one piece and the secret began the next.
    const line = `${benignFiller(300_000)} ${name} ${secret};${"x".repeat(6000)}`
    const out = await stream([line, "\n"])
    expect(leaked(out, [secret])).toEqual([])
    expect(out.startsWith(benignFiller(300_000))).toBe(true)
  })

  it("masks a value longer than MAX_SECRET_CHARS that runs across pieces", async () => {
    const line = `${benignFiller(300_000)} token=${"y".repeat(200_000)} end`
    const out = await stream(cutAt(line, [65_536, 400_000]))
    expect(out).not.toMatch(/y{64}/)
    expect(out.endsWith(`token=${REDACTED} end`)).toBe(true)
  })

  it("drops a PEM body on an over-long line", async () => {
    const body = "QUJD".repeat(100_000)
    const line = `${benignFiller(1000)} -----BEGIN PRIVATE KEY-----${body}-----END PRIVATE KEY----- after`
    const out = await stream(cutAt(line, [70_000, 250_000, 399_999]))
    expect(out).not.toContain("QUJDQUJD")
    expect(out.endsWith(`-----BEGIN PRIVATE KEY-----${REDACTED}-----END PRIVATE KEY----- after`)).toBe(true)
  })
})

describe("redactionTransform", () => {
  it("redacts secrets split across chunks", async () => {
    const input = `a\nDB_PASSWORD=${SECRET.password}\nAuthorization: Bearer ${SECRET.bearer}\nend`
    const out = await stream(input.split(""))
    expect(out).not.toContain(SECRET.password)
    expect(out).not.toContain(SECRET.bearer)
    expect(out.split("\n")).toHaveLength(4)
    expect(out.endsWith("end")).toBe(true)
  })

  it("never lets a planted key through, whatever the chunking (property)", async () => {
    const input = SECRET_SAMPLES.map((s) => s.text).join("\n")
    const secrets = SECRET_SAMPLES.flatMap((s) => s.secrets)
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: input.length - 1 }), { maxLength: 40 }),
        async (cuts) => {
          expect(leaked(await stream(cutAt(input, cuts)), secrets)).toEqual([])
        }
      ),
      { numRuns: 50 }
    )
  })

  it("passes multi-byte UTF-8 through whatever the chunk boundaries", async () => {
    const input = "état ✓ 日本語 🚀 password=sécret ✓\n"
    const bytes = Buffer.from(input)
    for (let cut = 1; cut < bytes.length; cut++) {
      const out = await text(
        Readable.from([bytes.subarray(0, cut), bytes.subarray(cut)]).pipe(redactionTransform())
      )
      expect(out).toBe(`état ✓ 日本語 🚀 password=${REDACTED} ✓\n`)
    }
  })
})

describe("the fast path loses nothing", () => {
  it("pre-filter and triggers never skip a line the rules would change (property)", () => {
    const fragments = [
      ...["Authorization", "authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Vault-Token"],
      ...["Bearer", "bearer", "Basic", ": ", "=", ":=", "=>", '"', "'", " ", "--", "-", "_", ".", "[", "]"],
      ...["token", "TOKEN", "password", "PASSWD", "passphrase", "secret", "api_key", "ACCESS-KEY", "auth"],
      ...["private_key", "credential", "client-key-data", "DB_PASS", "MYSQL_PWD", "_auth", "rd.luks.key"],
      ...["AccountKey", "session_id", "X-Amz-Signature", "X-Goog-Credential", "Signature", "sig", "code"],
      ...["&", "?", ";", "https://", "redis://", "user:pw@", "u:p/w@x@", "host", ":5432", "/path", "@"],
      ...["eyJhbGciOiJSUzI1NiJ9", "eyJzdWIiOiJ4In0", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVk"],
      ...[
        "AKIA",
        "ASIA",
        "ABCDEFGHIJKLMNOP",
        SECRET.awsSecret,
        "wJalrXUtnFEMI/K7MDENG",
        "bPxRfiCYEXAMPLEKEY"
      ],
      ...["ghp_", "R8kLw2ZfQm4Tn7Yv1Xc9Pd3Hs6Jb0Ga5Ue2K", "github_pat_", "xoxb-", "2048213907-", "AIza"],
      ...[
        "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "glpat-",
        "hvs.",
        "sk_live_",
        "npm_",
        "hooks.slack.com/services/"
      ],
      ...["-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "MIIE", "value", "x1", "{", "}", ","],
      // Issue #24's classes.
      ...[
        "Pwd",
        "PWD",
        "pass",
        "DBPASS",
        "BYPASS",
        "pw",
        "passwd",
        "OLDPWD",
        "/home",
        "\\",
        '\\"',
        "name",
        "key"
      ],
      ...[
        "mysql ",
        "sshpass ",
        "docker login ",
        "curl ",
        "redis-cli ",
        "smbclient ",
        "-p",
        "-u",
        "-a",
        "-w",
        "-P"
      ],
      ...[
        "user:pw",
        "u%p",
        "openssl ",
        "-passin ",
        "pass:",
        "machine h ",
        "login u ",
        "default ",
        "requirepass "
      ],
      ...[
        "config set ",
        "<password>",
        "</",
        "Private-Lines: 1",
        "Private-MAC:",
        "-----begin private key-----"
      ],
      ...["IQoJb3JpZ2luX2VjEJr", "FwoGZXIvYXdzE", "sk-", "AbCdEfGhIjKlMnOpT3BlbkFJqRsTuVwX", "123456789:"],
      ...["AAHplantedTelegram0123456789abcdEFG", "$6$", "rounds=5000$saltsalt$PlantedCryptHash0123"]
    ]
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...fragments), { maxLength: 16 }), (parts) => {
        const line = parts.join("")
        expect(redactLine(line)).toBe(applyRules(line))
      }),
      { numRuns: 3000 }
    )
  })

  it("every rule looks a bounded distance from where an attempt starts", () => {
    expect(MAX_ATTEMPT_SPAN).toBeLessThan(HOLDBACK_CHARS)
    for (const pattern of RULE_PATTERNS) {
      const reach = regexReach(pattern.source)
      expect(reach.unbounded, pattern.source).toEqual([])
      expect(reach.ahead, pattern.source).toBeLessThanOrEqual(MAX_ATTEMPT_SPAN)
      expect(reach.behind, pattern.source).toBeLessThanOrEqual(LOOKBEHIND_CHARS)
    }
  })

  it("the reach check sees unbounded and long quantifiers", () => {
    expect(regexReach("a+b").unbounded).toHaveLength(1)
    expect(regexReach("(?:ab){2,}").unbounded).toHaveLength(1)
    expect(regexReach("[a+*]{3}(?=x{0,5})|y").ahead).toBe(8)
    expect(regexReach("(?<![a-z]{2})\\bq").behind).toBe(2)
  })
})
