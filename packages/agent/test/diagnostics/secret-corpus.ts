// Secret shapes as they appear in what a log bundle collects (containerd and Docker config, kubelet and
// containerd journals, dmesg and the kernel command line, CNI config, env dumps, agent state), each with the
// exact substrings that must not survive redaction. `leakedBefore` marks the shapes the first redaction let
// through (security issue #13, item 5): each of those is a test that fails on that code.
//
// The values are made up, in each vendor's documented shape (prefix, alphabet, length); none is a real
// credential. BENIGN_LINES are ordinary node log lines that must come out byte for byte.

export interface SecretSample {
  readonly name: string
  /** A realistic line (or JSON/TOML fragment on one line) holding the secret. */
  readonly text: string
  /** Substrings that must not appear in the redacted text. */
  readonly secrets: ReadonlyArray<string>
  readonly leakedBefore?: true
}

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64")

export const SECRET = {
  containerdAuth: b64("ci-robot:containerd-registry-pw-71c2"),
  dockerAuth: b64("deploy:docker-hub-pw-3e8a"),
  dockerConfigJson: b64(
    JSON.stringify({
      auths: { "https://index.docker.io/v1/": { auth: b64("deploy:dockerconfigjson-pw-55d1") } }
    })
  ),
  urlPasswordSlash: "p4ss/w0rd-with-slash-8c1f",
  urlPasswordAt: "p@ss-w0rd-with-at-2d9b",
  urlPasswordBoth: "a/b@c:d-both-4e7a",
  ghp: "ghp_R8kLw2ZfQm4Tn7Yv1Xc9Pd3Hs6Jb0Ga5Ue2K",
  githubPat: "github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567",
  slackBot: "xoxb-2048213907-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
  slackUser: "xoxp-2048213907-2048213908-2048213909-0123456789abcdef0123456789abcdef",
  dbPass: "db-pass-planted-6a1e",
  mysqlPwd: "mysql-pwd-planted-0f3c",
  passphrase: "correct horse battery staple 7b2d",
  cookieSession: "s%3AplantedSessionCookie9f8e.Zk3",
  cookieCsrf: "csrf-planted-2c4d6e8f",
  basicInMap: b64("admin:go-map-basic-pw-1b2c"),
  bearerInMap: "go-map-bearer-planted-token-3d4e",
  sigV2: "vjbyPxybdZaNmGa%2ByT272YEAiv4%3D",
  azureSig: "Zm9vYmFyYmF6cXV4cXV1eGNvcmdl%2Fplanted%3D",
  googleApiKey: "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
  awsSecret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  awsSecret2: "Gx7Qv2Lm9Rt4Zp8Ka1Nd6Wy3Hc5Bf0Ej/Su+Xo7T",
  luksKey: "luks-cmdline-planted-key-9a8b",
  akid: "AKIAIOSFODNN7EXAMPLE",
  jwt: "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJlLXBsYW50ZWQ",
  password: "hunter2-planted",
  bearer: "s3cr3t-bearer-planted-token",
  amzSignature: "f0e1d2c3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a5968778695a4b3c2d1e0f",
  amzToken: "IQoJb3JpZ2luX2VjEPlantedSessionTokenAbCdEf0123456789",
  clientKeyData: b64(
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpQIBAAKCAQEAplantedclientkey\n-----END RSA PRIVATE KEY-----\n"
  ),
  pemBody: "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCplantedPemBody",
  npmToken: "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
  npmAuth: b64("npm-user:npm-auth-planted-5f6a"),
  glpat: "glpat-Xy9Zq8Wv7Ut6Sr5Qp4On",
  vaultToken: "hvs.CAESIPlantedVaultTokenAbCdEfGhIjKlMnOp",
  stripe: "sk_live_51HPlantedStripeKey0123456789AbCd",
  slackWebhook: "PlantedWebhookSecret0123456789ab",
  azureAccountKey: "PlantedAzureStorageKey0123456789abcdefABCDEFGHIJKLMNOPQRSTUV+/==",
  kubeadmToken: "abcdef.0123456789abcdef",
  redisPassword: "redis-planted-pw-77aa",
  genericToken: "planted-generic-token-8d7c6b5a"
} as const

export const SECRET_SAMPLES: ReadonlyArray<SecretSample> = [
  // --- Leaked by the first redaction (issue #13 item 5).
  {
    name: "containerd config.toml registry auth",
    text: `  [plugins."io.containerd.grpc.v1.cri".registry.configs."registry.example.com".auth]  auth = "${SECRET.containerdAuth}"`,
    secrets: [SECRET.containerdAuth],
    leakedBefore: true
  },
  {
    name: "containerd config.toml auth on its own line",
    text: `    auth = "${SECRET.containerdAuth}"`,
    secrets: [SECRET.containerdAuth],
    leakedBefore: true
  },
  {
    name: "Docker config.json auths (one line)",
    text: `{"auths":{"https://index.docker.io/v1/":{"auth":"${SECRET.dockerAuth}","email":"ci@example.com"}}}`,
    secrets: [SECRET.dockerAuth],
    leakedBefore: true
  },
  {
    name: "Docker config.json auth (indented)",
    text: `      "auth": "${SECRET.dockerAuth}",`,
    secrets: [SECRET.dockerAuth],
    leakedBefore: true
  },
  {
    name: ".dockerconfigjson in a Secret dump",
    text: `  .dockerconfigjson: ${SECRET.dockerConfigJson}`,
    secrets: [SECRET.dockerConfigJson],
    leakedBefore: true
  },
  {
    name: "URL password containing /",
    text: `level=info msg="connecting" dsn="postgres://app:${SECRET.urlPasswordSlash}@db.internal:5432/app"`,
    secrets: [SECRET.urlPasswordSlash],
    leakedBefore: true
  },
  {
    name: "URL password containing @",
    text: `pulling from https://robot:${SECRET.urlPasswordAt}@registry.example.com/v2/app/manifests/latest`,
    // The first redaction cut at the first "@" and let "ss-w0rd-..." through.
    secrets: [SECRET.urlPasswordAt, SECRET.urlPasswordAt.slice(2)],
    leakedBefore: true
  },
  {
    name: "URL password containing / @ and :",
    text: `HTTPS_PROXY=http://proxyuser:${SECRET.urlPasswordBoth}@proxy.corp:3128`,
    secrets: [SECRET.urlPasswordBoth],
    leakedBefore: true
  },
  {
    name: "GitHub token as URL user",
    text: `git clone https://${SECRET.ghp}@github.com/example/private-repo.git`,
    secrets: [SECRET.ghp],
    leakedBefore: true
  },
  {
    name: "bare GitHub classic token",
    text: `error: GET /repos/x failed with ${SECRET.ghp} (401)`,
    secrets: [SECRET.ghp],
    leakedBefore: true
  },
  {
    name: "bare GitHub fine-grained token",
    text: `using ${SECRET.githubPat} for the release job`,
    secrets: [SECRET.githubPat],
    leakedBefore: true
  },
  {
    name: "bare Slack bot token",
    text: `notifier started with ${SECRET.slackBot}`,
    secrets: [SECRET.slackBot],
    leakedBefore: true
  },
  {
    name: "bare Slack user token",
    text: `slack: ${SECRET.slackUser} rate limited`,
    secrets: [SECRET.slackUser],
    leakedBefore: true
  },
  {
    name: "DB_PASS=",
    text: `DB_HOST=db DB_PASS=${SECRET.dbPass} DB_USER=app`,
    secrets: [SECRET.dbPass],
    leakedBefore: true
  },
  {
    name: "MYSQL_PWD=",
    text: `env: MYSQL_PWD=${SECRET.mysqlPwd}`,
    secrets: [SECRET.mysqlPwd],
    leakedBefore: true
  },
  {
    name: "passphrase: (quoted, with spaces)",
    text: `  passphrase: "${SECRET.passphrase}"`,
    secrets: [SECRET.passphrase],
    leakedBefore: true
  },
  {
    name: "Cookie: header",
    text: `> Cookie: session=${SECRET.cookieSession}; csrftoken=${SECRET.cookieCsrf}`,
    secrets: [SECRET.cookieSession, SECRET.cookieCsrf],
    leakedBefore: true
  },
  {
    name: "Set-Cookie: header",
    text: `< Set-Cookie: session=${SECRET.cookieSession}; Path=/; HttpOnly`,
    secrets: [SECRET.cookieSession],
    leakedBefore: true
  },
  {
    name: "Go http.Header as JSON",
    text: `request headers: {"Authorization":["Basic ${SECRET.basicInMap}"],"User-Agent":["Go-http-client/1.1"]}`,
    secrets: [SECRET.basicInMap],
    leakedBefore: true
  },
  {
    name: "S3 SigV2 presigned URL",
    text: `GET https://bucket.s3.amazonaws.com/key?AWSAccessKeyId=${SECRET.akid}&Expires=1700000000&Signature=${SECRET.sigV2}`,
    secrets: [SECRET.sigV2, SECRET.akid],
    leakedBefore: true
  },
  {
    name: "Azure SAS URL sig=",
    text: `PUT https://acct.blob.core.windows.net/logs/b.tgz?sv=2022-11-02&ss=b&srt=o&sp=rw&se=2030-01-01T00:00:00Z&sig=${SECRET.azureSig}`,
    secrets: [SECRET.azureSig],
    leakedBefore: true
  },
  {
    name: "Google API key",
    text: `maps client configured key ${SECRET.googleApiKey}`,
    secrets: [SECRET.googleApiKey],
    leakedBefore: true
  },
  {
    name: "bare AWS secret access key",
    text: `aws configure set default ${SECRET.awsSecret2}`,
    secrets: [SECRET.awsSecret2],
    leakedBefore: true
  },
  {
    name: "AWS credentials CSV (key id, secret)",
    text: `${SECRET.akid},${SECRET.awsSecret}`,
    secrets: [SECRET.akid, SECRET.awsSecret],
    leakedBefore: true
  },
  {
    name: "rd.luks.key= on the kernel command line",
    text: `[    0.000000] Kernel command line: BOOT_IMAGE=/vmlinuz-6.1 root=UUID=3f1e ro rd.luks.key=${SECRET.luksKey} console=ttyS0`,
    secrets: [SECRET.luksKey],
    leakedBefore: true
  },
  {
    name: "npmrc _auth",
    text: `_auth=${SECRET.npmAuth}`,
    secrets: [SECRET.npmAuth],
    leakedBefore: true
  },
  {
    name: "GitLab personal access token",
    text: `runner: using ${SECRET.glpat}`,
    secrets: [SECRET.glpat],
    leakedBefore: true
  },
  {
    name: "Azure storage connection string",
    text: `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${SECRET.azureAccountKey};EndpointSuffix=core.windows.net`,
    secrets: [SECRET.azureAccountKey],
    leakedBefore: true
  },
  {
    name: "Slack webhook URL",
    text: `alert sink https://hooks.slack.com/services/T0123ABCD/B0456EFGH/${SECRET.slackWebhook}`,
    secrets: [SECRET.slackWebhook],
    leakedBefore: true
  },
  {
    name: "Stripe secret key",
    text: `billing: key ${SECRET.stripe} loaded`,
    secrets: [SECRET.stripe],
    leakedBefore: true
  },
  {
    name: "redis URL with an empty user",
    text: `cache: redis://:${SECRET.redisPassword}@redis.cache.svc:6379/0`,
    secrets: [SECRET.redisPassword],
    leakedBefore: true
  },
  {
    name: "base64 PEM key under another name",
    text: `  tls.key: ${SECRET.clientKeyData}`,
    secrets: [SECRET.clientKeyData],
    leakedBefore: true
  },
  // --- Caught before too (kept so that they stay caught).
  {
    name: "Go http.Header printed with %v",
    text: `headers=map[Authorization:[Bearer ${SECRET.bearerInMap}] Content-Type:[application/json]]`,
    secrets: [SECRET.bearerInMap]
  },
  {
    name: "Vault token header",
    text: `X-Vault-Token: ${SECRET.vaultToken}`,
    secrets: [SECRET.vaultToken]
  },
  { name: "Authorization: Bearer", text: `Authorization: Bearer ${SECRET.bearer}`, secrets: [SECRET.bearer] },
  {
    name: "curl -H Authorization",
    text: `curl -H "Authorization: Bearer ${SECRET.bearer}" https://x`,
    secrets: [SECRET.bearer]
  },
  { name: "token: JWT", text: `token: ${SECRET.jwt}`, secrets: [SECRET.jwt] },
  { name: "JWT in prose", text: `projected token ${SECRET.jwt} in a log`, secrets: [SECRET.jwt] },
  { name: "AWS_ACCESS_KEY_ID=", text: `AWS_ACCESS_KEY_ID=${SECRET.akid}`, secrets: [SECRET.akid] },
  {
    name: "AWS_SECRET_ACCESS_KEY=",
    text: `AWS_SECRET_ACCESS_KEY=${SECRET.awsSecret}`,
    secrets: [SECRET.awsSecret]
  },
  {
    name: "aws_secret_access_key =",
    text: `aws_secret_access_key = ${SECRET.awsSecret}`,
    secrets: [SECRET.awsSecret]
  },
  { name: "DB_PASSWORD=", text: `DB_PASSWORD=${SECRET.password}`, secrets: [SECRET.password] },
  { name: "quoted secret env", text: `MY_APP_SECRET='${SECRET.password}'`, secrets: [SECRET.password] },
  {
    name: "JSON password",
    text: `{"password": "${SECRET.password}", "user": "x"}`,
    secrets: [SECRET.password]
  },
  { name: "--db-password value", text: `--db-password ${SECRET.password}`, secrets: [SECRET.password] },
  { name: "--api-token=value", text: `--api-token=${SECRET.password}`, secrets: [SECRET.password] },
  {
    name: "X-Amz-Signature in a presigned URL",
    text: `GET https://b.s3.amazonaws.com/k?X-Amz-Security-Token=${SECRET.amzToken}&X-Amz-Signature=${SECRET.amzSignature}&x=1`,
    secrets: [SECRET.amzSignature, SECRET.amzToken]
  },
  {
    name: "proxy URL user:password",
    text: `proxy=http://user:${SECRET.password}@proxy:3128`,
    secrets: [SECRET.password]
  },
  {
    name: "kubeconfig client-key-data",
    text: `    client-key-data: ${SECRET.clientKeyData}`,
    secrets: [SECRET.clientKeyData]
  },
  {
    name: "PEM private key inside a JSON string",
    text: `{"key":"-----BEGIN PRIVATE KEY-----\\n${SECRET.pemBody}\\n-----END PRIVATE KEY-----\\n"}`,
    secrets: [SECRET.pemBody]
  },
  {
    name: "kubeadm join token flag",
    text: `kubeadm join 10.0.0.1:6443 --token ${SECRET.kubeadmToken} --discovery-token-ca-cert-hash sha256:abc`,
    secrets: [SECRET.kubeadmToken]
  },
  {
    name: "npm token",
    text: `//registry.npmjs.org/:_authToken=${SECRET.npmToken}`,
    secrets: [SECRET.npmToken]
  },
  {
    name: "generic token: in YAML",
    text: `    token: ${SECRET.genericToken}`,
    secrets: [SECRET.genericToken]
  }
]

/** Ordinary lines from what a bundle collects; redaction must leave every one of them exactly as it is. */
export const BENIGN_LINES: ReadonlyArray<string> = [
  '2026-01-01T00:00:00.000000+00:00 ip-10-0-1-23 kubelet[1234]: I0101 00:00:00.000000 1234 kubelet.go:2468] "SyncLoop UPDATE" source="api" pods=["kube-system/aws-node-abcde"]',
  '2026-01-01T00:00:01.000000+00:00 ip-10-0-1-23 kubelet[1234]: I0101 00:00:01.000000 1234 reconciler_common.go:245] "operationExecutor.MountVolume started for volume \\"kube-api-access-7xk2p\\" (UniqueName: \\"kubernetes.io/projected/6f1c2b3a-0d4e-4f5a-9b8c-7d6e5f4a3b2c-kube-api-access-7xk2p\\")"',
  '2026-01-01T00:00:02.000000+00:00 ip-10-0-1-23 kubelet[1234]: E0101 00:00:02.000000 1234 kuberuntime_manager.go:1256] "Failed to get token for service account" err="serviceaccounts \\"default\\" is forbidden"',
  '2026-01-01T00:00:03.000000+00:00 ip-10-0-1-23 containerd[812]: time="2026-01-01T00:00:03.000000000Z" level=info msg="PullImage \\"602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5\\" returns image reference \\"sha256:6996f8da07bd405c6f82a549ef041deda57d1d658ec20a78584f9f436c9a3bb7\\""',
  '2026-01-01T00:00:04.000000+00:00 ip-10-0-1-23 containerd[812]: time="2026-01-01T00:00:04Z" level=info msg="StartContainer for \\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\\" returns successfully"',
  "2026-01-01T00:00:05+00:00 ip-10-0-1-23 systemd-logind[601]: New session 3 of user ec2-user.",
  "2026-01-01T00:00:06+00:00 ip-10-0-1-23 sshd[2201]: Accepted publickey for ec2-user from 10.0.0.5 port 50122 ssh2: RSA SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
  "2026-01-01T00:00:07+00:00 ip-10-0-1-23 sshd[2202]: password authentication ok for user admin",
  "2026-01-01T00:00:08+00:00 ip-10-0-1-23 systemd[1]: kubelet.service: Main process exited, code=exited, status=1/FAILURE",
  "2026-01-01T00:00:09+00:00 ip-10-0-1-23 systemd[1]: kubelet.service: Sent signal SIGTERM to main process 1234 (kubelet) on client request.",
  "[    0.000000] Command line: BOOT_IMAGE=/boot/vmlinuz-6.1.61-85.141.amzn2023.x86_64 root=UUID=a1b2c3d4-e5f6-4a5b-9c8d-7e6f5a4b3c2d ro console=tty0 console=ttyS0,115200n8 nvme_core.io_timeout=4294967295 rd.emergency=poweroff rd.shell=0 selinux=1 security=selinux quiet",
  '[ 1234.567890] audit: type=1701 audit(1700000000.123:456): auid=4294967295 uid=0 gid=0 ses=4294967295 subj=system_u:system_r:kernel_t:s0 pid=2345 comm="app" exe="/usr/bin/app" sig=11 res=1',
  "[ 2345.678901] TCP: request_sock_TCP: Possible SYN flooding on port 443. Sending cookies.  Check SNMP counters.",
  "[ 3456.789012] NVRM: Xid (PCI:0000:10:1c): 79, pid=1234, name=python, GPU has fallen off the bus.",
  "[ 4567.890123] nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  535.129.03",
  "[ 5678.901234] EXT4-fs (nvme1n1): mounted filesystem 0f1e2d3c-4b5a-6978-8091-a2b3c4d5e6f7 r/w with ordered data mode. Quota mode: none.",
  '-A KUBE-SERVICES -d 172.20.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU',
  '-A KUBE-SEP-6E7XQMQ4RAYOWTTM -s 10.0.1.5/32 -m comment --comment "default/kubernetes:https" -j KUBE-MARK-MASQ',
  "-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0 --random-fully",
  "default via 10.0.0.1 dev ens5 proto dhcp src 10.0.1.23 metric 512",
  "2: ens5: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9001 qdisc mq state UP group default qlen 1000",
  "    link/ether 0a:1b:2c:3d:4e:5f brd ff:ff:ff:ff:ff:ff",
  "    inet6 fe80::81b:2cff:fe3d:4e5f/64 scope link",
  "overlay /run/containerd/io.containerd.runtime.v2.task/k8s.io/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/rootfs overlay rw,relatime,lowerdir=/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/12/fs 0 0",
  "tmpfs /var/lib/kubelet/pods/6f1c2b3a-0d4e-4f5a-9b8c-7d6e5f4a3b2c/volumes/kubernetes.io~projected/kube-api-access-7xk2p tmpfs rw,relatime,size=3854436k 0 0",
  "/dev/nvme0n1p1 xfs 83873772 4567890 79305882 6% /",
  'NAME="Amazon Linux"',
  'VERSION_ID="2023"',
  "MemTotal:       16384000 kB",
  "nf_conntrack_count 1234",
  "    GPU UUID                              : GPU-9b3f0c2e-5a7d-4e1b-8c6f-2d4a1e3b5c7f",
  "    Product Name                          : NVIDIA H100 80GB HBM3",
  "commit 0f1e2d3c4b5a69788091a2b3c4d5e6f708192a3b (HEAD -> main)",
  "ssh://git@github.com/example/repo.git cloned into /tmp/repo",
  "contact ops@example.com or see https://example.com/runbook?section=disk&lang=en",
  "token bucket refilled: 25 events, next refill in 300s",
  "secret volume mounted for pod default/web-0",
  "authorization mode: Node,RBAC",
  "GET /api/v1/nodes/ip-10-0-1-23?timeout=10s 200 OK in 3 milliseconds",
  "build id: go1.22.1 X:loopvar -buildmode=exe -compiler=gc CGO_ENABLED=1 GOARCH=amd64",
  "/usr/lib/modules/6.1.61-85.141.amzn2023.x86_64/kernel/drivers/net/ena/ena.ko.xz",
  "containerd-shim-runc-v2 -namespace k8s.io -id 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef -address /run/containerd/containerd.sock",
  '{"level":"info","ts":"2026-01-01T00:00:00.000Z","caller":"ipamd/ipamd.go:512","msg":"Reconcile existing ENI eni-0a1b2c3d4e5f60718 IP pool"}',
  "Jan 01 00:00:00 ip-10-0-1-23 dhclient[900]: bound to 10.0.1.23 -- renewal in 1683 seconds.",
  // The kubelet logs every flag at start; the secret-named ones hold file names and switches, not secrets.
  'I0101 00:00:00.000000    1234 flags.go:64] FLAG: --tls-private-key-file="/var/lib/kubelet/pki/kubelet.key"',
  'I0101 00:00:00.000000    1234 flags.go:64] FLAG: --authentication-token-webhook="true"',
  'I0101 00:00:00.000000    1234 flags.go:64] FLAG: --authorization-mode="Webhook"',
  'I0101 00:00:00.000000    1234 flags.go:64] FLAG: --bootstrap-kubeconfig="/var/lib/kubelet/bootstrap-kubeconfig"',
  "PASSWORD_FILE=/run/secrets/db-password"
]
