import { describe, expect, it } from "vitest"
import { tagsAsLabels } from "../src/KwokNodeMirror.ts"

describe("tagsAsLabels", () => {
  it("keeps prefixed tags that are valid label keys and values; drops the rest", () => {
    expect(
      tagsAsLabels({
        "nodemend.io/pool": "gpu",
        "karpenter.sh/nodepool": "p5-pool",
        "nodemend.io/replaces": "i-0123456789abcdef0",
        Name: "worker",
        "aws:ec2launchtemplate:id": "lt-0123456789abcdef0",
        "kubernetes.io/cluster/prod": "owned",
        "team.example.com/owner": "has spaces",
        "Bad_Prefix/x": "y",
        "nodemend.io/empty": ""
      })
    ).toEqual({
      "nodemend.io/pool": "gpu",
      "karpenter.sh/nodepool": "p5-pool",
      "nodemend.io/replaces": "i-0123456789abcdef0",
      "nodemend.io/empty": ""
    })
  })
})
