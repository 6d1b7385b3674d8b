/**
 * EC2 Query protocol input: a form-encoded body of flattened parameters (`InstanceId.1=...`,
 * `Filter.1.Name=...&Filter.1.Value.1=...`, `TagSpecification.1.Tag.1.Key=...`).
 */
export type QueryParams = ReadonlyMap<string, string>

export const parseQueryBody = (body: string): QueryParams => new Map(new URLSearchParams(body))

/** `Prefix.1`, `Prefix.2`, ... in index order (EC2 lists are 1-based). */
export function listParam(params: QueryParams, prefix: string): string[] {
  return indexed(params, prefix).map((i) => params.get(`${prefix}.${i}`) ?? "")
}

/** The indices N present for `Prefix.N` or `Prefix.N.<anything>`. */
export function indexed(params: QueryParams, prefix: string): number[] {
  const seen = new Set<number>()
  const re = new RegExp(`^${prefix.replace(/\./g, "\\.")}\\.(\\d+)(?:$|\\.)`)
  for (const key of params.keys()) {
    const m = re.exec(key)
    if (m) seen.add(Number(m[1]))
  }
  return [...seen].sort((a, b) => a - b)
}

export interface Filter {
  readonly name: string
  readonly values: string[]
}

export function filters(params: QueryParams): Filter[] {
  return indexed(params, "Filter").map((i) => ({
    name: params.get(`Filter.${i}.Name`) ?? "",
    values: listParam(params, `Filter.${i}.Value`)
  }))
}

/** Tags from `TagSpecification.N` entries whose ResourceType is `instance` (or absent). */
export function instanceTags(params: QueryParams): Record<string, string> {
  const tags: Record<string, string> = {}
  for (const i of indexed(params, "TagSpecification")) {
    const type = params.get(`TagSpecification.${i}.ResourceType`)
    if (type !== undefined && type !== "instance") continue
    for (const j of indexed(params, `TagSpecification.${i}.Tag`)) {
      const key = params.get(`TagSpecification.${i}.Tag.${j}.Key`)
      if (key !== undefined) tags[key] = params.get(`TagSpecification.${i}.Tag.${j}.Value`) ?? ""
    }
  }
  return tags
}
