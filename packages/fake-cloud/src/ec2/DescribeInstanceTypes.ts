/**
 * EC2 DescribeInstanceTypes on the fake: the instance types of InstanceTypes.ts, with the XML element names real
 * EC2 uses (`instanceTypeSet`, `vCpuInfo`, `memoryInfo`, `gpuInfo.gpus`). By name (`InstanceType.N`) or all of them;
 * a name the table does not know fails the call as EC2 does.
 */
import { Ec2Error } from "./Ec2Error.ts"
import { type FakeInstanceType, INSTANCE_TYPES } from "./InstanceTypes.ts"
import { listParam, type QueryParams } from "./Ec2Query.ts"
import { el, set } from "./Ec2Xml.ts"

const gpuInfoXml = (t: FakeInstanceType): string => {
  const g = t.gpus
  if (g === undefined) return ""
  const device = `${el("name", g.name)}${el("manufacturer", g.manufacturer)}${el("count", g.count)}<memoryInfo>${el("sizeInMiB", g.memoryMiB)}</memoryInfo>`
  return `<gpuInfo>${set("gpus", [device])}${el("totalGpuMemoryInMiB", g.count * g.memoryMiB)}</gpuInfo>`
}

const typeXml = (name: string, t: FakeInstanceType): string =>
  `${el("instanceType", name)}${el("currentGeneration", true)}<vCpuInfo>${el("defaultVCpus", t.vcpus)}</vCpuInfo><memoryInfo>${el("sizeInMiB", t.memoryMiB)}</memoryInfo>${gpuInfoXml(t)}`

/** The `instanceTypeSet` of the answer. */
export function describeInstanceTypes(params: QueryParams): string {
  const names = listParam(params, "InstanceType")
  const unknown = names.filter((n) => INSTANCE_TYPES[n] === undefined)
  if (unknown.length > 0)
    throw new Ec2Error(
      "InvalidInstanceType",
      `The following supplied instance types do not exist: [${unknown.join(", ")}]`
    )
  const chosen = names.length > 0 ? names : Object.keys(INSTANCE_TYPES)
  return set(
    "instanceTypeSet",
    chosen.map((n) => typeXml(n, INSTANCE_TYPES[n]!))
  )
}
