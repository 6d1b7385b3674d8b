/**
 * The instance types the fake cloud knows, as EC2 DescribeInstanceTypes reports them: the one table behind both
 * DescribeInstanceTypes (DescribeInstanceTypes.ts) and the capacity of the Nodes its instances register
 * (KwokNodeMirror.ts), so what the cloud promises and what a healthy machine shows agree.
 *
 * Figures (vCPUs, memory, GPUs, memory per GPU), with where they were read (stored copies, via the search tool):
 * - g5.xlarge: 4 vCPUs, 16 GiB, 1 NVIDIA A10G with 24 GiB. AWS Batch User Guide, "Run GPU jobs", its table of
 *   GPU instance types (docs.aws.amazon.com/batch/latest/userguide/gpu-jobs.html, translated copies).
 * - p4d.24xlarge: 96 vCPUs, 1152 GiB, 8 NVIDIA A100 with 40 GB. The GPU count and model from AWS's GPU instance
 *   table by Shashank Prasanna (AWS), gist.github.com/shashankprasanna/10ebe6dc1ba1d8d93db17da4e2cc890e; vCPUs and
 *   memory as the fake had them before.
 * - p5.48xlarge: 192 vCPUs, 2048 GiB, 8 NVIDIA H100 with 80 GB, as AWS's EC2 Capacity Blocks launch gave them
 *   (reported by silicon.fr/aws-blocs-capacite-ec2-ml-473074.html). No AWS page with the P4d and P5 rows was
 *   found: check these two against DescribeInstanceTypes before relying on them elsewhere.
 * - m5.large, m5.xlarge, c5.xlarge: no GPUs (no GpuInfo).
 * - m7i.large: 2 vCPUs, 8 GiB; m7i.2xlarge: 8 vCPUs, 32 GiB; no GPUs (the demo's general pool). The m7i family's
 *   published sizes, as Karpenter's balanced-consolidation RFC uses them ("two m7i.2xlarge (8 vCPU, 32 GiB)").
 * p6e-gb200.36xlarge is left out: no page at hand gives its GPU count per instance.
 */

export interface FakeGpu {
  readonly name: string
  readonly manufacturer: string
  readonly count: number
  readonly memoryMiB: number
}

export interface FakeInstanceType {
  readonly vcpus: number
  readonly memoryMiB: number
  readonly gpus?: FakeGpu
}

const GIB = 1024

export const INSTANCE_TYPES: Readonly<Record<string, FakeInstanceType>> = {
  "m5.large": { vcpus: 2, memoryMiB: 8 * GIB },
  "m5.xlarge": { vcpus: 4, memoryMiB: 16 * GIB },
  "c5.xlarge": { vcpus: 4, memoryMiB: 8 * GIB },
  "m7i.large": { vcpus: 2, memoryMiB: 8 * GIB },
  "m7i.2xlarge": { vcpus: 8, memoryMiB: 32 * GIB },
  "g5.xlarge": {
    vcpus: 4,
    memoryMiB: 16 * GIB,
    gpus: { name: "A10G", manufacturer: "NVIDIA", count: 1, memoryMiB: 24 * GIB }
  },
  "p4d.24xlarge": {
    vcpus: 96,
    memoryMiB: 1152 * GIB,
    gpus: { name: "A100", manufacturer: "NVIDIA", count: 8, memoryMiB: 40 * GIB }
  },
  "p5.48xlarge": {
    vcpus: 192,
    memoryMiB: 2048 * GIB,
    gpus: { name: "H100", manufacturer: "NVIDIA", count: 8, memoryMiB: 80 * GIB }
  }
}

/** A type the table does not name boots as this (the fake accepts any type name in RunInstances). */
const UNLISTED: FakeInstanceType = { vcpus: 8, memoryMiB: 32 * GIB }

export const instanceTypeOf = (name: string): FakeInstanceType => INSTANCE_TYPES[name] ?? UNLISTED

/**
 * What a machine of `name` registers as its Node's capacity, as kubelet and the NVIDIA device plugin report it;
 * `missingGpus`: GPUs it came up without (fallen off the bus at boot), gone from capacity and allocatable alike.
 */
export const nodeCapacityOf = (name: string, missingGpus = 0): Record<string, string> => {
  const t = instanceTypeOf(name)
  const gpus = Math.max(0, (t.gpus?.count ?? 0) - missingGpus)
  return {
    cpu: String(t.vcpus),
    memory: `${t.memoryMiB / GIB}Gi`,
    ...(t.gpus !== undefined ? { "nvidia.com/gpu": String(gpus) } : {})
  }
}
