/**
 * The fake does not know the caller's secret key, so it checks that a request carries a well-formed
 * SigV4 signature (Authorization header + X-Amz-Date), not that the signature is right.
 */
export type SigV4Problem = { readonly code: "missing" | "malformed"; readonly message: string }

const AUTH =
  /^AWS4-HMAC-SHA256 Credential=([A-Za-z0-9]+)\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/

export function checkSigV4(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  expectedService: string
): SigV4Problem | undefined {
  const auth = headers.authorization
  if (auth === undefined || auth === "") {
    return { code: "missing", message: "Request is missing Authentication Token" }
  }
  const m = AUTH.exec(String(auth))
  if (!m) {
    return {
      code: "malformed",
      message:
        "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters with algorithm AWS4-HMAC-SHA256."
    }
  }
  const [, , date, , service, signedHeaders] = m
  if (service !== expectedService) {
    return {
      code: "malformed",
      message: `Credential should be scoped to correct service: '${expectedService}'.`
    }
  }
  const amzDate = String(headers["x-amz-date"] ?? "")
  if (!/^\d{8}T\d{6}Z$/.test(amzDate) || !amzDate.startsWith(date!)) {
    return {
      code: "malformed",
      message: "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."
    }
  }
  if (!signedHeaders!.split(";").includes("host")) {
    return { code: "malformed", message: "'Host' must be a 'SignedHeader' in the AWS Authorization." }
  }
  return undefined
}
