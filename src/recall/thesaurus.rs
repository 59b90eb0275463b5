//! Words that mean the same in a coding session, across English and
//! Chinese: a question says "crash" where the memory says "panic", or
//! "超时" where it says "timeout". Each group's members find each other, at
//! `query::SYNONYM_WEIGHT`.
//!
//! Groups are kept tight: a member that also means something else in code
//! (`set`, `run`) brings back rows that merely contain it.

use std::collections::HashMap;
use std::sync::OnceLock;

const GROUPS: &[&[&str]] = &[
    &["crash", "panic", "segfault", "abort", "崩溃", "闪退"],
    &["fix", "repair", "resolve", "solve", "patch", "修复", "解决", "修正"],
    &["bug", "defect", "issue", "缺陷"],
    &["unsound", "soundness", "undefined behavior", "use-after-free", "memory safety", "未定义行为"],
    &["false positive", "spurious", "bogus", "误报"],
    &["null pointer", "nullptr", "dereference", "空指针"],
    &["unicode", "multibyte", "non-ascii", "utf-8", "utf8"],
    &["error", "failure", "fail", "错误", "报错", "出错", "失败", "异常"],
    &["exception", "throw", "异常"],
    &["missing", "absent", "nonexistent", "not found", "缺失", "缺少", "找不到", "不存在"],
    &["empty", "blank", "空"],
    &["delete", "remove", "erase", "drop", "删除", "移除"],
    &["add", "insert", "append", "添加", "新增", "增加"],
    &["create", "generate", "创建", "生成", "新建"],
    &["update", "upgrade", "bump", "更新", "升级"],
    &["rename", "重命名"],
    &["config", "configuration", "configure", "settings", "配置", "设置"],
    &["option", "flag", "选项", "参数"],
    &["argument", "parameter", "param", "参数"],
    &["slow", "latency", "sluggish", "performance", "慢", "性能", "卡顿"],
    &["fast", "speed", "quick", "faster", "快", "速度"],
    &["timeout", "timed out", "time limit", "超时", "超过时间"],
    &["hang", "stuck", "freeze", "deadlock", "卡住", "卡死", "死锁"],
    &["memory", "ram", "内存"],
    &["leak", "泄漏", "泄露"],
    &["cache", "caching", "缓存"],
    &["database", "db", "sqlite", "数据库"],
    &["table", "数据表"],
    &["query", "查询"],
    &["index", "索引"],
    &["search", "find", "lookup", "搜索", "查找"],
    &["test", "测试", "单测"],
    &["build", "compile", "compilation", "构建", "编译"],
    &["install", "setup", "安装"],
    &["deploy", "release", "publish", "部署", "发布"],
    &["version", "版本"],
    &["dependency", "dependencies", "crate", "package", "依赖"],
    &["import", "load", "ingest", "导入", "加载"],
    &["export", "dump", "导出"],
    &["file", "文件"],
    &["directory", "folder", "dir", "目录", "文件夹"],
    &["path", "路径"],
    &["login", "signin", "sign in", "log in", "authenticate", "登录", "登陆"],
    &["logout", "sign out", "登出", "退出登录"],
    &["password", "passwd", "密码"],
    &["user", "account", "用户", "账号", "账户"],
    &["permission", "access", "privilege", "权限"],
    &["auth", "authentication", "authorization", "认证", "鉴权"],
    &["token", "令牌"],
    &["encrypt", "encryption", "cipher", "加密"],
    &["decrypt", "解密"],
    &["network", "网络"],
    &["connection", "connect", "连接"],
    &["request", "请求"],
    &["response", "reply", "响应", "回复"],
    &["server", "服务器", "服务端"],
    &["client", "客户端"],
    &["proxy", "代理"],
    &["port", "端口"],
    &["address", "地址"],
    &["download", "fetch", "下载"],
    &["upload", "上传"],
    &["start", "launch", "boot", "startup", "启动"],
    &["stop", "shutdown", "halt", "停止", "关闭"],
    &["restart", "reboot", "重启"],
    &["retry", "重试"],
    &["log", "logging", "日志"],
    &["warning", "warn", "警告"],
    &["debug", "调试"],
    &["thread", "线程"],
    &["process", "进程"],
    &["async", "asynchronous", "异步"],
    &["sync", "synchronize", "同步"],
    &["concurrency", "concurrent", "parallel", "并发", "并行"],
    &["lock", "mutex", "锁"],
    &["queue", "队列"],
    &["message", "消息"],
    &["event", "事件"],
    &["callback", "hook", "回调", "钩子"],
    &["plugin", "extension", "addon", "插件", "扩展"],
    &["parse", "parser", "parsing", "解析"],
    &["serialize", "serialization", "encode", "序列化"],
    &["deserialize", "decode", "反序列化"],
    &["format", "格式"],
    &["encoding", "charset", "编码"],
    &["string", "str", "字符串"],
    &["number", "integer", "数字", "整数"],
    &["array", "list", "vec", "数组", "列表"],
    &["map", "hashmap", "dictionary", "字典"],
    &["null", "nil", "none", "空值"],
    &["type", "类型"],
    &["function", "method", "fn", "函数", "方法"],
    &["variable", "var", "变量"],
    &["struct", "class", "结构体", "类"],
    &["interface", "trait", "接口"],
    &["module", "模块"],
    &["macro", "宏"],
    &["doc", "docs", "documentation", "文档"],
    &["comment", "注释"],
    &["example", "sample", "demo", "示例", "例子"],
    &["deprecate", "deprecated", "obsolete", "弃用", "废弃"],
    &["support", "compatible", "compatibility", "支持", "兼容"],
    &["limit", "cap", "maximum", "max", "限制", "上限"],
    &["size", "length", "大小", "长度"],
    &["overflow", "溢出"],
    &["batch", "bulk", "批量"],
    &["page", "pagination", "分页", "页面"],
    &["image", "picture", "图片"],
    &["font", "字体"],
    &["color", "colour", "颜色"],
    &["style", "样式"],
    &["button", "按钮"],
    &["window", "窗口"],
    &["screen", "屏幕"],
    &["mobile", "phone", "手机", "移动端"],
    &["browser", "浏览器"],
    &["component", "组件"],
    &["render", "rendering", "渲染"],
    &["animation", "动画"],
    &["input", "输入"],
    &["output", "输出"],
    &["date", "日期"],
    &["time", "时间"],
    &["timezone", "时区"],
    &["schedule", "cron", "定时"],
    &["random", "随机"],
    &["hash", "digest", "哈希", "散列"],
    &["compress", "compression", "zip", "压缩"],
    &["backup", "备份"],
    &["restore", "恢复"],
    &["rollback", "revert", "undo", "回滚", "撤销"],
    &["merge", "合并"],
    &["branch", "分支"],
    &["commit", "提交"],
    &["command", "cli", "命令"],
    &["terminal", "shell", "console", "终端", "控制台"],
    &["environment", "env", "环境"],
    &["default", "默认"],
    &["windows", "win32"],
    &["linux", "unix"],
    &["mac", "macos", "osx"],
    &["chinese", "中文"],
    &["english", "英文"],
    &["translation", "translate", "i18n", "翻译", "国际化"],
    &["character", "char", "字符"],
    &["word", "词"],
    &["segment", "segmentation", "tokenize", "tokenizer", "分词"],
    &["dictionary", "词典"],
    &["slow down", "degrade", "regression", "变慢"],
    &["wrong", "incorrect", "invalid", "错误", "不正确", "无效"],
    &["duplicate", "repeated", "重复"],
    &["ignore", "skip", "忽略", "跳过"],
    &["disable", "turn off", "禁用", "关闭"],
    &["enable", "turn on", "启用", "开启"],
    &["initialize", "init", "初始化"],
    &["uninstall", "卸载"],
    &["route", "router", "routing", "路由"],
    &["template", "模板"],
    &["validate", "validation", "verify", "check", "校验", "验证"],
    &["statistics", "stats", "统计"],
    &["data", "数据"],
];

/// The other members of every group that holds one of `forms` (a term as
/// asked, its stem, its needle), as written in the groups.
pub fn synonyms(forms: &[&str]) -> Vec<&'static str> {
    // Keyed by the members as written: a hook builds this in microseconds,
    // where stemming every member first cost it half a millisecond.
    static INDEX: OnceLock<HashMap<&'static str, Vec<usize>>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut index: HashMap<&'static str, Vec<usize>> = HashMap::new();
        for (group, members) in GROUPS.iter().enumerate() {
            for member in members.iter() {
                index.entry(member).or_default().push(group);
            }
        }
        index
    });
    let mut found: Vec<&'static str> = Vec::new();
    let groups = forms.iter().filter_map(|form| index.get(form)).flatten();
    for &group in groups {
        for &member in GROUPS[group] {
            if !forms.contains(&member) && !found.contains(&member) {
                found.push(member);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_find_each_other_across_languages() {
        assert!(synonyms(&["crash"]).contains(&"panic"));
        assert!(synonyms(&["崩溃"]).contains(&"crash"));
        assert!(synonyms(&["超时"]).contains(&"timeout"));
        assert!(synonyms(&["timeouts", "timeout"]).contains(&"超时"));
        assert!(!synonyms(&["crash"]).contains(&"crash"));
        assert!(synonyms(&["no-such-word"]).is_empty());
    }
}
