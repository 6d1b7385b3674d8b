/** What DescribeInstances and DescribeInstanceStatus share: pages, filter wildcards and limits, state XML. */
import { Ec2Error } from "./Ec2Error.ts"
import { STATE_CODE } from "../InstanceStore.ts"
import type { QueryParams } from "./Ec2Query.ts"
import { el } from "./Ec2Xml.ts"

/**
 * DescribeInstances' and DescribeInstanceStatus' pages: `MaxResults` (5-1000, not with instance ids) and the
 * `NextToken` of the page before.
 */
export function paged<T>(
  found: ReadonlyArray<T>,
  params: QueryParams,
  byIds: boolean
): { page: ReadonlyArray<T>; nextToken?: string } {
  const max = params.get("MaxResults")
  const token = params.get("NextToken")
  if (max === undefined && token === undefined) return { page: found }
  if (byIds && max !== undefined)
    throw new Ec2Error(
      "InvalidParameterCombination",
      "The parameter instancesSet cannot be used with the parameter maxResults"
    )
  const size = max === undefined ? 1000 : Number(max)
  if (!Number.isInteger(size) || size < 5 || size > 1000)
    throw new Ec2Error("InvalidParameterValue", `Value (${max}) for parameter maxResults is invalid`)
  const from = token === undefined ? 0 : Number(token.replace(/^page-/u, ""))
  if (!Number.isInteger(from) || from < 0 || (token !== undefined && !token.startsWith("page-")))
    throw new Ec2Error("InvalidParameterValue", `Invalid value '${token}' for nextToken`)
  const page = found.slice(from, from + size)
  return from + size < found.length ? { page, nextToken: `page-${from + size}` } : { page }
}

export const stateXml = (name: keyof typeof STATE_CODE) =>
  `${el("code", STATE_CODE[name])}${el("name", name)}`

/** EC2 filter values take wildcards: `*` any run of characters, `?` one; a backslash escapes either. */
export function wildcard(pattern: string): RegExp {
  let source = ""
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    const next = pattern[i + 1]
    if (c === "\\" && next !== undefined && "*?\\".includes(next)) {
      source += `\\${next}`
      i++
    } else if (c === "*") source += ".*"
    else if (c === "?") source += "."
    else source += c.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&")
  }
  return new RegExp(`^${source}$`, "su")
}

/** EC2 refuses a call with more filter values than this, all filters together. */
export const MAX_FILTER_VALUES = 200
