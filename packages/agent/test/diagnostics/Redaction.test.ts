import { Readable } from "node:stream"
import { text } from "node:stream/consumers"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  applyRules,
  REDACTED,
  redactionTransform,
  redactLine,
  redactText
} from "../../src/diagnostics/Redaction.ts"

const SECRETS = {
  jwt: "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJlLXBsYW50ZWQ",
  akid: "AKIAIOSFODNN7EXAMPLE",
  aws: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  pw: "hunter2-planted",
  bearer: "s3cr3t-bearer-planted-token"
}

describe("redactLine", () => {
  it.each([
    [`Authorization: Bearer ${SECRETS.bearer}`, SECRETS.bearer],
    [`curl -H "Authorization: Bearer ${SECRETS.bearer}" https://x`, SECRETS.bearer],
    [`token: ${SECRETS.jwt}`, SECRETS.jwt],
    [`projected token ${SECRETS.jwt} in a log`, SECRETS.jwt],
    [`AWS_ACCESS_KEY_ID=${SECRETS.akid}`, SECRETS.akid],
    [`AWS_SECRET_ACCESS_KEY=${SECRETS.aws}`, SECRETS.aws],
    [`aws_secret_access_key = ${SECRETS.aws}`, SECRETS.aws],
    [`DB_PASSWORD=${SECRETS.pw}`, SECRETS.pw],
    [`MY_APP_SECRET='${SECRETS.pw}'`, SECRETS.pw],
    [`{"password": "${SECRETS.pw}", "user": "x"}`, SECRETS.pw],
    [`--db-password ${SECRETS.pw}`, SECRETS.pw],
    [`--api-token=${SECRETS.pw}`, SECRETS.pw],
    [`GET https://b.s3.amazonaws.com/k?X-Amz-Signature=${SECRETS.pw}&x=1`, SECRETS.pw],
    [`proxy=http://user:${SECRETS.pw}@proxy:3128`, SECRETS.pw],
    [`client-key-data: ${SECRETS.aws}`, SECRETS.aws]
  ])("removes the secret from %s", (line, secret) => {
    const out = redactLine(line)
    expect(out).not.toContain(secret)
    expect(out).toContain(REDACTED)
  })

  it("keeps ordinary log lines intact", () => {
    const line =
      "2026-01-01T00:00:00Z kubelet[123]: I0101 pod sandbox ready node=ip-10-0-0-1 password authentication ok"
    expect(redactLine(line)).toBe(line)
  })

  it("drops PEM private key bodies across lines", () => {
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
    expect(out).toContain("after")
  })
})

const stream = async (chunks: string[], maxLineBytes?: number) =>
  text(Readable.from(chunks.map((c) => Buffer.from(c))).pipe(redactionTransform({ maxLineBytes })))

describe("redactionTransform", () => {
  it("redacts secrets split across chunks", async () => {
    const input = `a\nDB_PASSWORD=${SECRETS.pw}\nAuthorization: Bearer ${SECRETS.bearer}\nend`
    const out = await stream(input.split(""))
    expect(out).not.toContain(SECRETS.pw)
    expect(out).not.toContain(SECRETS.bearer)
    expect(out.split("\n")).toHaveLength(4)
    expect(out.endsWith("end")).toBe(true)
  })

  it("bounds over-long lines and still redacts them", async () => {
    const filler = "x ".repeat(5000)
    const out = await stream([`${filler}AKIAIOSFODNN7EXAMPLE ${filler}\n`], 2048)
    expect(out).not.toContain(SECRETS.akid)
  })

  it("never lets a planted key through, whatever the chunking (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 20 }),
        async (cuts) => {
          const input = `pre\nenv AWS_SECRET_ACCESS_KEY=${SECRETS.aws} x\nid ${SECRETS.akid}\njwt ${SECRETS.jwt}\n`
          const chunks: string[] = []
          let i = 0
          for (const c of cuts) {
            if (i >= input.length) break
            chunks.push(input.slice(i, i + c))
            i += c
          }
          if (i < input.length) chunks.push(input.slice(i))
          const out = await stream(chunks)
          return !out.includes(SECRETS.aws) && !out.includes(SECRETS.akid) && !out.includes(SECRETS.jwt)
        }
      ),
      { numRuns: 50 }
    )
  })
})

describe("pre-filter", () => {
  it("never skips a line that a rule would change (property)", () => {
    const fragments = [
      "Authorization",
      "authorization",
      "Bearer",
      "bearer",
      ": ",
      "=",
      '"',
      "'",
      " ",
      "--",
      "-",
      "_",
      "token",
      "TOKEN",
      "password",
      "PASSWD",
      "secret",
      "api_key",
      "ACCESS-KEY",
      "private_key",
      "credential",
      "client-key-data",
      "X-Amz-Signature",
      "&",
      "?",
      "https://",
      "user:pw@",
      "host",
      "/path",
      "eyJhbGciOiJSUzI1NiJ9",
      ".",
      "eyJzdWIiOiJ4In0",
      "AKIA",
      "ASIA",
      "ABCDEFGHIJKLMNOP",
      "value",
      "x1",
      "{",
      "}"
    ]
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...fragments), { maxLength: 16 }), (parts) => {
        const line = parts.join("")
        return redactLine(line) === applyRules(line)
      }),
      { numRuns: 2000 }
    )
  })
})
