// tools/test-times.mjs: the per-file table `npm test` prints from vitest's JSON reports (issue #26: make the next
// slowdown of the cluster phase visible).
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"
import { fileTimes, packageTimes, render } from "../../../tools/test-times.mjs"

const report = (file: string, start: number, end: number, statuses: string[]) => ({
  testResults: [
    {
      name: join(REPO_ROOT, file),
      startTime: start,
      endTime: end,
      assertionResults: statuses.map((status) => ({ status }))
    }
  ]
})

describe("test-times", () => {
  const rows = fileTimes([
    report("packages/agent/test/integration/a.test.ts", 0, 5_000, ["passed"]),
    report("packages/repair-controller/test/integration/b.test.ts", 0, 90_000, ["passed", "failed"]),
    report("packages/repair-controller/test/integration/c.test.ts", 10, 30_010, ["passed"])
  ])

  it("reads each file's wall time and test counts", () => {
    expect(rows).toEqual([
      { file: "packages/agent/test/integration/a.test.ts", ms: 5_000, tests: 1, failed: 0 },
      { file: "packages/repair-controller/test/integration/b.test.ts", ms: 90_000, tests: 2, failed: 1 },
      { file: "packages/repair-controller/test/integration/c.test.ts", ms: 30_000, tests: 1, failed: 0 }
    ])
  })

  it("sums per package and prints the slowest file first", () => {
    expect(packageTimes(rows)).toEqual([
      { pkg: "packages/repair-controller", ms: 120_000, files: 2 },
      { pkg: "packages/agent", ms: 5_000, files: 1 }
    ])
    const lines = render(rows, 2).split("\n")
    expect(lines[0]).toContain("3 files, 125.0 s in all")
    expect(lines[1]).toMatch(
      /90\.0 s .* 2 tests \(1 failed\) {2}packages\/repair-controller\/test\/integration\/b\.test\.ts$/
    )
    expect(lines[3]).toBe("  ... 1 more")
  })
})
