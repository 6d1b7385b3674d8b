// Vitest globalSetup: builds the C test doubles once per run and hands their paths to the tests.
import type { TestProject } from "vitest/node"
import { buildGpuDoubles, type GpuDoubles } from "./double/build.ts"

declare module "vitest" {
  export interface ProvidedContext {
    gpuDoubles: GpuDoubles
  }
}

export default function setup(project: TestProject): void {
  project.provide("gpuDoubles", buildGpuDoubles())
}
