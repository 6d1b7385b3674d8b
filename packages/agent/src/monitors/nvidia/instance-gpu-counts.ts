/**
 * NVIDIA GPUs per EC2 instance type (sum of GpuInfo.Gpus[].Count for manufacturer NVIDIA, as
 * DescribeInstanceTypes reports it). Types not listed are not checked against a table. Users can add or
 * override entries in the agent config (`nvidia.expectedGpuCounts`). Only a count below the table raises
 * NvidiaDeviceCountMismatch, so an entry must never overstate: when unsure, leave the type out.
 */
const sizes = (family: string, counts: Readonly<Record<string, number>>): [string, number][] =>
  Object.entries(counts).map(([size, n]) => [`${family}.${size}`, n])

const ONE_GPU_SMALL = { xlarge: 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1 }

export const INSTANCE_GPU_COUNTS: ReadonlyMap<string, number> = new Map<string, number>([
  ...sizes("p3", { "2xlarge": 1, "8xlarge": 4, "16xlarge": 8 }),
  ["p3dn.24xlarge", 8],
  ["p4d.24xlarge", 8],
  ["p4de.24xlarge", 8],
  ["p5.4xlarge", 1],
  ["p5.48xlarge", 8],
  ["p5e.48xlarge", 8],
  ["p5en.48xlarge", 8],
  ["p6-b200.48xlarge", 8],
  ["p6-b300.48xlarge", 8],
  ["p6e-gb200.36xlarge", 4],
  ...sizes("g4dn", { ...ONE_GPU_SMALL, "12xlarge": 4, metal: 8 }),
  ...sizes("g5", { ...ONE_GPU_SMALL, "12xlarge": 4, "24xlarge": 4, "48xlarge": 8 }),
  // g5g.16xlarge left out on purpose: an over-stated count would flag every healthy node of the type.
  ...sizes("g5g", { xlarge: 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, metal: 2 }),
  ...sizes("g6", { ...ONE_GPU_SMALL, "12xlarge": 4, "24xlarge": 4, "48xlarge": 8 }),
  ...sizes("g6e", { ...ONE_GPU_SMALL, "12xlarge": 4, "24xlarge": 4, "48xlarge": 8 }),
  ...sizes("gr6", { "4xlarge": 1, "8xlarge": 1 })
])
