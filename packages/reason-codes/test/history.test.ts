// check:contract against real git histories: the package is copied into throwaway repositories whose
// histories play out each case (a branch off main, a commit on main, a release tag, a fresh CI clone), and
// the real script decides. The attack it stops: editing the catalog and the committed lock together.
import { execFileSync, spawnSync } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

const pkgDir = fileURLToPath(new URL("..", import.meta.url))
const PKG = "packages/reason-codes"
/** The package as it is now is "released"; the cases bump from it, whatever its version. */
const VERSION = (JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { version: string })
  .version
const [MAJOR, MINOR] = VERSION.split(".").map(Number) as [number, number]
const NEXT_MINOR = `${MAJOR}.${MINOR + 1}.0`
const NEXT_MAJOR = `${MAJOR + 1}.0.0`
const esc = (v: string) => v.replaceAll(".", "\\.")
const temps: string[] = []
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true })
})

const { NODEMEND_CONTRACT_BASE: _ignored, ...baseEnv } = process.env
const env = {
  ...baseEnv,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com"
}

const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "nodemend-rc-history-"))
  temps.push(d)
  return d
}

const copyPackage = (to: string) => {
  for (const p of ["src", "scripts", "api", "package.json", "CHANGELOG.md"])
    cpSync(join(pkgDir, p), join(to, p), { recursive: true })
}

class Repo {
  readonly root: string
  readonly pkg: string
  constructor(root: string) {
    this.root = root
    this.pkg = join(root, PKG)
  }
  git(...args: string[]): string {
    return execFileSync("git", args, {
      cwd: this.root,
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"]
    }).trim()
  }
  commit(message: string): this {
    this.git("add", "-A")
    this.git("commit", "-q", "-m", message)
    return this
  }
  edit(file: string, from: string, to: string): this {
    const path = join(this.pkg, file)
    const text = readFileSync(path, "utf8")
    expect(text, `${file} contains ${from}`).toContain(from)
    writeFileSync(path, text.replace(from, to))
    return this
  }
  bump(version: string, changelogLine: string): this {
    const pkg = JSON.parse(readFileSync(join(this.pkg, "package.json"), "utf8")) as { version: string }
    this.edit("package.json", `"version": "${pkg.version}"`, `"version": "${version}"`)
    return this.edit("CHANGELOG.md", "\n## ", `\n## ${version}\n\n- ${changelogLine}\n\n## `)
  }
  /** What someone does who edits the lock by hand to match a tampered catalog, without lock:update's rules. */
  forgeLock(): this {
    const script = `import { writeFileSync, readFileSync } from "node:fs"
import { currentContract } from "./scripts/sources.ts"
const { version } = JSON.parse(readFileSync("package.json", "utf8"))
writeFileSync("api/catalog.lock.json", JSON.stringify(currentContract(version), null, 2) + "\\n")`
    execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: this.pkg, env })
    return this
  }
  run(...args: string[]): { ok: boolean; output: string } {
    const r = spawnSync(process.execPath, ["scripts/check-contract.ts", ...args], {
      cwd: this.pkg,
      env,
      encoding: "utf8"
    })
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` }
  }
  check() {
    return this.run()
  }
  lockUpdate() {
    return this.run("--update")
  }
}

/** A repository whose main has the package as it is now, then an unrelated commit. */
const released = (): Repo => {
  const repo = new Repo(tempDir())
  execFileSync("git", ["init", "-q", "-b", "main", repo.root], { env })
  copyPackage(repo.pkg)
  repo.commit("reason-codes as released")
  writeFileSync(join(repo.root, "README.md"), "unrelated\n")
  return repo.commit("unrelated")
}

const entry = (code: string) => `{
    code: "${code}",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description: "d",
    trigger: "t",
    message: "m",
    since: "${NEXT_MINOR}",
    recovery: "auto",
    defaultAction: "None"
  },`
const addEntry = (r: Repo, code: string) =>
  r.edit("src/catalog.ts", "export const CATALOG = [", `export const CATALOG = [\n  ${entry(code)}`)

const tampers: ReadonlyArray<readonly [string, (r: Repo) => Repo, RegExp]> = [
  [
    "a renamed code",
    (r) => r.edit("src/catalog.ts", 'code: "SoftLockup"', 'code: "CpuSoftLockup"'),
    /SoftLockup \(reason codes\): removed/
  ],
  [
    "a severity change",
    (r) =>
      r.edit(
        "src/catalog.ts",
        'code: "ForkFailedOutOfPIDs",\n    conditionType: "KernelReady",\n    severity: "Condition"',
        'code: "ForkFailedOutOfPIDs",\n    conditionType: "KernelReady",\n    severity: "Event"'
      ),
    /ForkFailedOutOfPIDs \(reason codes\): severity changed/
  ],
  [
    "an XID dropped from the fatal list",
    (r) => r.edit("src/catalog.ts", '  79: "Reboot",\n', ""),
    /NvidiaXID79Error \(fatal XIDs\): removed/
  ],
  [
    "a per-XID action change",
    (r) => r.edit("src/catalog.ts", '  48: "Reboot",', '  48: "Replace",'),
    /NvidiaXID48Error \(fatal XIDs\): defaultAction changed/
  ],
  [
    "a message template change",
    (r) => r.edit("src/catalog.ts", '"CPU stuck for {duration}"', '"CPU stuck {duration}"'),
    /SoftLockup \(reason codes\): message changed/
  ],
  [
    "a taint key rename",
    (r) => r.edit("src/keys.ts", '"nodemend.io/repair"', '"nodemend.io/repairing"'),
    /nodemend.io\/repair \(keys\): removed/
  ],
  [
    "a default policy change",
    (r) =>
      r.edit(
        "src/policies.ts",
        '"AcceleratedHardwareReady", status: "False", tolerationSeconds: 10 * 60',
        '"AcceleratedHardwareReady", status: "False", tolerationSeconds: 60'
      ),
    /AcceleratedHardwareReady=False \(default repair policies\): tolerationSeconds changed/
  ]
]

describe("check:contract compares with the released contract in git history", () => {
  const repo = released()

  it("passes on the released package itself", () => {
    const r = repo.check()
    expect(r.output).toMatch(/reason-code contract OK/)
    expect(r.ok).toBe(true)
  })

  it.each(tampers)(
    "%s with a matching hand-edited lock and no bump fails on a branch off main",
    (_, tamper, expected) => {
      repo.git("checkout", "-q", "-B", "tamper", "main")
      tamper(repo).forgeLock().commit("tamper")
      const r = repo.check()
      repo.git("checkout", "-q", "main")
      expect(r.ok).toBe(false)
      expect(r.output).toMatch(
        new RegExp(
          `breaking change\\(s\\) need a major version bump \\(main at \\w+ \\(merge base\\) is ${esc(VERSION)}`
        )
      )
      expect(r.output).toMatch(expected)
    }
  )

  it("fails when the tamper is committed on main itself, and while it is only in the working tree", () => {
    const onMain = released()
    tampers[0]![1](onMain).forgeLock()
    expect(onMain.check().output).toMatch(/SoftLockup \(reason codes\): removed/)
    onMain.commit("tamper on main")
    const r = onMain.check()
    expect(r.ok).toBe(false)
    expect(r.output).toMatch(
      new RegExp(`main at \\w+ \\(before HEAD\\) is ${esc(VERSION)}, the package is ${esc(VERSION)}`)
    )
  })

  it("a breaking change passes with a major bump, a CHANGELOG section naming it and lock:update", () => {
    repo.git("checkout", "-q", "-B", "major", "main")
    tampers[0]![1](repo).bump(NEXT_MAJOR, "Renamed it.")
    const refused = repo.lockUpdate()
    expect(refused.ok).toBe(false)
    expect(refused.output).toMatch(`CHANGELOG.md section ${NEXT_MAJOR} does not mention SoftLockup`)
    repo.edit("CHANGELOG.md", "- Renamed it.", "- Renamed SoftLockup to CpuSoftLockup.")
    expect(repo.lockUpdate().ok).toBe(true)
    repo.commit(NEXT_MAJOR)
    const r = repo.check()
    repo.git("checkout", "-q", "main")
    expect(r.output).toMatch(/contract OK/)
    expect(r.ok).toBe(true)
  })

  it("the catalog choosing XID actions (2.0.0's kind of change) is refused on a minor bump, passes on a major", () => {
    // Per-XID default actions changed and an XID leaving the fatal list, as 1.7.0 -> 2.0.0 did.
    const change = (r: Repo) =>
      r
        .edit("src/catalog.ts", '  79: "Reboot",', '  79: "Replace",')
        .edit("src/catalog.ts", '  140: "Reboot",', '  140: "Replace",')
        .edit("src/catalog.ts", '  64: "Reboot",\n', "")
    const names = "NvidiaXID79Error, NvidiaXID140Error: Reboot -> Replace; NvidiaXID64Error is a Warning"
    repo.git("checkout", "-q", "-B", "xid-minor", "main")
    change(repo).bump(NEXT_MINOR, names)
    const minor = repo.lockUpdate()
    expect(minor.ok).toBe(false)
    expect(minor.output).toMatch(/breaking change\(s\) need a major version bump/)
    expect(minor.output).toMatch(
      /NvidiaXID79Error \(fatal XIDs\): defaultAction changed from "Reboot" to "Replace"/
    )
    expect(minor.output).toMatch(/NvidiaXID64Error \(fatal XIDs\): removed/)
    repo.forgeLock().commit("minor")
    expect(repo.check().ok).toBe(false)

    repo.git("checkout", "-q", "-B", "xid-major", "main")
    change(repo).bump(NEXT_MAJOR, names)
    expect(repo.lockUpdate().ok).toBe(true)
    repo.commit(NEXT_MAJOR)
    const r = repo.check()
    repo.git("checkout", "-q", "main")
    expect(r.output).toMatch(/contract OK/)
    expect(r.ok).toBe(true)
  })

  it("an addition needs a minor bump", () => {
    repo.git("checkout", "-q", "-B", "addition", "main")
    addEntry(repo, "BrandNewReason").forgeLock().commit("add")
    const unbumped = repo.check()
    expect(unbumped.ok).toBe(false)
    expect(unbumped.output).toMatch(
      /addition\(s\) need a minor version bump[\s\S]*BrandNewReason \(reason codes\): added/
    )
    repo.bump(NEXT_MINOR, "Added BrandNewReason.")
    expect(repo.lockUpdate().ok).toBe(true)
    repo.commit(NEXT_MINOR)
    const r = repo.check()
    repo.git("checkout", "-q", "main")
    expect(r.ok).toBe(true)
  })

  it("a release tag is the released contract when one is reachable; without it, main before HEAD is", () => {
    const tagged = released()
    tagged.git("tag", `reason-codes-v${VERSION}`)
    addEntry(tagged, "BrandNewReason").bump(NEXT_MINOR, "Added BrandNewReason.")
    expect(tagged.lockUpdate().ok).toBe(true)
    tagged.commit(`${NEXT_MINOR}: BrandNewReason`)
    // A second addition before NEXT_MINOR is released: still NEXT_MINOR.
    addEntry(tagged, "AnotherReason").edit(
      "CHANGELOG.md",
      "- Added BrandNewReason.",
      "- Added BrandNewReason and AnotherReason."
    )
    const update = tagged.lockUpdate()
    expect(update.output).toMatch(`released: tag reason-codes-v${VERSION}`)
    expect(update.ok).toBe(true)
    tagged.commit(`${NEXT_MINOR}: AnotherReason`)
    expect(tagged.check().ok).toBe(true)
    // The same history without the tag: the commit before HEAD was already NEXT_MINOR.
    tagged.git("tag", "-d", `reason-codes-v${VERSION}`)
    const untagged = tagged.check()
    expect(untagged.ok).toBe(false)
    expect(untagged.output).toMatch(/AnotherReason \(reason codes\): added/)
    // A breaking change after a tag needs the major bump, however many commits ago the tag was.
    tagged.git("tag", `reason-codes-v${NEXT_MINOR}`, "HEAD")
    tagged
      .edit("src/catalog.ts", '\n  {\n    code: "RapidCron"', '\n  {\n    code: "RapidCronJob"')
      .forgeLock()
      .commit("rename")
    tagged.edit("CHANGELOG.md", `## ${NEXT_MINOR}`, `## ${NEXT_MINOR}\n\n- unrelated`).commit("unrelated")
    expect(tagged.check().output).toMatch(
      new RegExp(
        `tag reason-codes-v${esc(NEXT_MINOR)} is ${esc(NEXT_MINOR)}[\\s\\S]*RapidCron \\(reason codes\\): removed`
      )
    )
  })

  it("works in a fresh clone without tags (CI), and refuses a shallow clone or a copy outside git", () => {
    const origin = released()
    tampers[1]![1](origin).forgeLock().commit("tamper on main")
    origin.git("tag", `reason-codes-v${VERSION}`, "HEAD^")
    const clone = new Repo(join(tempDir(), "clone"))
    execFileSync("git", ["clone", "-q", "--no-tags", origin.root, clone.root], { env })
    expect(clone.git("tag", "--list")).toBe("")
    const r = clone.check()
    expect(r.ok).toBe(false)
    expect(r.output).toMatch(/origin\/main at \w+ \(before HEAD\)[\s\S]*ForkFailedOutOfPIDs/)

    const shallow = new Repo(join(tempDir(), "shallow"))
    execFileSync("git", ["clone", "-q", "--depth", "1", `file://${origin.root}`, shallow.root], { env })
    expect(shallow.check().output).toMatch(/shallow clone/)

    const plain = tempDir()
    copyPackage(plain)
    const r2 = spawnSync(process.execPath, ["scripts/check-contract.ts"], {
      cwd: plain,
      env: { ...env, GIT_CEILING_DIRECTORIES: tmpdir() },
      encoding: "utf8"
    })
    expect(r2.status).toBe(1)
    expect(r2.stderr).toMatch(/not in a git repository/)
  })
})
