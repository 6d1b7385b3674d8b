// tools/test-failures.mjs: what `npm test` prints last when it fails, so that the tail a CI page shows names each
// failed test and the start of its error, and the end of the log of a failed task that has no vitest report.
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"
import { failedTasks, failedTests, logExcerpt, renderFailures } from "../../../tools/test-failures.mjs"

const report = {
  testResults: [
    {
      name: join(REPO_ROOT, "packages/repair-controller/test/reliability/apiRestart.rtest.ts"),
      status: "failed",
      assertionResults: [
        { status: "passed", fullName: "ok" },
        {
          status: "failed",
          fullName: "restarts > every repair completes",
          failureMessages: [
            "\u001b[31mAssertionError: expected 2 to be 1\u001b[39m\n\n- Expected\n+ Received\n-1\n+2\n at a.ts:1\n at b.ts:2\n at c.ts:3"
          ]
        }
      ]
    },
    {
      name: join(REPO_ROOT, "packages/agent/test/integration/x.test.ts"),
      status: "failed",
      message: "Error: hook timed out in 600000ms",
      assertionResults: []
    }
  ]
}

describe("test-failures", () => {
  const tests = failedTests([report])

  it("names each failed test with the first lines of its error, colours stripped", () => {
    expect(tests).toEqual([
      {
        file: "packages/repair-controller/test/reliability/apiRestart.rtest.ts",
        name: "restarts > every repair completes",
        message: "AssertionError: expected 2 to be 1\n- Expected\n+ Received\n-1\n+2\n at a.ts:1"
      },
      {
        file: "packages/agent/test/integration/x.test.ts",
        name: "(the file itself)",
        message: "Error: hook timed out in 600000ms"
      }
    ])
  })

  it("prints a failed task's log only where no failed test explains it", () => {
    const tasks = failedTasks({
      tasks: [
        {
          taskId: "a#test:cluster",
          package: "a",
          task: "test:cluster",
          directory: "packages/repair-controller",
          execution: { exitCode: 1 }
        },
        {
          taskId: "d#test:cluster",
          package: "d",
          task: "test:cluster",
          directory: "packages/demo",
          execution: { exitCode: 1 }
        },
        {
          taskId: "k#test:cluster",
          package: "k",
          task: "test:cluster",
          directory: "packages/kubectl",
          execution: { exitCode: 0 }
        }
      ]
    })
    expect(tasks.map((t) => t.taskId)).toEqual(["a#test:cluster", "d#test:cluster"])
    const out = renderFailures(tests, tasks, (t) => `last line of ${t.directory}`)
    expect(out).toContain("failed tests (2):")
    expect(out).toContain(
      "  packages/repair-controller/test/reliability/apiRestart.rtest.ts > restarts > every repair completes\n      AssertionError: expected 2 to be 1"
    )
    expect(out).toContain(
      "failed task d#test:cluster, its first error and the end of its log:\n  | last line of packages/demo"
    )
    expect(out).not.toContain("last line of packages/repair-controller")
  })

  it("shows a task's first error even where a long stack pushed it out of the tail", () => {
    const stack = Array.from({ length: 30 }, (_, i) => ` ❯ frame${i} x.js:${i}`)
    const log = [
      "⎯⎯ Unhandled Errors ⎯⎯",
      "Vitest caught 1 unhandled error during the test run.",
      "⎯⎯ Unhandled Error ⎯⎯"
    ]
    log.push("\u001b[31m\u001b[1mError\u001b[22m: buildah bud failed: no space left\u001b[39m", ...stack)
    log.push(" Test Files  no tests", "      Errors  1 error")
    const out = logExcerpt(log.join("\n"), 3, 2)
    expect(out.split("\n")).toEqual([
      "Error: buildah bud failed: no space left",
      " ❯ frame0 x.js:0",
      " ❯ frame1 x.js:1",
      "...",
      " ❯ frame29 x.js:29",
      " Test Files  no tests",
      "      Errors  1 error"
    ])
    // No error above the tail: the tail alone.
    expect(logExcerpt("a\nb\nc\nd", 2)).toBe("c\nd")
  })
})
