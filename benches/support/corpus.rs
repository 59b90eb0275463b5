//! A synthetic but realistic corpus: what a year of coding-agent sessions
//! looks like in the store. English and Chinese prose, code, file paths and
//! tool outputs from tens of bytes to tens of kilobytes, drawn with a fixed
//! seed so that every run measures the same data.

use std::io::Write;

use serde_json::json;

const EN: &[&str] = &[
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "it",
    "for",
    "this",
    "that",
    "with",
    "on",
    "we",
    "should",
    "can",
    "when",
    "not",
    "be",
    "from",
    "build",
    "test",
    "fails",
    "error",
    "database",
    "locked",
    "connection",
    "refused",
    "timeout",
    "cache",
    "miss",
    "latency",
    "request",
    "response",
    "server",
    "client",
    "config",
    "parse",
    "file",
    "path",
    "module",
    "function",
    "struct",
    "trait",
    "async",
    "thread",
    "lock",
    "retry",
    "migration",
    "schema",
    "index",
    "query",
    "search",
    "token",
    "session",
    "memory",
    "hook",
    "plugin",
    "deploy",
    "release",
    "branch",
    "commit",
    "merge",
    "review",
    "refactor",
    "rename",
    "benchmark",
    "slow",
    "fast",
    "crash",
    "panic",
    "overflow",
    "null",
    "pointer",
    "allocation",
    "leak",
    "upgrade",
    "dependency",
    "version",
    "warning",
    "compile",
    "linker",
    "docker",
    "kubernetes",
    "endpoint",
    "handler",
    "router",
    "middleware",
    "auth",
    "password",
    "user",
    "admin",
    "permission",
    "denied",
    "network",
    "socket",
    "port",
    "listen",
    "bind",
    "address",
    "parser",
    "lexer",
    "grammar",
];
const ZH: &[&str] = &[
    "数据",
    "缓存",
    "测试",
    "错误",
    "数据库",
    "连接",
    "超时",
    "配置",
    "文件",
    "路径",
    "模块",
    "函数",
    "请求",
    "响应",
    "服务器",
    "客户端",
    "修复",
    "问题",
    "性能",
    "优化",
    "内存",
    "泄漏",
    "线程",
    "锁",
    "重试",
    "迁移",
    "索引",
    "查询",
    "搜索",
    "会话",
    "插件",
    "部署",
    "发布",
    "分支",
    "提交",
    "合并",
    "审查",
    "重构",
    "日志",
    "我们",
    "需要",
    "应该",
    "已经",
    "这个",
    "那个",
    "因为",
    "所以",
    "但是",
    "如果",
    "然后",
    "完成",
    "失败",
    "成功",
    "检查",
    "更新",
    "删除",
    "添加",
    "用户",
    "权限",
    "网络",
    "端口",
    "解析",
    "编译",
    "依赖",
    "版本",
];
const IDENTS: &[&str] = &[
    "parse_config",
    "HashMap",
    "open_store",
    "SearchRequest",
    "build_index",
    "retry_with_backoff",
    "tokio::spawn",
    "serde_json",
    "fn main",
    "impl Display",
    "Result<()>",
    "unwrap_or_default",
    "async fn handle",
    "Arc<Mutex<T>>",
    "self.conn",
    "useEffect",
    "def __init__",
    "import numpy",
    "console.log",
    "CREATE TABLE",
    "SELECT * FROM",
    "std::fs::read_to_string",
    "pub struct Config",
    "#[derive(Debug)]",
    "cargo test",
    "npm run build",
];
const DIRS: &[&str] = &["src", "src/store", "src/cli", "src/hooks", "tests", "crates/core/src", "lib", "app/api"];
const FILES: &[&str] = &["mod", "main", "lib", "config", "search", "schema", "handler", "utils", "index", "client"];
const EXTS: &[&str] = &["rs", "py", "ts", "go", "toml", "json", "md"];
const TOOLS: &[&str] = &["Bash", "Read", "Edit", "Grep", "Write", "Glob"];

/// Characters that generated Chinese words are made of.
const HANZI: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处府";

/// A seeded generator of observations.
pub struct Corpus {
    rng: fastrand::Rng,
    english: Vec<String>,
    chinese: Vec<String>,
    /// The longest text to generate, in bytes (about: a text ends on a whole piece).
    pub max_length: usize,
}

impl Corpus {
    pub fn new(seed: u64) -> Self {
        let mut rng = fastrand::Rng::with_seed(seed);
        // A real vocabulary is large: the listed words are its common head,
        // generated ones its long tail, so a query matches a realistic share.
        let syllables = ["ka", "lo", "mi", "ser", "tra", "ven", "pol", "dex", "qui", "ron", "zel", "fa", "gen", "hub"];
        let mut english: Vec<String> = EN.iter().map(|w| w.to_string()).collect();
        while english.len() < 6_000 {
            let n = rng.usize(2..4);
            english.push((0..n).map(|_| syllables[rng.usize(..syllables.len())]).collect());
        }
        let hanzi: Vec<char> = HANZI.chars().collect();
        let mut chinese: Vec<String> = ZH.iter().map(|w| w.to_string()).collect();
        while chinese.len() < 3_000 {
            let n = rng.usize(2..4);
            chinese.push((0..n).map(|_| hanzi[rng.usize(..hanzi.len())]).collect());
        }
        Self { rng, english, chinese, max_length: usize::MAX }
    }

    /// Zipf-like over a list: the first entries are far more common.
    fn zipf(&mut self, len: usize) -> usize {
        ((len as f64).powf(self.rng.f64()) as usize).saturating_sub(1).min(len - 1)
    }

    fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str {
        list[self.zipf(list.len())]
    }

    pub fn path(&mut self) -> String {
        format!("{}/{}.{}", self.pick(DIRS), self.pick(FILES), self.pick(EXTS))
    }

    fn english(&mut self, words: usize) -> String {
        let picked: Vec<usize> = (0..words).map(|_| self.zipf(self.english.len())).collect();
        picked.iter().map(|&i| self.english[i].as_str()).collect::<Vec<_>>().join(" ") + "."
    }

    fn chinese(&mut self, words: usize) -> String {
        let picked: Vec<usize> = (0..words).map(|_| self.zipf(self.chinese.len())).collect();
        let mut s: String = picked.iter().map(|&i| self.chinese[i].as_str()).collect();
        s.push('。');
        s
    }

    fn code_line(&mut self) -> String {
        match self.rng.u8(0..4) {
            0 => format!("    let {} = {}(&{})?;", self.pick(FILES), self.pick(IDENTS), self.pick(EN)),
            1 => format!("{}:{}: {}", self.path(), self.rng.u32(1..900), self.pick(IDENTS)),
            2 => format!("error[E0{}]: {} {} in {}", self.rng.u32(100..800), self.pick(EN), self.pick(EN), self.path()),
            _ => format!(
                "test {}::{} ... {}",
                self.pick(FILES),
                self.pick(EN),
                if self.rng.bool() { "ok" } else { "FAILED" }
            ),
        }
    }

    /// Text of roughly `bytes` bytes in one of the corpus's registers.
    fn text(&mut self, bytes: usize) -> String {
        let mut out = String::with_capacity(bytes + 64);
        let register = self.rng.u8(0..10);
        while out.len() < bytes {
            let words = self.rng.usize(3..16);
            let piece = match register {
                0..=3 => self.english(words),
                4..=5 => self.chinese(words),
                6..=8 => self.code_line(),
                _ => format!("{} {}", self.chinese(2), self.english(5)),
            };
            out.push_str(&piece);
            out.push(if register >= 6 { '\n' } else { ' ' });
        }
        out
    }

    /// Lengths from tens of bytes to tens of kilobytes, most of them short.
    fn length(&mut self) -> usize {
        match self.rng.u8(0..100) {
            0..=59 => self.rng.usize(30..300),
            60..=89 => self.rng.usize(300..3_000),
            90..=98 => self.rng.usize(3_000..12_000),
            _ => self.rng.usize(12_000..40_000),
        }
    }

    /// Writes `observations` observations in sessions of about 50, as the
    /// export format, and returns the raw text bytes written.
    pub fn write_export(&mut self, observations: usize, out: &mut dyn Write) -> std::io::Result<u64> {
        let mut raw = 0u64;
        let start = 1_764_000_000_000i64;
        let mut ts = start;
        let mut id = 0i64;
        let mut session = 0;
        while (id as usize) < observations {
            session += 1;
            let session_id = format!("00000000-0000-4000-8000-{session:012}");
            let project = format!("/home/dev/src/project-{}", self.rng.u8(0..20));
            let record = json!({"type": "session", "session": {
                "id": session_id, "project": project, "started_at": ts, "ended_at": ts + 3_600_000,
                "meta": {"client": "claude-code"}, "observations": 0}});
            writeln!(out, "{record}")?;
            let in_session = self.rng.usize(20..80);
            for _ in 0..in_session {
                if id as usize >= observations {
                    break;
                }
                id += 1;
                ts += self.rng.i64(1_000..60_000);
                let (kind, tool) = match self.rng.u8(0..100) {
                    0..=9 => ("user", None),
                    10..=59 => ("tool", Some(self.pick(TOOLS))),
                    60..=84 => ("note", Some(self.pick(TOOLS))),
                    85..=94 => ("response", None),
                    _ => ("error", Some("Bash")),
                };
                let length = self.length().min(self.max_length);
                let content = self.text(length);
                raw += content.len() as u64;
                let record = json!({"type": "observation", "id": id, "session_id": session_id, "ts": ts,
                    "kind": kind, "tool": tool, "content": content, "private": false, "tags": []});
                writeln!(out, "{record}")?;
            }
        }
        Ok(raw)
    }
}
