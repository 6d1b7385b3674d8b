/**
 * Secrets never leave the node: every collected text goes through `redactionTransform` before it reaches the
 * bundle (and `nodemend-agent redact` runs the same transform on stdin). Line-oriented, so memory stays bounded
 * by the longest line, and a line longer than `maxLineBytes` is scanned and flushed in pieces without losing a
 * secret that straddles a piece boundary (see LineScan).
 *
 * Every rule is a pattern whose quantifiers are all bounded: one match attempt never looks further than
 * MAX_ATTEMPT_SPAN characters from where it starts. That is what makes the piecewise scan exact: output is
 * held back by HOLDBACK_CHARS (> MAX_ATTEMPT_SPAN), so every attempt that decides a character's fate has
 * seen all the text it will ever look at. Rules mark the characters to hide (a mask) instead of rewriting
 * the text, so the rules are independent and their masks simply add up; each maximal masked run becomes one
 * `[REDACTED]`.
 *
 * The rules are classes of syntax, not lists of reported strings (docs/diagnostics.md lists them): a value
 * whose name says it is secret (`k=v`, `k: v`, `"k":"v"`, `<k>v</k>`, `--k v`), a name/value pair whose name
 * says so (`{"name":"DB_PASSWORD","value":"…"}`, also pretty-printed on two lines), the password flag of a
 * command whose short flag means password, a keyword and its value in blank-separated config (`.netrc`,
 * redis), and token shapes. A value ends where its syntax ends: a quoted one at its closing quote (escapes
 * honoured), a bare one at a blank, or at a `;` `&` `,` only where another `key=` pair follows; so
 * `password=abc;S3cr3t` is hidden whole.
 */
import { Transform, type TransformCallback } from "node:stream"

export const REDACTED = "[REDACTED]"

/**
 * Longest secret value a rule matches in one piece. A value cut by this bound is masked on to its natural
 * end (the rule's `overflowStop`), however long.
 */
export const MAX_SECRET_CHARS = 16_384
/**
 * Upper bound on how far one attempt of any rule looks from its start (a unit test checks every pattern): a
 * quoted value of MAX_SECRET_CHARS units, each an escape pair at most, plus a command line before a flag.
 */
export const MAX_ATTEMPT_SPAN = 2 * MAX_SECRET_CHARS + 4_096
/** Output held back while a line is scanned in pieces; must exceed MAX_ATTEMPT_SPAN. */
export const HOLDBACK_CHARS = 65_536
/** A long line is scanned once this much unscanned text has piled up past the holdback (bounds rescans). */
const SCAN_STEP_CHARS = 196_608
/** Characters kept before a scan position for lookbehinds (`(?<!...)` and `\b` look one back). */
export const LOOKBEHIND_CHARS = 64

const V = MAX_SECRET_CHARS
/** Bound of the value forms whose unit is up to 4 characters (escaped quotes inside an escaped string). */
const V_HALF = MAX_SECRET_CHARS / 2

interface Rule {
  readonly name: string
  /** Flags `g` and `d` (indices) always; every quantifier bounded. */
  readonly pattern: RegExp
  /**
   * Found in every match (a global RegExp, or a test from a position): where it does not occur, the rule is
   * not tried (fast path). A property test checks that skipping on it never changes the output.
   */
  readonly trigger: RegExp | ((text: string, from: number) => boolean)
  /** Named groups holding the secret; the first that took part wins. Absent: the whole match. */
  readonly secret?: ReadonlyArray<string>
  /**
   * A last word on a candidate (checks a regex cannot say cheaply). `at`: where the match starts in the line
   * (0: at the line's start), which a regex over a piece of a long line cannot tell.
   */
  readonly accept?: (candidate: string, match: RegExpExecArray, at: number) => boolean
  /**
   * When the secret reaches MAX_SECRET_CHARS, the mask runs on until this matches (or the line ends). Not for
   * the groups in `closed`, which end at their closing delimiter whatever their length.
   */
  readonly overflowStop?: RegExp
  /** Secret groups that a closing delimiter ends (quoted values): never overflow. */
  readonly closed?: ReadonlyArray<string>
  /** The mask runs from the end of the match until this matches, across lines (PEM and PuTTY key bodies). */
  readonly until?: RegExp
  /** Longest text `until` can match (re-searched after each piece, so a marker split across pieces is found). */
  readonly untilMax?: number
  /**
   * The scan goes on just after where the match starts, not where its secret starts: a match that runs from a
   * command to its flag must not hide a later command whose name comes before that flag's value.
   */
  readonly resumeAtStart?: true
  /** A match hides nothing: it makes the next line one that `afterSecretName` rules run on. */
  readonly namesNextValue?: true
  /** Runs only on the line right after a `namesNextValue` match (and then whatever its trigger says). */
  readonly afterSecretName?: true
}

/** Characters of a key, env var or flag name. */
const NC = "[A-Za-z0-9_.-]"
/** Names that are secret wherever they appear inside a name (PGPASSWORD, aws_secret_access_key...). */
const SECRET_WORD =
  "PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API[_ -]?KEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|CLIENT[_-]?KEY[_-]?DATA|CREDENTIAL"
/**
 * Names that are secret when they end a name (DB_PASS, DBPASS, MYSQL_PWD, _auth, rd.luks.key, AccountKey...);
 * not BYPASS, COMPASS, SURPASS.
 */
const SECRET_SUFFIX =
  "(?<!BY|COM|SUR)PASS|PWD|[_.-](?:PW|AUTH)|ACCOUNT[_-]?KEY|AUTH[_-]?KEY|ENCRYPTION[_-]?KEY|SIGNING[_-]?KEY|MASTER[_-]?KEY|LUKS[_.-]?KEY|CRYPTKEY|SESSION[_-]?(?:ID|KEY)"
/** Whole names that are secret (containerd's and Docker's registry `auth`, cookies, `pw`, redis's `masterauth`). */
const SECRET_EXACT = "AUTH|SET-COOKIE|COOKIE|PW|MASTERAUTH"
/** A secret name always contains one of these (the rules' trigger). */
const NAME_WORDS = "pass|pw|secret|token|key|credential|auth|cookie|session"
const SECRET_NAME = `(?:${NC}{0,128}(?:${SECRET_WORD})${NC}{0,128}|${NC}{0,128}(?:${SECRET_SUFFIX})|(?:${SECRET_EXACT}))`

/** HTTP headers whose value is a credential. */
const SECRET_HEADER =
  "Authorization|Proxy-Authorization|Cookie|Set-Cookie|X-Auth-Token|X-Api-Key|X-Amz-Security-Token|X-Vault-Token|Private-Token|X-Registry-Auth|X-Goog-Api-Key"
const AUTH_SCHEME = "Bearer|Basic|Digest|Negotiate|NTLM|Token|AWS4-HMAC-SHA256|AWS|Splunk|SharedKey"

/** Query parameters (and connection-string keys) that carry a signature or a key wherever they appear. */
const SIGNED_PARAM =
  "X-Amz-Signature|X-Amz-Security-Token|X-Amz-Credential|X-Goog-Signature|X-Goog-Credential|SharedAccessSignature|SharedAccessKey|AccountKey"
/** Query parameters that are secret after `?`, `&` or `;` (SigV2 Signature, Azure SAS sig, OAuth...). */
const QUERY_PARAM =
  "Signature|sig|access_token|id_token|refresh_token|client_secret|code|api_key|apikey|key|token|password|auth"

/** A quote around a key, possibly escaped (JSON inside a JSON string: `{\"password\":\"…\"}`). */
const QUOTE = String.raw`\\{0,3}["']`

/**
 * Where a bare value's `;` `&` or `,` ends it: another pair follows (`k=v;k2=v2`, `a=1&b=2`, `x, "k": …`).
 * Otherwise the character belongs to the value (`password=abc;S3cr3t`).
 */
const NEXT_PAIR = String.raw`(?:["'][^"'\n]{1,64}["']\s{0,4}[:=]|[A-Za-z_][A-Za-z0-9_.-]{0,63}=)`

/**
 * A complete value, by its syntax: "double-quoted" or 'single-quoted' up to the matching unescaped quote,
 * \"escaped-quoted\" inside a JSON string up to the matching escaped quote, {braced} as ODBC quotes (`}}` is a
 * literal brace), or bare up to a blank (or a `;` `&` `,` that starts another pair). Groups: VALUE_GROUPS.
 */
const VALUE = [
  String.raw`"(?<dq>(?:\\.|[^"\\\n]){0,${V}})"`,
  String.raw`'(?<sq>(?:\\.|[^'\\\n]){0,${V}})'`,
  String.raw`\\"(?<edq>(?:\\\\(?:\\.|[^\\\n])|\\[^\\"\n]|[^\\"\n]){0,${V_HALF}})\\"`,
  String.raw`\{(?<bq>(?:\}\}|[^}\n]){0,${V_HALF}})\}`,
  String.raw`(?<bare>(?:[^\s;&,]|[;&,](?!${NEXT_PAIR})){1,${V}})`
].join("|")
const VALUE_GROUPS = ["dq", "sq", "edq", "bq", "bare"]
/** VALUE for a value that a name follows in the same object: a bare one holds no delimiter of JSON or Go. */
const PAIR_VALUE = VALUE.replace(/\?<(\w+)>/g, (_, g: string) => `?<${g}2>`).replace(
  /\(\?<bare2>.*$/,
  String.raw`(?<bare2>[^\s,;{}\[\]"']{1,${V}})`
)
const CLOSED_GROUPS = ["dq", "sq", "edq", "bq"]
/** A command-line argument: quoted (escapes honoured) or up to a blank. */
const ARG_VALUE = [
  String.raw`"(?<dq>(?:\\.|[^"\\\n]){0,${V}})"`,
  String.raw`'(?<sq>(?:\\.|[^'\\\n]){0,${V}})'`,
  String.raw`(?<bare>\S{1,${V}})`
].join("|")
const ARG_GROUPS = ["dq", "sq", "bare"]

/** Token shapes with a fixed prefix (vendors document them so that scanners can find them). */
const TOKEN_SHAPES = [
  "gh[pousr]_[A-Za-z0-9]{36,251}", // GitHub classic, OAuth, user-to-server, server-to-server, refresh
  "github_pat_[A-Za-z0-9_]{22,251}", // GitHub fine-grained
  "gl(?:pat|ptt|dt|rt|cbt|ft|soat|oas|agent)-[A-Za-z0-9_-]{20,251}", // GitLab
  "xox[abposer]-[A-Za-z0-9-]{10,251}", // Slack bot/user/app tokens
  "xapp-[0-9]-[A-Za-z0-9-]{10,251}", // Slack app-level
  "AIza[0-9A-Za-z_-]{35}", // Google API key
  "ya29\\.[0-9A-Za-z_-]{20,2048}", // Google OAuth access token
  "GOCSPX-[A-Za-z0-9_-]{20,64}", // Google OAuth client secret
  "(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,251}", // Stripe
  "sk-(?:proj|ant|svcacct|admin)-[A-Za-z0-9_-]{20,251}", // OpenAI, Anthropic
  "npm_[A-Za-z0-9]{36}", // npm
  "pypi-AgE[A-Za-z0-9_-]{50,1024}", // PyPI
  "hf_[A-Za-z0-9]{34,64}", // Hugging Face
  "dckr_pat_[A-Za-z0-9_-]{20,64}", // Docker Hub
  "hv[sb]\\.[A-Za-z0-9_-]{24,512}", // HashiCorp Vault service/batch tokens
  "SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}", // SendGrid
  "dop_v1_[a-f0-9]{64}" // DigitalOcean
]

/** What every TOKEN_SHAPES entry starts with. */
const TOKEN_PREFIXES =
  "gh[pousr]_|github_pat_|gl(?:pat|ptt|dt|rt|cbt|ft|soat|oas|agent)-|xox[abposer]-|xapp-|AIza|ya29\\.|GOCSPX-|[sr]k_(?:live|test)_|sk-(?:proj|ant|svcacct|admin)-|npm_|pypi-AgE|hf_|dckr_pat_|hv[sb]\\.|SG\\.|dop_v1_"

/** The delimiters around a URL's host, for lookaheads that must see where the authority ends. */
const HOST_AHEAD = `(?=\\[?[A-Za-z0-9.:_-]{1,255}\\]?(?::[0-9]{1,5})?(?:[/?#\\s"'<>),;]|$))`

/** PEM private key markers, in any case (`-----begin rsa private key-----` is accepted by some tools). */
const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]{0,64}PRIVATE KEY(?: BLOCK)?-----/dgi
const PEM_END = /-----END [A-Z0-9 ]{0,64}PRIVATE KEY(?: BLOCK)?-----/gi
/** Longest text PEM_END can match. */
const PEM_END_MAX = 100
/** Where a PuTTY key file's private lines end (v2/v3 `Private-MAC:`, v1 `Private-Hash:`). */
const PUTTY_END = /Private-(?:MAC|Hash):/g

/**
 * Commands whose short flag takes a password (`-p` means a port elsewhere: `ssh -p 22`, `docker run -p 80`),
 * with the flag letters, attached (`-pSECRET`) or not (`-p SECRET`, also `-p -SECRET`). Long flags need no
 * list: `--password` and every other secret-named flag is one rule for every command.
 */
const PASSWORD_FLAG_COMMANDS: ReadonlyArray<readonly [commands: string, letters: string]> = [
  [
    "mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlpump|mysqlslap|mariadb(?:-dump|-admin|-import|-show|-check)?",
    "p"
  ],
  ["sshpass", "p"],
  [
    String.raw`(?:docker|podman|nerdctl|buildah|skopeo|finch|oras)\s{1,4}login|helm\s{1,4}registry\s{1,4}login|crane\s{1,4}auth\s{1,4}login`,
    "p"
  ],
  ["redis-cli|keydb-cli|valkey-cli", "a"],
  ["mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop|mongofiles", "p"],
  ["ldapsearch|ldapmodify|ldapadd|ldapdelete|ldapwhoami|ldappasswd|ldapcompare|ldapmodrdn|ldapexop", "w"],
  ["sqlcmd|bcp|osql", "P"],
  ["zip|zipcloak|unzip|funzip", "P"],
  ["7z|7za|7zr|rar|unrar", "p"],
  ["useradd|usermod", "p"]
]
/** Commands whose flag takes `user:password` (curl) or `user%password` (Samba): the part after the separator. */
const USER_PASSWORD_FLAG_COMMANDS = "curl|smbclient|rpcclient|smbcacls|smbget|smbmap"
const USER_PASSWORD_FLAGS = String.raw`-[uU]\s{0,16}|--(?:proxy-)?user(?:=|\s{1,16})`
/** Where a command's arguments end: a newline or a shell separator. */
const COMMAND_ARGS = String.raw`(?:[^\n|;&]|&(?=[^&\s])){0,1024}?`
/** A .netrc keyword and its value before `password` (`machine h login u password p`). */
const NETRC_PAIR = String.raw`\s{1,16}(?:login|account|port)\s{1,16}\S{1,256}`
/** A command name: its own word (a path before it is fine), then arguments. */
const command = (names: string) => String.raw`(?<![A-Za-z0-9_.-])(?:${names})(?=[\s"'])`

/** A 40-character AWS secret access key: mixed case, digits or / +, many distinct characters (not a path or a hash). */
const looksLikeAwsSecret = (s: string): boolean =>
  /[A-Z]/.test(s) && /[a-z]/.test(s) && /[0-9/+]/.test(s) && new Set(s).size >= 20

/** A random token: upper and lower case letters and digits (not a word, a hex id or a version). */
const looksRandom = (s: string): boolean => /[A-Z]/.test(s) && /[a-z]/.test(s) && /[0-9]/.test(s)

/**
 * Whether a secret-named setting's value may be secret: not when the name says it holds a location
 * (`--tls-private-key-file=/var/lib/kubelet/pki/kubelet.key`, `PASSWORD_FILE=/run/secrets/db`) or is a switch
 * that reads the secret elsewhere (`docker login --password-stdin <registry>`), or the value is
 * a boolean (`--authentication-token-webhook=true`), which the kubelet logs at every start; not a working
 * directory (`PWD=/home/ec2-user`, `OLDPWD=/`, in sudo's log and every env dump); not passwd's own messages
 * and nsswitch.conf (`passwd: all authentication tokens updated successfully`, `passwd: files systemd`).
 */
const mayBeSecretValue = (value: string, m: RegExpExecArray): boolean => {
  const name = m.groups?.name ?? ""
  if (/[_.-](?:file|path|dir|stdin|fd)$/i.test(name) || /^(?:true|false)$/i.test(value)) return false
  if (/pwd$/i.test(name) && /^[/~]/.test(value)) return false
  return !(/^[a-z]*passwd$/.test(name) && m.groups?.sep === ":" && /^[a-z]+$/.test(value))
}

const RULES: ReadonlyArray<Rule> = [
  {
    name: "credential header",
    trigger:
      /authoriz|cookie|x-auth-token|x-api-key|security-token|vault-token|private-token|registry-auth|goog-api-key/gi,
    // Also Go's map[Authorization:[Basic ...]] and JSON {"Authorization":["Basic ..."]}.
    pattern: new RegExp(
      `(?<![A-Za-z0-9_])(?:${SECRET_HEADER})["']?\\s{0,16}[:=]\\s{0,16}\\[?\\s{0,16}["']?(?:(?:${AUTH_SCHEME})\\s{1,16})?(?<s>[^\\s"',\\]][^"'\\n\\]]{0,${V - 1}})`,
      "dgi"
    ),
    secret: ["s"],
    overflowStop: /["'\n\]]/g
  },
  {
    name: "bearer token",
    trigger: /bearer/gi,
    pattern: new RegExp(`\\bBearer\\s{1,16}(?<s>[A-Za-z0-9\\-._~+/]{1,${V}}={0,4})`, "dgi"),
    secret: ["s"],
    overflowStop: /[^A-Za-z0-9\-._~+/=]/g
  },
  {
    name: "JWT or base64 JSON (service-account tokens, .dockerconfigjson)",
    trigger: /eyJ/g,
    pattern: new RegExp(`(?<![A-Za-z0-9+/_=-])eyJ[A-Za-z0-9+/_=.-]{12,${V}}`, "dg"),
    overflowStop: /[^A-Za-z0-9+/_=.-]/g
  },
  {
    name: "base64 PEM private key (kubeconfig client-key-data, Secret data)",
    trigger: /LS0tLS1CRUdJTi/g,
    pattern: new RegExp(
      `(?<![A-Za-z0-9+/=])LS0tLS1CRUdJTi(?!BDRVJUSUZJQ0FUR|BQVUJMSUMgS0VZ|BYNTA5IENSTC)[A-Za-z0-9+/=]{16,${V}}`,
      "dg"
    ),
    overflowStop: /[^A-Za-z0-9+/=]/g
  },
  {
    name: "AWS access key id",
    trigger: /A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA|BIA|CCA)/g,
    pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[A-Z0-9]{16}\b/dg
  },
  {
    name: "AWS secret access key (bare)",
    trigger: (text, from) => hasKeyRun40(text, from),
    pattern: /(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])/dg,
    accept: looksLikeAwsSecret
  },
  {
    // STS session tokens are base64 of a protobuf-like blob that starts "\x21\n\x09origin_e" (IQoJb3JpZ2luX2)
    // or, older, "\x17\n\x06er/aws" (FwoGZXIvYXdz); they may be URL-encoded (%2B %2F %3D).
    name: "AWS session token (bare)",
    trigger: /IQoJb3JpZ2luX2|FwoGZXIvYXdz/g,
    pattern: new RegExp(`(?<![A-Za-z0-9+/%])(?:IQoJb3JpZ2luX2|FwoGZXIvYXdz)[A-Za-z0-9+/=%]{16,${V}}`, "dg"),
    overflowStop: /[^A-Za-z0-9+/=%]/g
  },
  {
    name: "signed URL parameter or connection-string key",
    trigger: /x-amz-|x-goog-|sharedaccess|accountkey/gi,
    pattern: new RegExp(`(?<![A-Za-z0-9_-])(?:${SIGNED_PARAM})=(?<s>[^&\\s"'#<>;]{1,${V}})`, "dgi"),
    secret: ["s"]
  },
  {
    name: "secret query parameter",
    trigger: new RegExp(`[?&;](?:${QUERY_PARAM})=`, "gi"),
    // A `;` ends the value only before another pair (a connection string's `;Password=a;b;Database=x`).
    pattern: new RegExp(`[?&;](?:${QUERY_PARAM})=(?<s>(?:[^&\\s"'#<>;]|;(?!${NEXT_PAIR})){1,${V}})`, "dgi"),
    secret: ["s"]
  },
  {
    name: "secret-named key, env var or setting",
    trigger: new RegExp(`(?:${NAME_WORDS})${NC}{0,128}(?:${QUOTE})?\\s{0,16}(?::=|=>|[:=])`, "gi"),
    // key=value, key: value, "key": "value", KEY='value', key := value, "key" => "value", "key":["value"],
    // {\"key\":\"value\"} (JSON in a JSON string), Pwd={odbc;value}
    pattern: new RegExp(
      `(?<!${NC})(?<q>${QUOTE}|)(?<name>${SECRET_NAME})\\k<q>\\s{0,16}(?<sep>:=|=>|[:=])\\s{0,16}\\[?\\s{0,16}(?:${VALUE})`,
      "dgi"
    ),
    secret: VALUE_GROUPS,
    closed: CLOSED_GROUPS,
    accept: mayBeSecretValue,
    overflowStop: /\s/g
  },
  {
    // Kubernetes env and ECS task definitions ({"name":"DB_PASSWORD","value":"…"}), Go's {Name:X,Value:y},
    // CloudFormation parameters, .NET <add key="DbPassword" value="…"/>; either order.
    name: "name/value pair whose name is secret",
    trigger: /value/gi,
    pattern: new RegExp(
      [
        `(?<!${NC})(?:${QUOTE})?(?:(?:parameter|option|env|var|variable)[_-]?)?(?:name|key)(?:${QUOTE})?\\s{0,16}[:=]\\s{0,16}(?:${QUOTE})?${SECRET_NAME}(?:${QUOTE})?\\s{0,16}[,;]?\\s{0,16}(?:${QUOTE})?(?:(?:parameter|option)[_-]?)?value(?:${QUOTE})?\\s{0,16}[:=]\\s{0,16}(?:${VALUE})`,
        `(?<!${NC})(?:${QUOTE})?(?:(?:parameter|option)[_-]?)?value(?:${QUOTE})?\\s{0,16}[:=]\\s{0,16}(?:${PAIR_VALUE})\\s{0,16}[,;]?\\s{0,16}(?:${QUOTE})?(?:(?:parameter|option|env|var|variable)[_-]?)?(?:name|key)(?:${QUOTE})?\\s{0,16}[:=]\\s{0,16}(?:${QUOTE})?${SECRET_NAME}(?![A-Za-z0-9_.-])`
      ].join("|"),
      "dgi"
    ),
    secret: [...VALUE_GROUPS, ...VALUE_GROUPS.map((g) => `${g}2`)],
    closed: [...CLOSED_GROUPS, ...CLOSED_GROUPS.map((g) => `${g}2`)],
    overflowStop: /\s/g
  },
  {
    name: "XML element whose name is secret",
    trigger: new RegExp(`<(?:${NC}{0,64}:)?${NC}{0,128}(?:${NAME_WORDS})`, "gi"),
    pattern: new RegExp(
      `<(?:${NC}{0,64}:)?${SECRET_NAME}(?:\\s[^<>\\n]{0,256})?>(?<s>[^<\\n]{1,${V}})</`,
      "dgi"
    ),
    secret: ["s"]
  },
  {
    name: "secret-named command-line flag",
    trigger: new RegExp(`--${NC}{0,128}(?:${NAME_WORDS})`, "gi"),
    // --password SECRET, --password=SECRET, --password -SECRET (a value may start with one dash, not two)
    pattern: new RegExp(
      `(?<![A-Za-z0-9_-])--(?<name>${SECRET_NAME})(?:\\s{1,16}(?!--)|=)(?:${ARG_VALUE})`,
      "dgi"
    ),
    secret: ARG_GROUPS,
    closed: ["dq", "sq"],
    accept: mayBeSecretValue,
    overflowStop: /\s/g
  },
  {
    name: "password flag of a command whose short flag means password",
    resumeAtStart: true,
    // Every command name holds one of these (a literal alternation is several times cheaper than the names).
    trigger:
      /mysql|mariadb|sshpass|login|redis-cli|keydb-cli|valkey-cli|mongo|ldap|sqlcmd|bcp|osql|zip|7z|rar|useradd|usermod/g,
    // mysql -pSECRET, sshpass -p SECRET, docker login -u AWS -p SECRET, also as audit's a2="-pSECRET"
    pattern: new RegExp(
      `(?:${PASSWORD_FLAG_COMMANDS.map(([c, letters]) => `${command(c)}${COMMAND_ARGS}[\\s"'=]-[${letters}]`).join("|")})\\s{0,16}(?:${ARG_VALUE})`,
      "dg"
    ),
    secret: ARG_GROUPS,
    closed: ["dq", "sq"],
    overflowStop: /\s/g
  },
  {
    name: "user:password flag (curl -u, --user, --proxy-user; smbclient -U user%password)",
    resumeAtStart: true,
    trigger: new RegExp(command(USER_PASSWORD_FLAG_COMMANDS), "g"),
    pattern: new RegExp(
      `${command(USER_PASSWORD_FLAG_COMMANDS)}${COMMAND_ARGS}[\\s"'=](?:${USER_PASSWORD_FLAGS})(?:"[^"\\n:%]{0,256}[:%](?<dq>(?:\\\\.|[^"\\\\\\n]){0,${V}})"|'[^'\\n:%]{0,256}[:%](?<sq>[^'\\n]{0,${V}})'|[^\\s:%"']{0,256}[:%](?<bare>\\S{1,${V}}))`,
      "dg"
    ),
    secret: ARG_GROUPS,
    closed: ["dq", "sq"],
    overflowStop: /\s/g
  },
  {
    name: "OpenSSL pass phrase argument (-passin pass:SECRET)",
    trigger: /pass:/g,
    pattern: new RegExp(
      `(?<![A-Za-z0-9_-])-(?:passin|passout|pass|password|passphrase|k)\\s{1,16}["']?pass:(?<s>[^\\s"']{1,${V}})`,
      "dg"
    ),
    secret: ["s"],
    overflowStop: /\s/g
  },
  {
    name: "keyword and value separated by blanks (.netrc, redis, config set)",
    resumeAtStart: true,
    trigger: /password|requirepass|masterauth|config(?:ure)?\s{1,16}set/gi,
    pattern: new RegExp(
      `(?<![A-Za-z0-9_.-])(?:(?:machine\\s{1,16}\\S{1,256}(?:${NETRC_PAIR}){0,4}|default(?:${NETRC_PAIR}){1,4})\\s{1,16}password|["']?(?:requirepass|masterauth)["']?|config(?:ure)?\\s{1,16}set\\s{1,16}(?:[^\\s=]{0,256}[/:])?${SECRET_NAME})\\s{1,16}(?:${ARG_VALUE})`,
      "dgi"
    ),
    secret: ARG_GROUPS,
    closed: ["dq", "sq"],
    overflowStop: /\s/g
  },
  {
    // A .netrc written one keyword a line, and redis.conf: a line that is only `password SECRET`.
    name: "a line that is a password keyword and its value",
    trigger: /pass|masterauth/gi,
    pattern: new RegExp(
      `\\s{0,64}(?:password|passwd|requirepass|masterauth)\\s{1,16}(?:${ARG_VALUE})\\s{0,64}$`,
      "dgi"
    ),
    secret: ARG_GROUPS,
    closed: ["dq", "sq"],
    accept: (_value, _m, at) => at === 0
  },
  {
    // Pretty-printed JSON and YAML put a name/value pair on two lines: `- name: DB_PASSWORD` then
    // `  value: …` (Kubernetes env), `"name": "DB_PASSWORD",` then `"value": "…"`. A line that is only such a
    // name arms the next line, where the rule below hides a `value` entry's value.
    name: "a line that names a secret (the first line of a two-line name/value pair)",
    trigger: /name|key/gi,
    pattern: new RegExp(
      `\\s{0,64}(?:-\\s{1,16})?(?:${QUOTE})?(?:(?:parameter|option|env|var|variable)[_-]?)?(?:name|key)(?:${QUOTE})?\\s{0,16}[:=]\\s{0,16}(?:${QUOTE})?${SECRET_NAME}(?:${QUOTE})?\\s{0,16},?\\s{0,64}$`,
      "dgi"
    ),
    accept: (_name, _m, at) => at === 0,
    namesNextValue: true
  },
  {
    name: "the value line of a two-line name/value pair",
    trigger: /value/gi,
    pattern: new RegExp(
      `\\s{0,64}(?:-\\s{1,16})?(?:${QUOTE})?(?:(?:parameter|option)[_-]?)?value(?:${QUOTE})?\\s{0,16}[:=]\\s{0,16}(?:${VALUE})`,
      "dgi"
    ),
    secret: VALUE_GROUPS,
    closed: CLOSED_GROUPS,
    accept: (_value, _m, at) => at === 0,
    afterSecretName: true,
    overflowStop: /\s/g
  },
  {
    name: "URL userinfo with a password (which may hold / @ :)",
    trigger: /:\/\/[^\s/?#@"'<>]{0,256}:/g,
    pattern: new RegExp(
      `(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://(?<s>[^\\s/?#@"'<>]{0,256}:[^\\s"'<>]{1,${V}})@${HOST_AHEAD}`,
      "dg"
    ),
    secret: ["s"]
  },
  {
    name: "URL userinfo that is a token",
    trigger: /:\/\/[A-Za-z0-9_-]{20,256}@/g,
    pattern: new RegExp(
      `(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://(?<s>[A-Za-z0-9_-]{20,256})@${HOST_AHEAD}`,
      "dg"
    ),
    secret: ["s"]
  },
  {
    name: "vendor token",
    trigger: new RegExp(TOKEN_PREFIXES, "g"),
    pattern: new RegExp(`(?<![A-Za-z0-9_-])(?:${TOKEN_SHAPES.join("|")})`, "dg")
  },
  {
    name: "legacy OpenAI-style key (sk- and 32 or more letters and digits)",
    trigger: /sk-[A-Za-z0-9]{32}/g,
    pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9]{32,128}(?![A-Za-z0-9_-])/dg,
    accept: looksRandom
  },
  {
    // <bot id>:<35 characters, the first an A>, also in the Bot API's URLs
    // (https://api.telegram.org/bot<token>/sendMessage).
    name: "Telegram bot token",
    trigger: /[0-9]:A[A-Za-z0-9_-]{34}/g,
    pattern: /(?:(?<=\/bot)|(?<![A-Za-z0-9_:-]))[0-9]{5,16}:A[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])/dg,
    accept: (token) => looksRandom(token.slice(token.indexOf(":") + 1))
  },
  {
    name: "crypt(3) password hash ($6$salt$hash, $y$, $2b$...)",
    trigger: /\$(?:[156y]|2[aby]|gy|7)\$/g,
    pattern: /(?<![A-Za-z0-9$])\$(?:[156y]|2[aby]|gy|7)\$[./A-Za-z0-9$=]{20,512}/dg
  },
  {
    name: "webhook URL secret (Slack, Discord)",
    trigger: /hooks\.slack\.com\/services\/|discord(?:app)?\.com\/api\/webhooks\//g,
    pattern:
      /(?:hooks\.slack\.com\/services\/|discord(?:app)?\.com\/api\/webhooks\/[0-9]{5,30}\/)(?<s>[A-Za-z0-9/_-]{20,256})/dg,
    secret: ["s"]
  },
  {
    name: "PEM private key body",
    trigger: /-----begin /gi,
    pattern: PEM_BEGIN,
    until: PEM_END,
    untilMax: PEM_END_MAX
  },
  {
    // PuTTY-User-Key-File-2/3: the lines after `Private-Lines: N` are the private key (base64).
    name: "PuTTY private key lines",
    trigger: /Private-Lines:/g,
    pattern: /Private-Lines:[ \t]{0,16}[0-9]{1,5}/dg,
    until: PUTTY_END,
    untilMax: 13
  }
]

/**
 * Every rule's trigger contains a match of one of these (the bare AWS secret's: a run of exactly 40 key
 * characters; the Telegram token's: a digit, ":A" and 34 token characters), so a line without any (most
 * log lines) skips the rules. Shaped for V8's regex engine (measured): one case-insensitive alternation of
 * everything, or words that start with "-" or hold a ".", run at half the speed. Keep in step with the
 * triggers; a property test checks that the pre-filter never skips a line a rule would change.
 */
const SECRET_WORDS = new RegExp(
  `${NAME_WORDS}|sig[a-z]{0,32}=|code=|bearer|eyj|ls0tls1crudjti|slack|webhooks|begin|a(?:kia|sia|gpa|ida|roa|npa|nva|ipa|bia|cca)`,
  "i"
)
/** The case-sensitive ones: command names (sshpass, keydb-cli, openssl's pass: hold a name word), PuTTY, STS. */
const COMMAND_WORDS =
  /mysql|mariadb|login|redis|mongo|ldap|sqlcmd|bcp|osql|zip|7z|rar|useradd|usermod|curl|smb|rpcclient|Private-Lines|IQoJb3JpZ2luX2|FwoGZXIvYXdz/
const TOKEN_PREFIX = new RegExp(`${TOKEN_PREFIXES}|sk-[A-Za-z0-9]{32}|\\$(?:[156y]|2[aby]|gy|7)\\$`)
const URL_USERINFO = /:\/\/[^\s/?#@"'<>]*:\S*@|:\/\/[A-Za-z0-9_-]{20,}@/
const TELEGRAM = /[0-9]:A[A-Za-z0-9_-]{34}/

/** 1 for the characters of an AWS secret access key (base64: A-Z a-z 0-9 / +), indexed by UTF-16 code unit. */
const KEY_CHAR = new Uint8Array(65_536)
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+")
  KEY_CHAR[c.charCodeAt(0)] = 1

/**
 * Whether the line has a run of exactly 40 key characters. Looks at every 40th character and measures the
 * run around it only when it is a key character (a run of 40 must cover one of them): several times faster
 * than the equivalent regex.
 */
const hasKeyRun40 = (line: string, start = 0): boolean => {
  const n = line.length
  let i = start + 39
  while (i < n) {
    if (KEY_CHAR[line.charCodeAt(i)] !== 1) {
      i += 40
      continue
    }
    let from = i
    while (from > start && KEY_CHAR[line.charCodeAt(from - 1)] === 1) from--
    let to = i + 1
    while (to < n && KEY_CHAR[line.charCodeAt(to)] === 1) to++
    if (to - from === 40) return true
    i = to + 40
  }
  return false
}

/** Whether a line could hold something a rule masks (cheap; most log lines answer no). */
export const mightHoldSecret = (line: string): boolean =>
  SECRET_WORDS.test(line) ||
  COMMAND_WORDS.test(line) ||
  TOKEN_PREFIX.test(line) ||
  (line.includes("://") && URL_USERINFO.test(line)) ||
  hasKeyRun40(line) ||
  (line.includes(":A") && TELEGRAM.test(line))

/** Whether rule `r`'s trigger occurs in `text` at or after `from`. */
const triggered = (r: number, text: string, from: number): boolean => {
  const trigger = RULES[r]!.trigger
  if (typeof trigger === "function") return trigger(text, from)
  trigger.lastIndex = from
  return trigger.test(text)
}

/** The rules' patterns, for the test that checks every quantifier is bounded. */
export const RULE_PATTERNS: ReadonlyArray<RegExp> = [
  ...RULES.map((r) => r.pattern),
  ...RULES.flatMap((r) => (r.trigger instanceof RegExp ? [r.trigger] : [])),
  ...RULES.flatMap((r) => (r.until ? [r.until] : [])),
  ...RULES.flatMap((r) => (r.overflowStop ? [r.overflowStop] : []))
]

type Range = readonly [start: number, end: number]

interface OpenMask {
  /** Absolute position the mask starts at. */
  readonly start: number
  /** Absolute position the stop is searched from next. */
  searchFrom: number
  readonly stop: RegExp
  /** How far back from the end to search again next time (a stop split between two pieces). */
  readonly stopMax: number
  /** A block that may span lines (a PEM or PuTTY key body), carried to the next line while open. */
  readonly block: boolean
}

/** A key block open at the end of a line: the next line starts inside it. */
export interface OpenBlock {
  readonly stop: RegExp
  readonly stopMax: number
}

/** What one line passes to the next. */
export interface Carry {
  /** The key blocks (PEM, PuTTY) the line ended inside. */
  readonly blocks: ReadonlyArray<OpenBlock>
  /** The line was only a secret name (`- name: DB_PASSWORD`): the next line's `value` is its value. */
  readonly afterSecretName: boolean
}

const NOTHING_CARRIED: Carry = { blocks: [], afterSecretName: false }

/**
 * One line, scanned whole (`push` then `drain(true)`) or in pieces (`push`, `drain(false)` as text arrives,
 * `drain(true)` at the newline). Positions are absolute within the line; `text` holds the line from `base`.
 * Rule r has tried every start before `next[r]`, so a character before min(next) has all its masks known
 * and can be written out; a start at or past `end - HOLDBACK_CHARS` is (re)tried once more text is in.
 */
export class LineScan {
  private text = ""
  private base = 0
  private emitted = 0
  private readonly next: number[] = RULES.map(() => 0)
  private masks: Range[] = []
  private open: OpenMask[] = []
  private lastWasMasked = false
  /** A `namesNextValue` rule matched. */
  private namesNextValue = false
  /** After `drain(true)`: what the line passes to the next. */
  carry: Carry = NOTHING_CARRIED

  /**
   * `carried`: what the line before passed on. `exhaustive`: try every rule at every position,
   * ignoring the pre-filter and the triggers (the reference the fast path is tested against). `active`: see
   * the field.
   */
  private readonly exhaustive: boolean
  /** For a whole line whose triggers the caller tried: 1 for the rules to run, the others are skipped. */
  private readonly active: Uint8Array | undefined
  private readonly afterSecretName: boolean

  constructor(carried: Carry, exhaustive = false, active?: Uint8Array) {
    this.exhaustive = exhaustive
    this.active = active
    this.afterSecretName = carried.afterSecretName
    for (const b of carried.blocks)
      this.open.push({ start: 0, searchFrom: 0, stop: b.stop, stopMax: b.stopMax, block: true })
  }

  get end(): number {
    return this.base + this.text.length
  }

  /** Characters received but not yet written out. */
  get unwritten(): number {
    return this.end - this.emitted
  }

  push(s: string): void {
    this.text += s
  }

  /** `checked`: the caller already found the pre-filter true for all of the text. */
  drain(final: boolean, checked = false): string {
    const end = this.end
    const limit = final ? end : end - HOLDBACK_CHARS
    for (const o of [...this.open]) this.advance(o)
    // The pre-filter over everything not yet scanned spares the per-rule triggers most of the time.
    const scanFrom = Math.min(...this.next)
    if (final || scanFrom < limit) {
      // A whole line was checked by the caller; a long line's pieces are checked here.
      if (
        this.exhaustive ||
        checked ||
        this.afterSecretName ||
        mightHoldSecret(this.text.slice(Math.max(0, scanFrom - this.base - 1)))
      )
        for (let r = 0; r < RULES.length; r++) this.scan(r, limit, final)
      else for (let r = 0; r < RULES.length; r++) this.next[r] = final ? end : Math.max(this.next[r]!, limit)
    }
    const upTo = final ? end : Math.max(this.emitted, Math.min(limit, ...this.next))
    const out = this.render(upTo)
    if (final)
      this.carry = {
        blocks: this.open.filter((o) => o.block).map((o) => ({ stop: o.stop, stopMax: o.stopMax })),
        afterSecretName: this.namesNextValue
      }
    else this.compact()
    return out
  }

  /** Looks for an open mask's stop; found: the mask closes there. */
  private advance(o: OpenMask): void {
    o.stop.lastIndex = Math.max(0, o.searchFrom - this.base)
    const m = o.stop.exec(this.text)
    if (m) {
      this.masks.push([o.start, this.base + m.index])
      this.open.splice(this.open.indexOf(o), 1)
    } else o.searchFrom = Math.max(o.start, this.end - o.stopMax)
  }

  private scan(r: number, limit: number, final: boolean): void {
    const rule = RULES[r]!
    const re = rule.pattern
    let pos = this.next[r]!
    if (!final && pos >= limit) return
    // One character early: a trigger may look one back. A whole line's triggers were tried by the caller.
    const skip =
      (rule.afterSecretName === true && !this.afterSecretName) ||
      (this.active
        ? this.active[r] !== 1
        : !this.exhaustive && !triggered(r, this.text, Math.max(0, pos - this.base - 1)))
    if (skip) {
      this.next[r] = final ? this.end : Math.max(pos, limit)
      return
    }
    for (;;) {
      re.lastIndex = pos - this.base
      const m = re.exec(this.text)
      if (!m) {
        this.next[r] = final ? this.end : Math.max(pos, limit)
        return
      }
      const start = this.base + m.index
      if (!final && start >= limit) {
        this.next[r] = start
        return
      }
      // The scan goes on from where the secret starts, not from the end of the match: the match may have
      // paired the wrong quotes (`x_secret = "  auth = "QUJD"` masks `  auth = ` and must still find `QUJD`),
      // and a candidate the rule turns down hides nothing (`--key-file="DB_PASS=x"`).
      const secretStart = this.onMatch(rule, m)
      pos = rule.resumeAtStart ? start + 1 : Math.max(start + 1, secretStart)
      this.next[r] = pos
    }
  }

  /** Records a match's mask; returns where its secret starts (the match's start when turned down). */
  private onMatch(rule: Rule, m: RegExpExecArray): number {
    let span: readonly [number, number] | undefined
    let group: string | undefined
    if (rule.secret) {
      for (const g of rule.secret) {
        span = m.indices?.groups?.[g]
        group = g
        if (span) break
      }
    } else span = m.indices?.[0]
    if (!span) return this.base + m.index
    const from = this.base + span[0]
    const to = this.base + span[1]
    if (rule.accept && !rule.accept(m.input.slice(span[0], span[1]), m, this.base + m.index))
      return this.base + m.index
    if (rule.namesNextValue) {
      this.namesNextValue = true
      return to
    }
    if (rule.until) {
      const o: OpenMask = {
        start: to,
        searchFrom: to,
        stop: rule.until,
        stopMax: rule.untilMax ?? 0,
        block: true
      }
      this.open.push(o)
      this.advance(o)
    } else if (
      rule.overflowStop &&
      to - from >= MAX_SECRET_CHARS &&
      !(group !== undefined && rule.closed?.includes(group))
    ) {
      const o: OpenMask = { start: from, searchFrom: to, stop: rule.overflowStop, stopMax: 0, block: false }
      this.open.push(o)
      this.advance(o)
    } else if (to > from) this.masks.push([from, to])
    return from
  }

  /** Writes out [emitted, upTo), each maximal masked run as one REDACTED. */
  private render(upTo: number): string {
    if (upTo <= this.emitted) return ""
    const ranges = [...this.masks, ...this.open.map((o): Range => [o.start, this.end])]
      .filter(([a, b]) => b > this.emitted && a < upTo && b > a)
      .sort((x, y) => x[0] - y[0])
    let out = ""
    let p = this.emitted
    let continuing = this.lastWasMasked
    for (const [a0, b0] of ranges) {
      const a = Math.max(a0, p)
      const b = Math.min(b0, upTo)
      if (b <= a) continue
      if (a > p) {
        out += this.text.slice(p - this.base, a - this.base)
        continuing = false
      }
      if (!continuing) out += REDACTED
      continuing = true
      p = b
    }
    if (upTo > p) {
      out += this.text.slice(p - this.base, upTo - this.base)
      continuing = false
    }
    this.lastWasMasked = continuing
    this.emitted = upTo
    return out
  }

  /** Drops what no later scan or render needs. */
  private compact(): void {
    this.masks = this.masks.filter(([, b]) => b > this.emitted)
    const keepFrom =
      Math.min(this.emitted, ...this.next, ...this.open.map((o) => o.searchFrom)) - LOOKBEHIND_CHARS
    if (keepFrom > this.base) {
      this.text = this.text.slice(keepFrom - this.base)
      this.base = keepFrom
    }
  }
}

/** Redacts a whole line that passed the pre-filter (or follows a carry); `carry`: what it passes on. */
const scanWholeLine = (line: string, carried: Carry): { out: string; carry: Carry } => {
  let active: Uint8Array | undefined
  if (carried.blocks.length === 0) {
    // Most lines the pre-filter lets through hold a trigger word but no secret: try the triggers first and
    // build no scanner when none fires.
    let any = false
    for (let r = 0; r < RULES.length; r++) {
      if (triggered(r, line, 0)) {
        active ??= new Uint8Array(RULES.length)
        active[r] = 1
        any = true
      }
    }
    if (!any) return { out: line, carry: NOTHING_CARRIED }
  }
  const scan = new LineScan(carried, false, active)
  scan.push(line)
  const out = scan.drain(true, carried.blocks.length === 0)
  return { out, carry: scan.carry }
}

const scanLine = (line: string, exhaustive: boolean): string => {
  if (!exhaustive) return scanWholeLine(line, NOTHING_CARRIED).out
  const scan = new LineScan(NOTHING_CARRIED, true)
  scan.push(line)
  return scan.drain(true, true)
}

/**
 * Every rule at every position, without the pre-filter and the triggers (exported for the test that checks
 * the fast path loses nothing).
 */
export const applyRules = (line: string): string => scanLine(line, true)

/** Redacts one line (no newline inside). Pure. */
export const redactLine = (line: string): string => (mightHoldSecret(line) ? scanLine(line, false) : line)

/**
 * Stateful line redactor: also masks what spans lines: the bodies of PEM and PuTTY private-key blocks, and
 * the value of a name/value pair written on two lines. Call `line()` for each complete line, or
 * `longLine()` ... `endLongLine()` for one fed in pieces.
 */
export class LineRedactor {
  private carried: Carry = NOTHING_CARRIED

  line(text: string): string {
    const c = this.carried
    if (c.blocks.length === 0 && !c.afterSecretName && !mightHoldSecret(text)) return text
    const { out, carry } = scanWholeLine(text, c)
    this.carried = carry
    return out
  }

  /** Starts a line that arrives in pieces: `push`, `drain(false)` while it grows, `drain(true)` at its end. */
  longLine(): LineScan {
    return new LineScan(this.carried)
  }

  /** After the long line's `drain(true)`. */
  endLongLine(scan: LineScan): void {
    this.carried = scan.carry
  }
}

/** Redacts a whole text at once (for small in-memory values such as agent state). */
export const redactText = (text: string): string => {
  const r = new LineRedactor()
  return text
    .split("\n")
    .map((l) => r.line(l))
    .join("\n")
}

export interface RedactionOptions {
  /** A line longer than this (in UTF-16 code units) is scanned and flushed in pieces. Default 256 KiB. */
  readonly maxLineBytes?: number
}

/** A streaming Transform (bytes in, UTF-8 bytes out) that redacts every line. */
export const redactionTransform = (options: RedactionOptions = {}): Transform => {
  const maxLine = options.maxLineBytes ?? 256 * 1024
  const redactor = new LineRedactor()
  const decoder = new TextDecoder("utf-8")
  /** The current line's start while it is short enough to keep whole. */
  let pending = ""
  /** The current line once it outgrew maxLine. */
  let long: LineScan | undefined

  const take = (s: string, out: string[]) => {
    let i = 0
    for (;;) {
      const nl = s.indexOf("\n", i)
      if (nl < 0) break
      const part = s.slice(i, nl)
      if (long) {
        long.push(part)
        out.push(long.drain(true), "\n")
        redactor.endLongLine(long)
        long = undefined
      } else {
        out.push(redactor.line(pending + part), "\n")
        pending = ""
      }
      i = nl + 1
    }
    const rest = i === 0 ? s : s.slice(i)
    if (rest === "") return
    if (!long) {
      pending += rest
      if (pending.length <= maxLine) return
      long = redactor.longLine()
      long.push(pending)
      pending = ""
    } else long.push(rest)
    if (long.unwritten > HOLDBACK_CHARS + SCAN_STEP_CHARS) out.push(long.drain(false))
  }

  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) {
      const out: string[] = []
      take(decoder.decode(chunk, { stream: true }), out)
      const text = out.join("")
      cb(null, text.length > 0 ? Buffer.from(text, "utf8") : undefined)
    },
    flush(cb: TransformCallback) {
      const out: string[] = []
      take(decoder.decode(), out)
      if (long) {
        out.push(long.drain(true))
        redactor.endLongLine(long)
        long = undefined
      } else if (pending.length > 0) {
        out.push(redactor.line(pending))
        pending = ""
      }
      const text = out.join("")
      cb(null, text.length > 0 ? Buffer.from(text, "utf8") : undefined)
    }
  })
}
