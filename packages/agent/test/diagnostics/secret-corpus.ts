// Secret shapes as they appear in what a log bundle collects (containerd and Docker config, kubelet and
// containerd journals, dmesg and the kernel command line, CNI config, env dumps, agent state), each with the
// exact substrings that must not survive redaction. `leakedBefore` marks the shapes the first redaction let
// through (security issue #13, item 5): each of those is a test that fails on that code. `issue24` marks the
// shapes issue #24 (part 3) reported leaking whole or by their tail, and the other members of each class the
// fix covers (see the class comments below and docs/diagnostics.md).
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
  /** Leaked (whole or its tail) before the fix for issue #24 part 3, or a member of a class that fix added. */
  readonly issue24?: true
  /** Caught only as a line of its own (`  password SECRET` in a .netrc), not inside other text. */
  readonly lineOnly?: true
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
  genericToken: "planted-generic-token-8d7c6b5a",
  // Issue #24, part 3.
  odbcPwd: "odbc-planted-Pw0rd-1f2e",
  dbPassNoSep: "dbpass-planted-31ab",
  passLower: "lower-pass-planted-2c4d",
  mysqlAttached: "MysqlPlanted42xy",
  sshpass: "sshpass-planted 5f6e",
  dockerLogin: "dockerlogin-planted-0c1d",
  curlUserPw: "curl-planted-pw-8e9f",
  netrc: "netrc-planted-44ee",
  requirepass: "redis-requirepass-planted-5b6c",
  awsSessionToken:
    "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLXdlc3QtMiJHMEUCIQDPlantedSessionTokenBody0123456789AbCdEfGhIjKlMnOpQrStUvWxYz+/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789PlantedTail==",
  legacyOpenAi: "sk-AbCdEfGhIjKlMnOpT3BlbkFJqRsTuVwXyZ0123456789abcd",
  puttyPrivate: "AAAAIPlantedPuttyPrivateKeyLineAbCdEf0123456789",
  pemLowerBody: "MIIEowIBAAKCAQEAplantedLowercasePemBody",
  telegram: "123456789:AAHplantedTelegram0123456789abcdEFG",
  dashPassword: "-dashplanted-pw-7a8b",
  semicolonTail: "Planted1S3cr3t",
  escapedQuoteTail: "Planted6Tail",
  nameValue: "name-value-planted-9c0d"
} as const

/**
 * Kubernetes env as `kubectl get pod -o yaml` and `-o json` print it: each name/value pair on two lines. The
 * secret-named ones' values (`k8sEnvYaml`, `k8sEnvJson`) must go, the others' (`debug`, `info`) stay.
 */
export const K8S_ENV_YAML = [
  "    env:",
  "    - name: LOG_LEVEL",
  "      value: debug",
  "    - name: DB_PASSWORD",
  "      value: k8s-yaml-planted-2d3e",
  "    - name: API_TOKEN",
  "      valueFrom:",
  "        secretKeyRef:",
  "          key: token",
  "          name: api",
  "    - name: MODE",
  "      value: fast"
]
export const K8S_ENV_JSON = [
  '        "env": [',
  "            {",
  '                "name": "LOG_LEVEL",',
  '                "value": "info"',
  "            },",
  "            {",
  '                "name": "SMTP_PASSWORD",',
  '                "value": "k8s-json-planted;3e4f"',
  "            }",
  "        ],"
]

/** A PuTTY key file (format 3), as `cat` prints it; the private lines are SECRET.puttyPrivate and more. */
export const PUTTY_KEY_FILE = [
  "PuTTY-User-Key-File-3: ssh-ed25519",
  "Encryption: none",
  "Comment: ed25519-key-20260101",
  "Public-Lines: 2",
  "AAAAC3NzaC1lZDI1NTE5AAAAIPublicPartIsNotSecretAbCdEfGhIjKlMnOpQrSt",
  "UvWxYz0123456789",
  "Private-Lines: 2",
  SECRET.puttyPrivate,
  "SecondPrivateLinePlanted0123456789abcdef",
  "Private-MAC: 5f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"
]

/** Issue #24 part 3: every shape it listed, and more of each class the fix is written for. */
const ISSUE_24: ReadonlyArray<Omit<SecretSample, "issue24">> = [
  // (a) A secret-named key: the value ends where its syntax ends.
  {
    name: "ODBC connection string Pwd=",
    text: `conn: Driver={ODBC Driver 18 for SQL Server};Server=tcp:db.internal,1433;Database=app;Uid=sa;Pwd=${SECRET.odbcPwd};Encrypt=yes;`,
    secrets: [SECRET.odbcPwd]
  },
  {
    name: "ODBC Pwd={braced;value}}with an escaped brace}",
    text: "Server=db;UID=sa;PWD={odbc;braced}}planted-7e1f};Encrypt=yes",
    secrets: ["odbc;braced", "planted-7e1f"]
  },
  {
    name: "DBPASS= (no separator before PASS)",
    text: `DBPASS=${SECRET.dbPassNoSep} DBHOST=db`,
    secrets: [SECRET.dbPassNoSep]
  },
  {
    name: "pass= (lower case, bare)",
    text: `auth ok user=app pass=${SECRET.passLower}`,
    secrets: [SECRET.passLower]
  },
  { name: "PASS= (env dump)", text: `PASS=${SECRET.passLower}`, secrets: [SECRET.passLower] },
  {
    name: "password=abc;tail (a ; inside the value)",
    text: `db: password=abc;${SECRET.semicolonTail} timeout=5`,
    secrets: [SECRET.semicolonTail]
  },
  {
    name: "connection string password with a ; and the next pair after it",
    text: `Host=db;Username=app;Password=semi;Planted8Tail;Database=app`,
    secrets: ["Planted8Tail"]
  },
  { name: "value with a comma", text: `DB_PASSWORD=comma,Planted2Tail next=1`, secrets: ["Planted2Tail"] },
  { name: "value with an ampersand", text: `token=amp&Planted3Tail`, secrets: ["Planted3Tail"] },
  { name: "value with a closing brace", text: `secret=brace}Planted4Tail`, secrets: ["Planted4Tail"] },
  { name: "value with a closing bracket", text: `api_key: bracket]Planted5Tail`, secrets: ["Planted5Tail"] },
  {
    name: 'JSON value with an escaped \\"',
    text: `{"user":"app","password":"esc\\"${SECRET.escapedQuoteTail}","port":5432}`,
    secrets: [SECRET.escapedQuoteTail]
  },
  {
    name: "JSON inside a journal JSON string (escaped quotes, an escaped quote in the value)",
    text: JSON.stringify({
      MESSAGE: `config ${JSON.stringify({ db_password: 'lvl1"Planted7Tail;x' })} loaded`
    }),
    secrets: ["lvl1", "Planted7Tail"]
  },
  {
    name: "single-quoted value with an escaped quote",
    text: `MY_SECRET='sq\\'Planted9Tail' next`,
    secrets: ["Planted9Tail"]
  },
  {
    name: "XML element",
    text: `<dataSource><password>xml-planted-6f7a</password></dataSource>`,
    secrets: ["xml-planted-6f7a"]
  },
  {
    name: "API key with a space in the name",
    text: `Using API key: apikey-planted-1b2c`,
    secrets: ["apikey-planted-1b2c"]
  },
  // (b) A name/value pair whose name is secret.
  {
    name: '{"key":"DB_PASSWORD","value":"…"}',
    text: `{"key":"DB_PASSWORD","value":"${SECRET.nameValue}"}`,
    secrets: [SECRET.nameValue]
  },
  {
    name: "Kubernetes env in a pod's JSON",
    text: JSON.stringify({
      env: [
        { name: "LOG_LEVEL", value: "info" },
        { name: "DB_PASSWORD", value: "k8s-env-planted-1a2b" }
      ]
    }),
    secrets: ["k8s-env-planted-1a2b"]
  },
  {
    name: "ECS environment, value before name",
    text: `"environment":[{"value":"ecs-planted-2b3c","name":"API_TOKEN"}]`,
    secrets: ["ecs-planted-2b3c"]
  },
  {
    name: "Go's %+v of a Kubernetes EnvVar",
    text: `env: [{Name:REDIS_PASSWORD,Value:go-env-planted-3c4d,ValueFrom:nil}]`,
    secrets: ["go-env-planted-3c4d"]
  },
  {
    name: ".NET appSettings <add key value>",
    text: `<add key="DbPassword" value="dotnet-planted-4d5e" />`,
    secrets: ["dotnet-planted-4d5e"]
  },
  {
    name: "CloudFormation parameter",
    text: `{"ParameterKey":"MasterUserPassword","ParameterValue":"cfn-planted-5e6f"}`,
    secrets: ["cfn-planted-5e6f"]
  },
  {
    name: "name/value pair in a journal JSON string",
    text: JSON.stringify({
      MESSAGE: JSON.stringify({ name: "SMTP_PASSWORD", value: 'esc"smtp-planted-6f7a' })
    }),
    secrets: ["smtp-planted-6f7a"]
  },
  // (c) The password flag of a command.
  {
    name: "mysql -pSECRET",
    text: `+ mysql -h db.internal -u root -p${SECRET.mysqlAttached} app -e "select 1"`,
    secrets: [SECRET.mysqlAttached]
  },
  {
    name: "sshpass -p 'SECRET'",
    text: `sshpass -p '${SECRET.sshpass}' ssh -o StrictHostKeyChecking=no ec2-user@10.0.1.5`,
    secrets: [SECRET.sshpass, "planted 5f6e"]
  },
  {
    name: "docker login -p SECRET",
    text: `docker login -u AWS -p ${SECRET.dockerLogin} 602401143452.dkr.ecr.us-west-2.amazonaws.com`,
    secrets: [SECRET.dockerLogin]
  },
  {
    name: "nerdctl login --password SECRET",
    text: `nerdctl login --username robot --password nerdctl-planted-0d1e registry.example.com`,
    secrets: ["nerdctl-planted-0d1e"]
  },
  {
    name: "curl -u user:pw",
    text: `curl -sS -u admin:${SECRET.curlUserPw} https://grafana.internal/api/health`,
    secrets: [SECRET.curlUserPw]
  },
  {
    name: "curl --user user:pw (quoted, with a space)",
    text: `curl -X POST "https://x.internal/a?b=1&c=2" --user "svc:curl-user planted 3a4b" -d @body.json`,
    secrets: ["curl-user planted 3a4b", "planted 3a4b"]
  },
  {
    name: "curl --proxy-user",
    text: `curl --proxy http://proxy.corp:3128 --proxy-user=bob:proxyuser-planted-4b5c https://example.com`,
    secrets: ["proxyuser-planted-4b5c"]
  },
  {
    name: "--password -SECRET (a value that starts with a dash)",
    text: `mysqladmin --user=root --password ${SECRET.dashPassword} status`,
    secrets: [SECRET.dashPassword, SECRET.dashPassword.slice(1)]
  },
  {
    name: "mongosh -p",
    text: `mongosh "mongodb://db.internal:27017/admin" -u admin -p mongo-planted-7a8b --quiet`,
    secrets: ["mongo-planted-7a8b"]
  },
  {
    name: "redis-cli -a",
    text: `redis-cli -h cache.internal -p 6379 -a rediscli-planted-8b9c --no-auth-warning ping`,
    secrets: ["rediscli-planted-8b9c"]
  },
  {
    name: "ldapsearch -w",
    text: `ldapsearch -x -H ldap://ldap.corp -D cn=admin,dc=corp -w ldap-planted-9c0d -b dc=corp`,
    secrets: ["ldap-planted-9c0d"]
  },
  {
    name: "sqlcmd -P",
    text: `/opt/mssql-tools/bin/sqlcmd -S db -U sa -P sqlcmd-planted-0d1e -Q "select 1"`,
    secrets: ["sqlcmd-planted-0d1e"]
  },
  {
    name: "zip -P",
    text: `zip -r -P zip-planted-1e2f backup.zip /var/lib/app`,
    secrets: ["zip-planted-1e2f"]
  },
  { name: "7z -pSECRET", text: `7z a -p7zplanted2f3a -mhe=on backup.7z data`, secrets: ["7zplanted2f3a"] },
  {
    name: "openssl -passout pass:",
    text: `openssl pkcs12 -export -in c.pem -inkey k.pem -passout pass:openssl-planted-3a4b -out c.p12`,
    secrets: ["openssl-planted-3a4b"]
  },
  {
    name: "audit EXECVE record of mysql -p",
    text: `type=EXECVE msg=audit(1700000000.123:456): argc=4 a0="mysql" a1="-uroot" a2="-pauditPlanted4b5c" a3="app"`,
    secrets: ["auditPlanted4b5c"]
  },
  {
    name: "smbclient -U user%password",
    text: `smbclient //fs.corp/share -U 'CORP\\svc%smb-planted-5c6d' -c ls`,
    secrets: ["smb-planted-5c6d"]
  },
  {
    name: "useradd -p (a crypt hash)",
    text: `useradd -m -p '$6$rounds=5000$saltsaltsalt$PlantedCryptHash0123456789abcdefABCDEF' bob`,
    secrets: ["PlantedCryptHash0123456789abcdefABCDEF"]
  },
  // (d) Token shapes.
  {
    name: "bare AWS session token",
    text: `credentials refreshed: ${SECRET.awsSessionToken} expires 2026-01-01T01:00:00Z`,
    secrets: [SECRET.awsSessionToken, "PlantedSessionTokenBody", "PlantedTail"]
  },
  {
    name: "AWS session token in credential_process JSON",
    text: `{"Version":1,"AccessKeyId":"${SECRET.akid}","SessionToken":"FwoGZXIvYXdzEPlantedOlderSessionToken0123456789AbCdEf"}`,
    secrets: [SECRET.akid, "PlantedOlderSessionToken"]
  },
  { name: "legacy sk- key", text: `openai: using ${SECRET.legacyOpenAi}`, secrets: [SECRET.legacyOpenAi] },
  {
    name: "PuTTY private key in a JSON string",
    text: JSON.stringify({ ppk: `${PUTTY_KEY_FILE.join("\n")}\n` }),
    secrets: [SECRET.puttyPrivate, "SecondPrivateLinePlanted"]
  },
  {
    name: "lowercase PEM markers in a JSON string",
    text: `{"key":"-----begin rsa private key-----\\n${SECRET.pemLowerBody}\\n-----end rsa private key-----\\n"}`,
    secrets: [SECRET.pemLowerBody]
  },
  {
    name: "Telegram bot token in a Bot API URL",
    text: `POST https://api.telegram.org/bot${SECRET.telegram}/sendMessage 200`,
    secrets: [SECRET.telegram, SECRET.telegram.slice(10)]
  },
  {
    name: "bare Telegram bot token",
    text: `alerting via telegram 987654321:AAFplantedTelegramBare0123456789xyZ`,
    secrets: ["AAFplantedTelegramBare0123456789xyZ"]
  },
  {
    name: "crypt(3) hash in cloud-init",
    text: `    passwd: $6$rounds=4096$Salt0123$PlantedCloudInitHash0123456789abcdefABCDEFxyz`,
    secrets: ["PlantedCloudInitHash0123456789abcdefABCDEFxyz"]
  },
  // (e) A keyword and its value separated by blanks.
  {
    name: ".netrc machine line",
    text: `machine github.com login ci-bot password ${SECRET.netrc}`,
    secrets: [SECRET.netrc]
  },
  {
    name: ".netrc password on its own line",
    text: `    password netrc-line-planted-91ab`,
    secrets: ["netrc-line-planted-91ab"],
    lineOnly: true
  },
  {
    name: ".netrc default entry",
    text: `default login anonymous password netrc-default-planted-8f9a`,
    secrets: ["netrc-default-planted-8f9a"]
  },
  {
    name: "redis.conf requirepass",
    text: `requirepass ${SECRET.requirepass}`,
    secrets: [SECRET.requirepass]
  },
  {
    name: "redis.conf masterauth (quoted)",
    text: `masterauth "masterauth-planted 6c7d"`,
    secrets: ["masterauth-planted 6c7d", "6c7d"]
  },
  {
    name: "redis MONITOR: CONFIG SET requirepass",
    text: `1700000000.123456 [0 10.0.1.5:51234] "config" "set" "requirepass" "redis-config-planted-6c7d"`,
    secrets: ["redis-config-planted-6c7d"]
  },
  {
    name: "aws configure set aws_secret_access_key",
    text: `+ aws configure set aws_secret_access_key cfgset-planted-6d7e --profile ci`,
    secrets: ["cfgset-planted-6d7e"]
  }
]

export const ISSUE_24_SAMPLES: ReadonlyArray<SecretSample> = ISSUE_24.map((s) => ({ ...s, issue24: true }))

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
  },
  ...ISSUE_24_SAMPLES
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
  "PASSWORD_FILE=/run/secrets/db-password",
  // Look-alikes of the classes added for issue #24: -p is a port or a protocol outside the password commands,
  // passwd's messages and nsswitch.conf, sudo's PWD, words that end in "pass", non-secret name/value pairs.
  "docker run -d --name web -p 8080:80 nginx:1.25",
  "ssh -p 2222 -i /home/ec2-user/.ssh/id_ed25519 ec2-user@10.0.1.5",
  "nc -l -p 8080",
  "-A INPUT -p tcp -m tcp --dport 3306 -j ACCEPT",
  "password policy updated",
  "passwd: all authentication tokens updated successfully.",
  "passwd:     files systemd",
  "Dec  1 00:00:00 ip-10-0-1-23 sudo: ec2-user : TTY=pts/0 ; PWD=/home/ec2-user ; USER=root ; COMMAND=/usr/bin/systemctl restart kubelet",
  "OLDPWD=/root",
  "bypass=1 compass=north",
  "mysqld: ready for connections. Version: '8.0.36'  socket: '/var/run/mysqld/mysqld.sock'  port: 3306",
  "curl -sS -o /dev/null -w %{http_code} https://example.com/healthz",
  "curl -u admin https://grafana.internal/api/health",
  "docker login registry.example.com",
  "aws ecr get-login-password --region us-west-2 | docker login --username AWS --password-stdin 602401143452.dkr.ecr.us-west-2.amazonaws.com",
  "Login Succeeded",
  '{"name":"LOG_LEVEL","value":"debug"}',
  "zip -r logs.zip /var/log/nodemend",
  "redis-cli -h cache.internal -p 6379 ping",
  "openssl x509 -in /etc/kubernetes/pki/ca.crt -noout -subject",
  "Authentication token manipulation error"
]
