/** The fake region's availability zones: name, zone id (what ARC speaks) and one subnet each. */
export interface FakeZone {
  readonly name: string
  readonly zoneId: string
  readonly subnetId: string
  /** First two octets of the subnet's private addresses (a /16 per zone), e.g. `10.1`. */
  readonly cidrPrefix: string
}

const REGION_ABBREV: Record<string, string> = {
  "us-east-1": "use1",
  "us-east-2": "use2",
  "us-west-1": "usw1",
  "us-west-2": "usw2",
  "eu-west-1": "euw1",
  "eu-central-1": "euc1",
  "ap-southeast-1": "apse1"
}

/** Three zones `<region>a..c` with ids `<abbrev>-az1..3` and subnets `subnet-0fake0000000000a..c`. */
export function defaultZones(region: string): ReadonlyArray<FakeZone> {
  const abbrev = REGION_ABBREV[region] ?? region.replace(/-/g, "")
  return ["a", "b", "c"].map((letter, i) => ({
    name: `${region}${letter}`,
    zoneId: `${abbrev}-az${i + 1}`,
    subnetId: `subnet-0fake00000000000${letter}`,
    cidrPrefix: `10.${i + 1}`
  }))
}

export const VPC_ID = "vpc-0fake000000000000"
export const OWNER_ID = "111122223333"
