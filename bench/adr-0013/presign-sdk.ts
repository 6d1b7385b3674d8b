const t0 = performance.now()
const { S3Client, PutObjectCommand, GetObjectCommand } = await import("@aws-sdk/client-s3")
const { getSignedUrl } = await import("@aws-sdk/s3-request-presigner")
const client = new S3Client({
  region: "us-west-2",
  credentials: { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "x", sessionToken: "t" }
})
const urls = {
  put: await getSignedUrl(
    client,
    new PutObjectCommand({ Bucket: "nodemend-logs", Key: "b/ip-10-0-1-5-logs.tar.gz" }),
    { expiresIn: 3600 }
  ),
  get: await getSignedUrl(
    client,
    new GetObjectCommand({ Bucket: "nodemend-logs", Key: "b/ip-10-0-1-5-logs.tar.gz" }),
    { expiresIn: 3600 }
  )
}
console.log(
  JSON.stringify({
    ms: Math.round(performance.now() - t0),
    rssMiB: +(process.memoryUsage().rss / 2 ** 20).toFixed(1),
    n: Object.keys(urls).length
  })
)
