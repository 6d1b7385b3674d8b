// The plugin's presigning with only what it needs: the SDK's SigV4 signer (the repo's sigv4.ts) and its key escaping.
const t0 = performance.now()
const { HttpRequest, sigV4Signer } = await import("../../packages/repair-controller/src/cloud/aws/sigv4.ts")
const credentials = { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "x", sessionToken: "t" }
const hostname = "nodemend-logs.s3.us-west-2.amazonaws.com",
  path = "/b/ip-10-0-1-5-logs.tar.gz"
const urls = []
for (const method of ["PUT", "GET"]) {
  const signer = sigV4Signer({
    service: "s3",
    region: "us-west-2",
    credentials,
    uriEscapePath: false,
    applyChecksum: false
  })
  const s = await signer.presign(
    new HttpRequest({
      method,
      protocol: "https:",
      hostname,
      path,
      headers: { host: hostname, "x-amz-content-sha256": "UNSIGNED-PAYLOAD" }
    }),
    {
      expiresIn: 3600,
      unsignableHeaders: new Set(["x-amz-content-sha256"]),
      unhoistableHeaders: new Set(["x-amz-content-sha256"])
    }
  )
  urls.push(`https://${hostname}${path}?${new URLSearchParams(s.query as Record<string, string>)}`)
}
console.log(
  JSON.stringify({
    ms: Math.round(performance.now() - t0),
    rssMiB: +(process.memoryUsage().rss / 2 ** 20).toFixed(1),
    n: urls.length
  })
)
