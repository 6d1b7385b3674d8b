/**
 * Zone id <-> zone name (ARC and `aws.subnets` may speak ids, EC2 placement speaks names). Known from the config
 * (`aws.zoneIds`, `aws.subnets`) and learned from DescribeAvailabilityZones, never from node labels, which a node
 * can write.
 */
import type { AwsConfig } from "../../config/AwsConfig.ts"

export interface ZoneNames {
  readonly nameOf: (zoneId: string) => string | undefined
  readonly idOf: (zone: string) => string | undefined
  readonly learn: (pairs: Iterable<readonly [zoneId: string, zone: string]>) => void
}

export const makeZoneNames = (config: Pick<AwsConfig, "zoneIds" | "subnets">): ZoneNames => {
  const names = new Map<string, string>(Object.entries(config.zoneIds))
  for (const s of config.subnets) if (s.zoneId) names.set(s.zoneId, s.zone)
  return {
    nameOf: (zoneId) => names.get(zoneId),
    idOf: (zone) => {
      for (const [id, name] of names) if (name === zone) return id
      return undefined
    },
    learn: (pairs) => {
      for (const [id, name] of pairs) names.set(id, name)
    }
  }
}
