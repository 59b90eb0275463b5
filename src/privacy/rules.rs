//! The secret rules: one per credential format, each beside a text it must
//! redact and a look-alike it must leave alone (both tested, bare and inside
//! other text).
//!
//! The formats follow the providers' documented token shapes, as gitleaks'
//! and GitHub secret scanning's rule sets do. A rule is kept narrow enough
//! that ordinary changelogs and code pass untouched: the recall fixtures,
//! real third-party text, are the false-positive check (see the tests).
//! To add a format, add a rule with its two samples; nothing else changes.

/// One credential format.
pub(super) struct Rule {
    /// What it finds, named in test failures.
    #[cfg_attr(not(test), allow(dead_code))]
    pub name: &'static str,
    /// Lowercase literals, one of which every match contains: the regex is
    /// compiled and run only on a text holding one of them.
    pub hints: &'static [&'static str],
    pub regex: &'static str,
    /// The replacement: `$n` keeps a group around the secret (a name, a
    /// scheme), and `[REDACTED]` stands for the secret.
    pub replacement: &'static str,
    /// For rules that find a name and a value: whether the value (group
    /// `secret`) is worth redacting. None redacts every match.
    pub accept: Option<fn(&str) -> bool>,
    /// A text the rule must redact.
    #[cfg_attr(not(test), allow(dead_code))]
    pub redacts: &'static str,
    /// A look-alike it must leave as it is.
    #[cfg_attr(not(test), allow(dead_code))]
    pub spares: &'static str,
}

const SECRET: &str = "[REDACTED]";

/// Names that say a value is a secret, in `KEY=value` and `"key": "value"`.
const SECRET_NAMES: &[&str] = &["key", "secret", "token", "password", "passwd", "pwd", "credential"];

pub(super) const RULES: &[Rule] = &[
    Rule {
        name: "AWS access key id",
        hints: &["akia", "asia", "abia", "acca"],
        regex: r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        replacement: SECRET,
        accept: None,
        redacts: "AKIAIOSFODNN7EXAMPLE",
        spares: "AKIA is the prefix of long-term keys",
    },
    Rule {
        name: "GitHub token",
        hints: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        regex: r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
        replacement: SECRET,
        accept: None,
        redacts: "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        spares: "ghp_short and gh_pages",
    },
    Rule {
        name: "GitHub fine-grained token",
        hints: &["github_pat_"],
        regex: r"\bgithub_pat_[A-Za-z0-9_]{22,}\b",
        replacement: SECRET,
        accept: None,
        redacts: "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        spares: "a github_pat_ prefix alone",
    },
    Rule {
        name: "GitLab token",
        hints: &["glpat-", "gldt-", "glptt-", "glrt-", "glsoat-", "glcbt-", "gloas-"],
        regex: r"\bgl(?:pat|dt|ptt|rt|soat|cbt|oas)-[A-Za-z0-9_-]{20,}",
        replacement: SECRET,
        accept: None,
        redacts: "glpat-xZ8pQr2sT4uV6wX8yZ0a",
        spares: "glpat- tokens expire",
    },
    Rule {
        name: "Anthropic API key",
        hints: &["sk-ant-"],
        regex: r"\bsk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{20,}",
        replacement: SECRET,
        accept: None,
        redacts: "sk-ant-api03-abcDEF123_ghiJKL456-mnoPQR789stuVWX",
        spares: "sk-ant-api03 keys start so",
    },
    Rule {
        name: "OpenAI API key",
        hints: &["sk-"],
        regex: r"\bsk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{32,}\b)",
        replacement: SECRET,
        accept: None,
        redacts: "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
        spares: "sk-learn and sk-proj-short",
    },
    Rule {
        name: "Stripe key",
        hints: &["sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"],
        regex: r"\b(?:[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})\b",
        replacement: SECRET,
        accept: None,
        redacts: "sk_live_51H8abcDEF123ghiJKL456mno",
        spares: "pk_live_51H8abcDEF123ghiJKL456mno is publishable; sk_live_ alone",
    },
    Rule {
        name: "Google API key",
        hints: &["aiza"],
        regex: r"\bAIza[0-9A-Za-z_-]{35}",
        replacement: SECRET,
        accept: None,
        redacts: "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
        spares: "AIzaSy keys are 39 characters",
    },
    Rule {
        name: "Google OAuth client secret",
        hints: &["gocspx-"],
        regex: r"\bGOCSPX-[A-Za-z0-9_-]{28}",
        replacement: SECRET,
        accept: None,
        redacts: "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",
        spares: "GOCSPX-short",
    },
    Rule {
        name: "Hugging Face token",
        hints: &["hf_"],
        regex: r"\bhf_[A-Za-z0-9]{30,}\b",
        replacement: SECRET,
        accept: None,
        redacts: "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
        spares: "hf_hub_download(repo_id)",
    },
    Rule {
        name: "npm token",
        hints: &["npm_"],
        regex: r"\bnpm_[A-Za-z0-9]{36}\b",
        replacement: SECRET,
        accept: None,
        redacts: "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        spares: "npm_config_cache and npm_package_version",
    },
    Rule {
        name: "PyPI token",
        hints: &["pypi-ageichlwas5vcmc"],
        regex: r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
        replacement: SECRET,
        accept: None,
        redacts: "pypi-AgEIcHlwaS5vcmcCJGI1ZjE5ZTNhLTk1YjUtNDc5Zi04NmQxLWQ3NjZmNmQ0ZmY4OQACKlsicHJvamVjdC",
        spares: "pypi-AgEIcHlwaS5vcmc is how tokens begin",
    },
    Rule {
        name: "Slack token",
        hints: &["xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-"],
        regex: r"\bxox[abposre]-[A-Za-z0-9-]{10,}",
        replacement: SECRET,
        accept: None,
        redacts: "xoxb-123456789012-abcdefghijkl",
        spares: "xoxb- tokens belong to bots",
    },
    Rule {
        name: "Slack app token",
        hints: &["xapp-"],
        regex: r"\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{20,}",
        replacement: SECRET,
        accept: None,
        redacts: "xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef0123",
        spares: "xapp-1 tokens open sockets",
    },
    Rule {
        name: "Slack webhook",
        hints: &["hooks.slack.com"],
        regex: r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]+",
        replacement: SECRET,
        accept: None,
        redacts: "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
        spares: "see https://api.slack.com/messaging/webhooks",
    },
    Rule {
        name: "Twilio API key",
        hints: &["sk"],
        regex: r"\bSK[0-9a-f]{32}\b",
        replacement: SECRET,
        accept: None,
        redacts: "SK0123456789abcdef0123456789abcdef",
        spares: "SKIP the task SK-1234",
    },
    Rule {
        name: "SendGrid API key",
        hints: &["sg."],
        regex: r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b",
        replacement: SECRET,
        accept: None,
        redacts: "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
        spares: "SG.example is not a key",
    },
    Rule {
        name: "Azure storage or service bus key",
        hints: &["accountkey", "sharedaccesskey"],
        regex: r"(?i)((?:AccountKey|SharedAccessKey)\s*=\s*)[A-Za-z0-9+/]{20,}={0,2}",
        replacement: "${1}[REDACTED]",
        accept: None,
        redacts: "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4==;EndpointSuffix=core.windows.net",
        spares: "set AccountKey in the connection string",
    },
    Rule {
        name: "JSON Web Token",
        hints: &["eyj"],
        regex: r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        replacement: SECRET,
        accept: None,
        redacts: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        spares: "a JWT starts with eyJ",
    },
    Rule {
        name: "private key block",
        hints: &["private key"],
        // An unterminated block (a truncated output) is redacted to the end:
        // better too much than a leak.
        regex: r"-----BEGIN[A-Z ]* PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[A-Z ]* PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)",
        replacement: SECRET,
        accept: None,
        redacts: "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
        spares: "-----BEGIN PUBLIC KEY-----\nMIIBIj\n-----END PUBLIC KEY-----",
    },
    Rule {
        name: "password in a URL",
        hints: &["://"],
        regex: r#"\b([A-Za-z][A-Za-z0-9+.-]*://[^\s:/@'"<>]+:)[^\s/@'"<>]+@"#,
        replacement: "${1}[REDACTED]@",
        accept: None,
        redacts: "postgres://admin:hunter2pass@db:5432/app",
        spares: "https://example.com:8080/path and git@github.com:owner/repo",
    },
    Rule {
        name: "bearer token",
        hints: &["bearer"],
        regex: r"(?i)(bearer\s+)[A-Za-z0-9\-._~+/]{8,}=*",
        replacement: "${1}[REDACTED]",
        accept: None,
        redacts: "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
        spares: "the bearer of bad news",
    },
    Rule {
        name: "basic auth header",
        hints: &["basic"],
        regex: r"(?i)(authorization:\s*basic\s+)[A-Za-z0-9+/]{8,}=*",
        replacement: "${1}[REDACTED]",
        accept: None,
        redacts: "Authorization: Basic YWRtaW46aHVudGVyMg==",
        spares: "basic authentication is supported",
    },
    Rule {
        name: "a secret-named assignment",
        hints: SECRET_NAMES,
        regex: r#"(?i)((?:api[_-]?key|apikey|access[_-]?key|private[_-]?key|secret|token|password|passwd|pwd|credentials?)["']?[ \t]*[:=][ \t]*["']?)(?P<secret>[^\s"'&,;]{3,})"#,
        replacement: "${1}[REDACTED]",
        accept: Some(looks_secret),
        redacts: "api_key=sk-live-1234567890",
        spares: "fn new(token: Token, password: self.password) and CancellationToken::new and --root-password=\n密码",
    },
];

/// Whether the value of a secret-named assignment looks like a secret
/// rather than code or prose: `token: Token`, `password = get_password()`,
/// `API_KEY=${API_KEY}` name a secret without holding one.
fn looks_secret(value: &str) -> bool {
    // `Token::new`, `token == other`: a path or a comparison, not a value.
    let reference = value.starts_with(['$', '%', '{', '<', '@', '*', '#', '[', ':', '=']);
    let code = value.contains(['(', ')', '[', ']', '{', '}']);
    // A short run of letters is an identifier (`Token`, `self.token`, `none`);
    // a real password has a digit or a symbol, or is long.
    let word = value.chars().count() < 16 && value.chars().all(|c| c.is_alphabetic() || c == '_' || c == '.');
    !(reference || code || word)
}

#[cfg(test)]
mod tests {
    use super::looks_secret;

    #[test]
    fn a_value_is_a_secret_unless_it_is_code_a_reference_or_a_short_word() {
        for secret in ["hunter22", "sk-live-1234567890", "correcthorsebatterystaple", "p@ss!w0rd"] {
            assert!(looks_secret(secret), "{secret}");
        }
        for not_secret in
            ["Token", "self.password", ":run_until_cancelled", "get_password()", "${API_KEY}", "密码", "[REDACTED]"]
        {
            assert!(!looks_secret(not_secret), "{not_secret}");
        }
    }
}
