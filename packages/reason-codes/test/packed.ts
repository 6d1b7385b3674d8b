// The package as a customer gets it: built, `npm pack`ed, and installed from the tarball into a new project
// in the system temp directory, outside the workspace (so nothing resolves to the workspace's node_modules).
import { execFileSync } from "node:child_process"
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const pkgDir = fileURLToPath(new URL("..", import.meta.url))
export const repoRoot = join(pkgDir, "..", "..")
export const examplesDir = join(repoRoot, "docs", "examples")
export const tsc = join(repoRoot, "node_modules", "typescript", "bin", "tsc")

export interface CustomerProject {
  /** The customer's project directory, with @nodemend/reason-codes installed from the tarball. */
  readonly app: string
  readonly tarball: string
  /** The installed package: app/node_modules/@nodemend/reason-codes. */
  readonly installed: string
  /** Runs a file of the project with this Node.js, `input` on stdin; returns stdout. */
  readonly run: (file: string, input?: string) => string
  readonly remove: () => void
}

export const packAndInstall = (): CustomerProject => {
  const work = mkdtempSync(join(tmpdir(), "nodemend-rc-pack-"))
  const staging = join(work, "package")
  for (const p of ["package.json", "README.md", "CHANGELOG.md", "api", "json", "src"])
    cpSync(join(pkgDir, p), join(staging, p), { recursive: true })
  execFileSync(process.execPath, [join(pkgDir, "scripts", "build.ts"), join(staging, "dist")], {
    stdio: "pipe"
  })
  execFileSync("npm", ["pack", "--silent", "--pack-destination", work], { cwd: staging, stdio: "pipe" })
  const tarball = join(work, readdirSync(work).find((f) => f.endsWith(".tgz"))!)

  const app = join(work, "customer-app")
  cpSync(examplesDir, app, { recursive: true })
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "customer-app", private: true, type: "module" })
  )
  execFileSync(
    "npm",
    ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock", tarball],
    { cwd: app, stdio: "pipe" }
  )
  return {
    app,
    tarball,
    installed: join(app, "node_modules", "@nodemend", "reason-codes"),
    run: (file, input = "") =>
      execFileSync(process.execPath, [join(app, file)], { cwd: app, input, encoding: "utf8", stdio: "pipe" }),
    remove: () => rmSync(work, { recursive: true, force: true })
  }
}

/**
 * Compiles the project's TypeScript files with `strict` as a customer would (Node's own types from the
 * workspace, as the customer's @types/node). Throws with tsc's diagnostics on any error.
 */
export const compileStrict = (project: CustomerProject, files: readonly string[]): void => {
  writeFileSync(
    join(project.app, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noUncheckedIndexedAccess: true,
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2023",
        lib: ["es2023"],
        typeRoots: [join(repoRoot, "node_modules", "@types")],
        types: ["node"],
        outDir: "out",
        rootDir: "."
      },
      files
    })
  )
  try {
    execFileSync(process.execPath, [tsc, "-p", join(project.app, "tsconfig.json")], {
      cwd: project.app,
      encoding: "utf8"
    })
  } catch (e) {
    throw new Error(`tsc failed in the customer project:\n${(e as { stdout?: string }).stdout ?? e}`)
  }
}

/** A typed customer program: a Node's conditions in, typed findings out. Compiled once as ESM, once as CJS. */
export const TYPED_FINDINGS = `import { readFileSync } from "node:fs"
import {
  CATALOG,
  type ConditionType,
  type ParsedCondition,
  type RepairAction,
  type Severity,
  parseNodeCondition,
  parseReason
} from "@nodemend/reason-codes"
import { REPAIR_TAINT_KEY } from "@nodemend/reason-codes/keys"

interface Finding {
  readonly conditionType: ConditionType
  readonly reason: string
  readonly code: string
  readonly params: Readonly<Record<string, string | number>>
  readonly severity: Severity
  readonly action: RepairAction
}

const findingOf = (p: ParsedCondition): Finding | undefined => {
  if (p.kind !== "fault") return undefined
  const parsed = parseReason(p.resolved.reason)
  if (parsed === undefined) return undefined
  const { entry, defaultAction, reason } = p.resolved
  return { conditionType: p.conditionType, reason, code: parsed.code, params: parsed.params, severity: entry.severity, action: defaultAction }
}

// @ts-expect-error: not a condition type nodemend writes (proves the package's types are in effect)
const typo: ConditionType = "KernelReadyy"
void typo

const node = JSON.parse(readFileSync(0, "utf8")) as { status?: { conditions?: unknown[] } }
const findings = (node.status?.conditions ?? [])
  .map((c) => findingOf(parseNodeCondition(c)))
  .filter((f): f is Finding => f !== undefined)
console.log(JSON.stringify({ findings, entries: CATALOG.length, taint: REPAIR_TAINT_KEY }))
`
